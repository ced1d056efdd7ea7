/**
 * The escalation table: raw tool-call item → sandbox request (escalation.ts), approval request →
 * what the bridge is told (server-requests.ts), and the bridge's engine declining it. Payloads as
 * codex 0.169 sent them (raw items under experimentalRawEvents, trimmed of metadata).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { evaluate } from "../../../src/approval/engine.ts";
import { type CallSandbox, callSandbox } from "../../../src/provider/codex/escalation.ts";
import { mapNotification } from "../../../src/provider/codex/event-map.ts";
import { planServerRequest } from "../../../src/provider/codex/server-requests.ts";
import type { ApprovalRequest } from "../../../src/provider/types.ts";
import { fakeAnalyzer } from "../../approval/support/fake-analyzer.ts";
import { storeWith } from "../../approval/support/store.ts";
import { functionCallItem } from "../../support/tool-call-item.ts";

const functionCall = functionCallItem;

const approvalParams = (over: Record<string, unknown> = {}) => ({
  kind: "command",
  threadId: "t",
  turnId: "u",
  itemId: "call_1",
  startedAtMs: 1,
  environmentId: "local",
  command: "/bin/bash -lc 'touch esc.marker'",
  cwd: "/wt",
  commandActions: [{ type: "unknown", command: "touch esc.marker" }],
  ...over,
});

describe("callSandbox", () => {
  const table: Array<[string, unknown, string | undefined]> = [
    ["plain exec_command", functionCall({ cmd: "ls" }), undefined],
    ["use_default", functionCall({ cmd: "ls", sandbox_permissions: "use_default" }), undefined],
    [
      "require_escalated",
      functionCall({ cmd: "ls", sandbox_permissions: "require_escalated", justification: "x" }),
      'sandbox_permissions: "require_escalated"',
    ],
    [
      "any other value (a newer codex's bypass_sandbox)",
      functionCall({ cmd: "ls", sandbox_permissions: "bypass_sandbox" }),
      'sandbox_permissions: "bypass_sandbox"',
    ],
    [
      "additional_permissions alone",
      functionCall({ cmd: "ls", additional_permissions: { network: true } }),
      'additional_permissions: {"network":true}',
    ],
    [
      "arguments codex did not show",
      { type: "function_call", call_id: "call_1", encrypted_function_args: "…" },
      "arguments codex did not show (encrypted or absent)",
    ],
  ];
  for (const [name, item, escalation] of table) {
    test(name, () => {
      const parsed = mapNotification("rawResponseItem/completed", {
        threadId: "t",
        turnId: "u",
        item,
      });
      expect(parsed.rawItem).toBe(true);
      expect(parsed.toolCall).toEqual({ callId: "call_1", ...(escalation && { escalation }) });
    });
  }

  test("items that are not calls, and calls of other kinds", () => {
    expect(callSandbox({ type: "message" })).toBeUndefined();
    expect(callSandbox({ type: "function_call_output", call_id: "c" })).toBeUndefined();
    expect(callSandbox({ type: "custom_tool_call", call_id: "c" })).toEqual({ callId: "c" });
    expect(callSandbox({ type: "function_call", call_id: "c", arguments: "{not json" }))
      .toEqual({ callId: "c" });
  });
});

describe("a command approval tells the bridge what it asks beyond the sandbox", () => {
  const plan = (params: unknown, toolCalls?: Map<string, CallSandbox>) => {
    const planned = planServerRequest("item/commandExecution/requestApproval", params, {
      worktree: "/wt",
      fileChanges: new Map(),
      ...(toolCalls && { toolCalls }),
    });
    if (planned.kind !== "approval") throw new Error("expected an approval");
    return planned.request as ApprovalRequest & { escalation?: string };
  };
  const escalated = new Map([["call_1", {
    callId: "call_1",
    escalation: 'sandbox_permissions: "require_escalated"',
  }]]);

  test("the call's raw item asked for it", () => {
    expect(plan(approvalParams({ reason: "x" }), escalated).escalation)
      .toBe('sandbox_permissions: "require_escalated"');
  });

  test("a call seen without one: none", () => {
    expect(plan(approvalParams(), new Map([["call_1", { callId: "call_1" }]])).escalation)
      .toBeUndefined();
  });

  test("raw items flow but this call was not among them: unknown, so declined", () => {
    expect(plan(approvalParams(), new Map()).escalation).toContain("did not show");
  });

  test("no raw items for the thread (resumed elsewhere): nothing to go on", () => {
    expect(plan(approvalParams()).escalation).toBeUndefined();
  });

  test("additionalPermissions in the request itself", () => {
    expect(
      plan(approvalParams({ additionalPermissions: { network: { enabled: true } } }))
        .escalation,
    ).toBe('additionalPermissions: {"network":{"enabled":true}}');
  });

  test("typing into a running process is never an escalation", () => {
    expect(plan(approvalParams({ kind: "writeStdin" }), new Map()).escalation).toBeUndefined();
  });
});

describe("the engine", () => {
  const env = storeWith({ open: "version: 1\nname: open\ndefault: allow\n" });
  afterAll(() => env[Symbol.dispose]());
  const facts = { worktree: "/wt", permissionMode: "default" as const };
  const request = (escalation?: string): ApprovalRequest => ({
    kind: "command",
    command: "ls",
    cwd: "/wt",
    ...(escalation && { escalation }),
  });

  test("declines an escalation under a policy that allows everything", () => {
    expect(evaluate(env.store.get("open"), request("sandbox_permissions: x"), facts, fakeAnalyzer))
      .toMatchObject({ decision: "deny", ruleId: "builtin.sandbox-escalation", source: "builtin" });
    expect(evaluate(env.store.get("open"), request(), facts, fakeAnalyzer))
      .toMatchObject({ decision: "allow" });
  });
});

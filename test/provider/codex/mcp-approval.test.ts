/**
 * MCP tool approvals against the real codex and the MCP fixture (issue 10, finding 12): the tool
 * is taken from the `mcpToolCall` item codex announces in `item/started`, not from the untyped
 * `_meta` of the approval request, which codex 0.166 sends without a tool name.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import type { CodexHandle } from "../../../src/provider/codex/handle.ts";
import { Spec } from "../../../src/provider/spec.ts";
import type { ApprovalRequest, Approver } from "../../../src/provider/types.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../../support/codex-harness.ts";
import {
  EventRecorder,
  startTestProvider,
  type TestProvider,
} from "../../support/provider-fixture.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
let codex: TestProvider;
const requests: ApprovalRequest[] = [];

/** A fleet policy's shape: the `echo` server is allowed as a whole, its `echo_marker` denied. */
const perToolPolicy: Approver = {
  decide: (request) => {
    requests.push(request);
    if (request.kind === "mcpTool" && request.tool === "echo_marker") {
      return Promise.resolve({
        decision: "deny",
        source: "policy:test",
        ruleId: "no-echo-marker",
        reason: "echo_marker is denied",
      });
    }
    return Promise.resolve({ decision: "allow", source: "policy:test", reason: "allowed" });
  },
};

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      { marker: "HELLO", rounds: [[step.message("hi")]] },
      {
        marker: "CALL",
        rounds: [
          // codex 0.169 offers a server's tools in the namespace `mcp__<server>`.
          [step.functionCall("echo_marker", { text: "ran-marker" }, undefined, {
            namespace: "mcp__echo",
          })],
          [step.message("called")],
        ],
      },
    ],
  });
  worktree = await makeTempWorktree();
  codex = await startTestProvider({ model, approver: perToolPolicy });
});

afterAll(async () => {
  await codex?.close();
  await worktree?.remove();
  await model?.close();
});

const spec = (prompt: string) =>
  Spec.parse({
    prompt,
    cwd: worktree.path,
    mcpServers: {
      echo: {
        command: process.execPath,
        args: [path.join(REPO_ROOT, "test/fixtures/mcp-echo-server.mjs")],
        env: {},
      },
    },
  });

/** Runs one `CALL` turn; `rewrite` changes the approval request's params as codex sends them. */
async function callTool(rewrite?: (params: Record<string, unknown>) => unknown) {
  requests.length = 0;
  const handle = await codex.provider.spawn(spec("HELLO first")) as CodexHandle;
  const events = new EventRecorder(handle);
  await events.waitFor((e) => e.type === "result");
  const seen: unknown[] = [];
  const original = handle.onServerRequest.bind(handle);
  handle.onServerRequest = (method, params) => {
    seen.push(params);
    const p = params as Record<string, unknown>;
    return original(
      method,
      rewrite && method === "mcpServer/elicitation/request" ? rewrite(p) : params,
    );
  };
  const receipt = await handle.send("CALL the tool");
  await events.waitFor((e) => e.type === "result" && e.turnId === receipt.turnId, 30_000);
  await handle.stop();
  const turn = events.events.filter((e) => e.turnId === receipt.turnId);
  return {
    seen,
    approval: turn.find((e) => e.type === "approval"),
    result: turn.find((e) => e.type === "tool.result"),
    started: turn.find((e) => e.type === "tool.use"),
  };
}

describe("MCP tool approvals with the real codex", () => {
  test("codex as it is: the item names the tool; the per-tool deny holds, the tool never runs", async () => {
    const { seen, approval, result, started } = await callTool();
    // What codex sends: the approval kind in `_meta`, no item id; 0.169 also names the tool there
    // (`tool_name`), 0.166 does not (the next test plays that case against any codex).
    expect(seen[0]).toMatchObject({
      serverName: "echo",
      _meta: { codex_approval_kind: "mcp_tool_call" },
    });
    const meta = (seen[0] as { _meta: Record<string, unknown> })._meta;
    if ("tool_name" in meta) expect(meta.tool_name).toBe("echo_marker");
    expect(seen[0]).not.toHaveProperty("itemId");
    expect(started).toMatchObject({ name: "mcp:echo/echo_marker" });
    expect(requests).toEqual([
      { kind: "mcpTool", server: "echo", tool: "echo_marker", arguments: { text: "ran-marker" } },
    ]);
    expect(approval).toMatchObject({
      decision: "deny",
      tool: { server: "echo", name: "echo_marker" },
    });
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result)).not.toContain("echo: ran-marker");
  });

  test("as codex 0.166 sends it (no tool name): still judged as echo_marker and denied", async () => {
    const { approval, result } = await callTool((params) => {
      const { tool_name: _, ...meta } = params._meta as Record<string, unknown>;
      return { ...params, _meta: meta };
    });
    expect(requests).toEqual([expect.objectContaining({ tool: "echo_marker" })]);
    expect(approval).toMatchObject({ decision: "deny", ruleId: "no-echo-marker" });
    expect(JSON.stringify(result)).not.toContain("echo: ran-marker");
  });

  test("a tool name in _meta other than the running call's is not believed: the item's is judged", async () => {
    const { approval, result } = await callTool((params) => ({
      ...params,
      _meta: { ...(params._meta as object), tool_name: "harmless" },
    }));
    expect(requests).toEqual([expect.objectContaining({ tool: "echo_marker" })]);
    expect(approval).toMatchObject({ decision: "deny", ruleId: "no-echo-marker" });
    expect(JSON.stringify(result)).not.toContain("echo: ran-marker");
  });

  test("positive control: the same call, allowed, really runs the MCP server's tool", async () => {
    const allowAll: Approver = {
      decide: () => Promise.resolve({ decision: "allow", source: "test", reason: "ok" }),
    };
    await using allowing = await startTestProvider({ model, approver: allowAll });
    const handle = await allowing.provider.spawn(spec("CALL the tool"));
    const events = new EventRecorder(handle);
    await events.waitFor((e) => e.type === "result", 30_000);
    await handle.stop();
    expect(events.events.find((e) => e.type === "approval")).toMatchObject({
      decision: "allow",
      tool: { server: "echo", name: "echo_marker" },
    });
    expect(JSON.stringify(events.events.find((e) => e.type === "tool.result")))
      .toContain("echo: ran-marker");
  });
});

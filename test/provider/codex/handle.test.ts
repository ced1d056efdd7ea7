import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ConnectionClosed, NoActiveTurn, RpcError } from "../../../src/errors.ts";
import { isTerminal, type SessionEvent } from "../../../src/provider/events.ts";
import { unhandledNotifications } from "../../../src/provider/codex/event-map.ts";
import { CodexHandle, type ThreadRpc } from "../../../src/provider/codex/handle.ts";
import { DROPPED_MESSAGE } from "../../../src/provider/codex/messages.ts";
import { RolloutCalls } from "../../../src/provider/codex/rollout-calls.ts";
import { Spec, type SpecInput } from "../../../src/provider/spec.ts";
import { recordingApprover } from "../../support/provider-fixture.ts";
import type { ApprovalRequest, Approver } from "../../../src/provider/types.ts";

/** A scriptable stand-in for the connection: records requests, answers turn/start with ids. */
class FakeRpc implements ThreadRpc {
  calls: Array<{ method: string; params: unknown }> = [];
  turnCounter = 0;
  steerError: Error | undefined;
  /** When set, turn/start fails with it (as the connection does when codex dies). */
  startError: Error | undefined;
  interruptError: Error | undefined;
  /** When set, the next turn/start waits until this is called with the turn's id. */
  holdNextTurnStart: ((answer: (id: string) => void) => void) | undefined;
  request<T>(method: string, params: unknown): Promise<T> {
    const hold = this.holdNextTurnStart;
    if (method === "turn/start" && hold) {
      this.holdNextTurnStart = undefined;
      this.calls.push({ method, params });
      return new Promise<T>((resolve) => hold((id) => resolve({ turn: { id } } as T)));
    }
    if (method === "turn/start" && this.startError) {
      this.calls.push({ method, params });
      return Promise.reject(this.startError);
    }
    if (method === "turn/interrupt" && this.interruptError) {
      this.calls.push({ method, params });
      return Promise.reject(this.interruptError);
    }
    this.calls.push({ method, params });
    if (method === "turn/start") {
      return Promise.resolve({ turn: { id: `turn-${++this.turnCounter}` } } as T);
    }
    if (method === "turn/steer") {
      return this.steerError ? Promise.reject(this.steerError) : Promise.resolve({} as T);
    }
    return Promise.resolve({} as T);
  }
  methods(): string[] {
    return this.calls.map((c) => c.method);
  }
}

const allowAll: Approver = {
  decide: () => Promise.resolve({ decision: "allow", source: "default", reason: "test" }),
};

/** Timers fired by hand, so deadline tests do not wait on the wall clock. */
const timers: Array<() => void> = [];

function makeHandle(spec: Partial<SpecInput> = {}, approver = allowAll, rollout?: RolloutCalls) {
  const rpc = new FakeRpc();
  const handle = new CodexHandle({
    sessionId: "s1",
    threadId: "th1",
    spec: Spec.parse({ prompt: "p", cwd: tmpdir(), ...spec }),
    rpc,
    approver,
    ...(rollout && { rollout }),
    setTimer: (fn) => {
      timers.push(fn);
      return { cancel: () => timers.splice(timers.indexOf(fn) >>> 0, 1) };
    },
  });
  return { rpc, handle };
}

async function drain(handle: CodexHandle): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for await (const event of handle.events) events.push(event);
  return events;
}

const usageBreakdown = (inputTokens: number) => ({
  totalTokens: inputTokens,
  inputTokens,
  cachedInputTokens: 0,
  cacheWriteInputTokens: 0,
  outputTokens: 0,
  reasoningOutputTokens: 0,
});

const completed = (id: string, status = "completed") => ({
  threadId: "th1",
  turn: { id, status, items: [], error: status === "failed" ? { message: "boom" } : null },
});

describe("CodexHandle escalations (raw items, escalation.ts)", () => {
  const recording = recordingApprover;
  const raw = (item: Record<string, unknown>) =>
    ["rawResponseItem/completed", { threadId: "th1", turnId: "t", item }] as const;
  const approve = (handle: CodexHandle, itemId: string) =>
    handle.onServerRequest("item/commandExecution/requestApproval", {
      kind: "command",
      threadId: "th1",
      turnId: "t",
      itemId,
      command: "touch x",
      cwd: "/w",
    });

  test("a call's escalation reaches the approver; an unseen call while raw items flow is one", async () => {
    const { asked, approver } = recording();
    const { handle } = makeHandle({}, approver);
    handle.onNotification(...raw({
      type: "function_call",
      call_id: "c1",
      arguments: JSON.stringify({ cmd: "touch x", sandbox_permissions: "require_escalated" }),
    }));
    handle.onNotification(...raw({ type: "function_call", call_id: "c2", arguments: "{}" }));
    await approve(handle, "c1");
    await approve(handle, "c2");
    await approve(handle, "c3");
    expect(asked.map((r) => "escalation" in r ? r.escalation : undefined)).toEqual([
      'sandbox_permissions: "require_escalated"',
      undefined,
      "a tool call codex did not show, so its sandbox request is unknown",
    ]);
  });

  test("a call id the model reuses keeps the escalation any of its calls asked for", async () => {
    // Two calls in one response, both named c1 by the model: the escalated one first. Its
    // approval comes after both raw items; a later plain call must not hide the escalation.
    const { asked, approver } = recording();
    const { handle } = makeHandle({}, approver);
    handle.onNotification(...raw({
      type: "function_call",
      call_id: "c1",
      arguments: JSON.stringify({ cmd: "cat x", sandbox_permissions: "require_escalated" }),
    }));
    handle.onNotification(...raw({ type: "function_call", call_id: "c1", arguments: "{}" }));
    await approve(handle, "c1");
    expect(asked[0]).toHaveProperty("escalation", 'sandbox_permissions: "require_escalated"');
  });

  describe("a resumed thread (no raw items): its calls as codex's rollout records them", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "codexd-handle-rollout-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    let files = 0;
    /** An empty rollout and a reader of it that does not wait for calls it lacks. */
    async function emptyRollout() {
      const file = path.join(dir, `rollout-${++files}.jsonl`);
      writeFileSync(file, "");
      const append = (callId: string, args: Record<string, unknown>) =>
        appendFileSync(
          file,
          JSON.stringify({
            type: "response_item",
            payload: { type: "function_call", call_id: callId, arguments: JSON.stringify(args) },
          }) + "\n",
        );
      return { append, rollout: await RolloutCalls.open(file, { waitMs: 0 }) };
    }
    const escalations = (asked: ApprovalRequest[]) =>
      asked.map((r) => "escalation" in r ? r.escalation : undefined);

    test("after a move to another child, calls are judged on that child's rollout", async () => {
      const { asked, approver } = recording();
      const { rpc, handle } = makeHandle({}, approver);
      handle.onNotification(...raw({ type: "function_call", call_id: "c1", arguments: "{}" }));
      const { append, rollout } = await emptyRollout();
      const moved = await handle.moveTo(() =>
        Promise.resolve({ rpc, threadId: "th1", onClose: () => {}, rollout })
      );
      expect(moved).toBe(true);
      append("c2", { cmd: "touch x", sandbox_permissions: "require_escalated" });
      append("c3", { cmd: "touch x" });
      await approve(handle, "c1"); // shown as a raw item on the old child, not written here
      await approve(handle, "c2");
      await approve(handle, "c3");
      expect(escalations(asked)).toEqual([
        "tool call c1 not found in codex's rollout within 0 ms",
        'sandbox_permissions: "require_escalated"',
        undefined,
      ]);
    });

    test("resumed after a daemon restart: the same; a callback within the call shares it", async () => {
      const { asked, approver } = recording();
      const { append, rollout } = await emptyRollout();
      const { handle } = makeHandle({}, approver, rollout);
      append("c1", { cmd: "touch x", additional_permissions: { network: true } });
      const request = { threadId: "th1", turnId: "t", itemId: "c1", command: "ls" };
      await approve(handle, "c1");
      // A subcommand's approval within the call (its own approvalId), then a second request
      // for the call with none: that one needs a second line of c1, and there is none.
      await handle.onServerRequest("item/commandExecution/requestApproval", {
        ...request,
        approvalId: "cb-1",
      });
      await approve(handle, "c1");
      // Typing into the call's terminal is not looked up.
      await handle.onServerRequest("item/commandExecution/requestApproval", {
        ...request,
        kind: "writeStdin",
        itemId: "c9",
      });
      expect(escalations(asked)).toEqual([
        'additional_permissions: {"network":true}',
        'additional_permissions: {"network":true}',
        "tool call c1 not found in codex's rollout within 0 ms",
        undefined,
      ]);
    });

    test("raw items, when codex shows them after all, are what calls are judged on", async () => {
      const { asked, approver } = recording();
      const { rollout } = await emptyRollout();
      const { handle } = makeHandle({}, approver, rollout);
      handle.onNotification(...raw({ type: "function_call", call_id: "c1", arguments: "{}" }));
      await approve(handle, "c1");
      expect(escalations(asked)).toEqual([undefined]);
    });
  });
});

describe("CodexHandle turns", () => {
  test("a turn whose start the child's death cut off ends app_server_crashed, once", async () => {
    const { rpc, handle } = makeHandle();
    rpc.startError = new ConnectionClosed("codex closed its output (end of stream)");
    const events = drain(handle);
    await expect(handle.startTurn("hello")).rejects.toThrow("end of stream");
    handle.crashed("SIGKILL"); // the provider sees the exit after the connection closed
    expect((await events).filter((e) => e.type === "error").map((e) => e.code)).toEqual([
      "app_server_crashed",
    ]);
  });

  test("a turn codex refused to start ends start_failed", async () => {
    const { rpc, handle } = makeHandle();
    rpc.startError = new RpcError("turn/start", -32602, "invalid params");
    await expect(handle.startTurn("hello")).rejects.toThrow("invalid params");
    handle.crashed("SIGKILL");
    const events = await drain(handle);
    expect(events.filter((e) => e.type === "error").map((e) => e.code)).toEqual([
      "start_failed",
      "app_server_crashed",
    ]);
  });

  test("interrupting a turn codex already ended succeeds; other codex refusals still throw", async () => {
    const { rpc, handle } = makeHandle();
    await handle.startTurn("hello");
    rpc.interruptError = new RpcError(
      "turn/interrupt",
      -32600,
      "codex refused turn/interrupt: no active turn to interrupt",
    );
    await handle.interrupt();
    expect(rpc.methods()).toContain("turn/interrupt");
    rpc.interruptError = new RpcError("turn/interrupt", -32603, "internal error");
    await expect(handle.interrupt()).rejects.toThrow("internal error");
  });

  test("a completed turn ends with one result carrying the last message and the usage", async () => {
    const { handle } = makeHandle();
    const receipt = await handle.startTurn("hello");
    expect(receipt).toEqual({ turnId: "turn-1", queued: false });
    handle.onNotification("turn/started", completed("turn-1", "inProgress"));
    handle.onNotification("item/completed", {
      threadId: "th1",
      turnId: "turn-1",
      item: { type: "agentMessage", id: "m1", text: "done!" },
    });
    const breakdown = {
      totalTokens: 15,
      inputTokens: 10,
      cachedInputTokens: 2,
      cacheWriteInputTokens: 0,
      outputTokens: 5,
      reasoningOutputTokens: 1,
    };
    handle.onNotification("thread/tokenUsage/updated", {
      threadId: "th1",
      turnId: "turn-1",
      tokenUsage: { total: breakdown, last: breakdown },
    });
    handle.onNotification("turn/completed", completed("turn-1"));
    await handle.stop();
    const events = await drain(handle);
    const result = events.find((e) => e.type === "result");
    expect(result).toMatchObject({
      type: "result",
      turnId: "turn-1",
      text: "done!",
      usage: { inputTokens: 10, cachedInputTokens: 2, outputTokens: 5, reasoningTokens: 1 },
    });
    expect(events.filter(isTerminal)).toHaveLength(1);
  });

  test("a usage report codex repeats (same total: only rate limits changed) is journaled once", async () => {
    const { handle } = makeHandle();
    await handle.startTurn("hello");
    const report = (total: number, last: number) => ({
      threadId: "th1",
      turnId: "turn-1",
      tokenUsage: {
        total: usageBreakdown(total),
        last: usageBreakdown(last),
      },
    });
    handle.onNotification("thread/tokenUsage/updated", report(100, 100));
    handle.onNotification("thread/tokenUsage/updated", report(100, 100)); // a repeat
    handle.onNotification("thread/tokenUsage/updated", report(160, 60));
    handle.onNotification("turn/completed", completed("turn-1"));
    await handle.stop();
    const usage = (await drain(handle)).filter((e) => e.type === "usage");
    expect(usage.map((e) => e.type === "usage" && e.inputTokens)).toEqual([100, 60]);
  });

  test("stop with a code and detail: the running turn's one terminal event carries them", async () => {
    const { handle, rpc } = makeHandle();
    await handle.startTurn("hello");
    expect(handle.busy).toBe(true);
    const budget = {
      scope: "session" as const,
      fleet: "default",
      budget: 10,
      spend: 12,
      reopensAt: null,
    };
    await handle.stop("budget_exceeded", { message: "over budget", budget });
    await handle.stop(); // idempotent: the first stop's code stands
    expect(handle.busy).toBe(false);
    const events = await drain(handle);
    expect(events.filter(isTerminal)).toEqual([
      expect.objectContaining({
        type: "error",
        code: "budget_exceeded",
        message: "over budget",
        budget,
        turnId: "turn-1",
      }),
    ]);
    expect(events.at(-1)).toMatchObject({ subtype: "session_stopped", reason: "budget_exceeded" });
    expect(rpc.methods()).toContain("turn/interrupt");
  });

  test("send while a turn runs is queued and starts when it completes", async () => {
    const { handle, rpc } = makeHandle();
    await handle.startTurn("one");
    expect(await handle.send("two")).toEqual({ queued: true });
    expect(rpc.methods().filter((m) => m === "turn/start")).toHaveLength(1);
    handle.onNotification("turn/completed", completed("turn-1"));
    await Promise.resolve();
    const starts = rpc.calls.filter((c) => c.method === "turn/start");
    expect(starts).toHaveLength(2);
    expect(JSON.stringify(starts[1]?.params)).toContain('"two"');
  });

  test("a failed turn ends with error turn_failed and the codex message", async () => {
    const { handle } = makeHandle();
    await handle.startTurn("x");
    handle.onNotification("turn/completed", completed("turn-1", "failed"));
    await handle.stop();
    const terminal = (await drain(handle)).filter(isTerminal);
    expect(terminal).toEqual([
      expect.objectContaining({ type: "error", code: "turn_failed", message: "boom" }),
    ]);
  });

  test("inject steers the running turn with its real id", async () => {
    const { handle, rpc } = makeHandle();
    await handle.startTurn("x");
    expect(await handle.inject("also this")).toEqual({ deliveredAs: "steer", turnId: "turn-1" });
    expect(rpc.calls.at(-1)).toEqual({
      method: "turn/steer",
      params: {
        threadId: "th1",
        input: [{ type: "text", text: "also this", text_elements: [] }],
        expectedTurnId: "turn-1",
      },
    });
  });

  test("inject that codex refuses becomes the next turn", async () => {
    const { handle, rpc } = makeHandle();
    await handle.startTurn("x");
    rpc.steerError = new RpcError("turn/steer", -32600, "turn not steerable");
    expect(await handle.inject("later")).toEqual({ deliveredAs: "nextTurn" });
    expect(handle.queuedTurns).toBe(1);
  });

  test("inject with no turn running or queued fails with NoActiveTurn", async () => {
    const { handle } = makeHandle();
    await expect(handle.inject("x")).rejects.toBeInstanceOf(NoActiveTurn);
  });

  test("a turn that timed out before codex named it cannot lend its id to the next turn", async () => {
    const { handle, rpc } = makeHandle({ timeoutMs: 60_000 });
    let answerFirst!: (id: string) => void;
    rpc.holdNextTurnStart = (answer) => (answerFirst = answer);
    void handle.startTurn("first");
    await handle.send("second"); // queued behind the first
    timers.pop()!(); // the first turn's deadline, before codex answered turn/start
    await Promise.resolve();
    // codex now names the first turn (turn-late) and reports on it; the second is turn-1.
    handle.onNotification("turn/started", completed("turn-late", "inProgress"));
    answerFirst("turn-late");
    await Promise.resolve();
    expect(rpc.calls).toContainEqual({
      method: "turn/interrupt",
      params: { threadId: "th1", turnId: "turn-late" },
    });
    handle.onNotification("item/completed", {
      threadId: "th1",
      turnId: "turn-late",
      item: { type: "agentMessage", id: "m0", text: "late words" },
    });
    handle.onNotification("turn/started", completed("turn-1", "inProgress"));
    expect(handle.currentTurnId).toBe("turn-1");
    handle.onNotification("turn/completed", completed("turn-late", "interrupted"));
    handle.onNotification("turn/completed", completed("turn-1"));
    await handle.stop();
    const events = (await drain(handle)).filter((e) => e.type !== "system");
    expect(events.filter(isTerminal).map((e) => [e.type, e.turnId])).toEqual([
      ["error", undefined],
      ["result", "turn-1"],
    ]);
    expect(JSON.stringify(events)).not.toContain("late words");
  });

  test("a message of the thread too long to read ends the running turn instead of hanging it", async () => {
    const { handle, rpc } = makeHandle();
    handle.onNotification(DROPPED_MESSAGE, { threadId: "th1", message: "ignored: no turn runs" });
    await handle.startTurn("x");
    handle.onNotification(DROPPED_MESSAGE, {
      threadId: "th1",
      method: "item/completed",
      length: 20_000_000,
      message: "codex sent item/completed of 20000000 characters, over the 16777216 limit",
    });
    expect(rpc.calls).toContainEqual({
      method: "turn/interrupt",
      params: { threadId: "th1", turnId: "turn-1" },
    });
    handle.onNotification("turn/completed", completed("turn-1", "interrupted"));
    await handle.stop();
    const terminals = (await drain(handle)).filter(isTerminal);
    expect(terminals).toEqual([
      expect.objectContaining({
        type: "error",
        code: "turn_failed",
        turnId: "turn-1",
        message: "codex sent item/completed of 20000000 characters, over the 16777216 limit",
      }),
    ]);
  });

  test("a turn past its deadline ends with error timeout and is interrupted", async () => {
    const { handle, rpc } = makeHandle({ timeoutMs: 60_000 });
    await handle.startTurn("x");
    expect(rpc.methods()).not.toContain("turn/interrupt");
    timers.pop()!();
    await Promise.resolve();
    expect(rpc.methods()).toContain("turn/interrupt");
    handle.onNotification("turn/completed", completed("turn-1", "interrupted"));
    await handle.stop();
    const terminal = (await drain(handle)).filter(isTerminal);
    expect(terminal.map((e) => e.type === "error" && e.code)).toEqual(["timeout"]);
  });
});

describe("CodexHandle approvals", () => {
  test("a command approval is judged, recorded and answered in codex's shape", async () => {
    const deny: Approver = {
      decide: (request) =>
        Promise.resolve({
          decision: request.kind === "command" && request.command.includes("push")
            ? "deny"
            : "allow",
          ruleId: "no-push",
          source: "policy:default",
          reason: "no pushing",
        }),
    };
    const { handle } = makeHandle({}, deny);
    const reply = await handle.onServerRequest("item/commandExecution/requestApproval", {
      kind: "command",
      threadId: "th1",
      turnId: "t",
      itemId: "i",
      command: "git push --force",
      cwd: "/w",
    });
    expect(reply).toEqual({ decision: "decline" });
    await handle.stop();
    const events = await drain(handle);
    expect(events.find((e) => e.type === "approval")).toMatchObject({
      kind: "command",
      command: "git push --force",
      decision: "deny",
      ruleId: "no-push",
      source: "policy:default",
    });
    expect(events.find((e) => e.type === "system" && e.subtype === "approval_denied"))
      .toBeDefined();
  });

  test("a file change approval carries the paths remembered from item/started", async () => {
    let seen: unknown;
    const approver: Approver = {
      decide: (request) => {
        seen = request;
        return Promise.resolve({ decision: "allow", source: "default", reason: "ok" });
      },
    };
    const { handle } = makeHandle({}, approver);
    handle.onNotification("item/started", {
      threadId: "th1",
      turnId: "t",
      item: {
        type: "fileChange",
        id: "fc1",
        status: "inProgress",
        changes: [
          { path: "/w/a.txt", kind: { type: "add" }, diff: "" },
          { path: "/w/b.txt", kind: { type: "update", move_path: "/w/c.txt" }, diff: "" },
        ],
      },
    });
    const reply = await handle.onServerRequest("item/fileChange/requestApproval", {
      threadId: "th1",
      turnId: "t",
      itemId: "fc1",
    });
    expect(reply).toEqual({ decision: "accept" });
    expect(seen).toMatchObject({ kind: "fileChange", paths: ["/w/a.txt", "/w/b.txt", "/w/c.txt"] });
  });

  test.each([
    ["item/tool/requestUserInput", { answers: {} }],
    ["execCommandApproval", { decision: { denied: { rejection: expect.any(String) } } }],
    ["mcpServer/elicitation/request", { action: "decline", content: null, _meta: null }],
  ])("%s is refused in its own shape with a system event", async (method, shape) => {
    const { handle } = makeHandle();
    const reply = await handle.onServerRequest(method, {
      threadId: "th1",
      turnId: "t",
      serverName: "x",
      _meta: null,
    });
    expect(reply).toEqual(shape);
    await handle.stop();
    expect(
      (await drain(handle)).some((e) =>
        e.type === "system" && e.subtype === "unhandled_server_request"
      ),
    )
      .toBe(true);
  });

  test("a patch update adds its paths: the approval is judged on every path the item named", async () => {
    const requests: unknown[] = [];
    const approver: Approver = {
      decide: (request) => {
        requests.push(request);
        return Promise.resolve({ decision: "allow", source: "default", reason: "ok" });
      },
    };
    const { handle } = makeHandle({}, approver);
    const change = (path: string) => ({ path, kind: { type: "add" }, diff: "" });
    handle.onNotification("item/started", {
      threadId: "th1",
      turnId: "t",
      item: { type: "fileChange", id: "fc1", status: "inProgress", changes: [change("/w/a")] },
    });
    handle.onNotification("item/fileChange/patchUpdated", {
      threadId: "th1",
      turnId: "t",
      itemId: "fc1",
      changes: [change("/w/a"), change("/etc/passwd")],
    });
    await handle.onServerRequest("item/fileChange/requestApproval", {
      threadId: "th1",
      turnId: "t",
      itemId: "fc1",
    });
    expect(requests).toEqual([expect.objectContaining({ paths: ["/w/a", "/etc/passwd"] })]);
    await handle.stop();
    expect((await drain(handle)).find((e) => e.type === "system" && e.subtype === "patch_updated"))
      .toMatchObject({ itemId: "fc1", changes: [{ path: "/w/a" }, { path: "/etc/passwd" }] });
  });

  test("an unknown server request is answered -32601", async () => {
    const { handle } = makeHandle();
    const error = await handle.onServerRequest("made/up", {}).catch((e) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe(-32601);
  });
});

describe("CodexHandle MCP tool approvals", () => {
  /** A policy that allows the whole `echo` server but denies its `wipe` tool. */
  function perToolPolicy() {
    const requests: Array<{ kind: string; server?: string; tool?: string; arguments?: unknown }> =
      [];
    const approver: Approver = {
      decide: (request) => {
        requests.push(request as never);
        const denied = request.kind === "mcpTool" && request.tool === "wipe";
        return Promise.resolve(
          denied
            ? { decision: "deny", source: "policy:t", ruleId: "no-wipe", reason: "wipe is denied" }
            : { decision: "allow", source: "policy:t", reason: "server echo allowed" },
        );
      },
    };
    return { approver, requests };
  }
  const startCall = (handle: CodexHandle, id: string, tool: string, turnId = "t") =>
    handle.onNotification("item/started", {
      threadId: "th1",
      turnId,
      startedAtMs: 1,
      item: {
        type: "mcpToolCall",
        id,
        server: "echo",
        tool,
        status: "inProgress",
        arguments: { id },
      },
    });
  const endCall = (handle: CodexHandle, id: string, tool: string) =>
    handle.onNotification("item/completed", {
      threadId: "th1",
      turnId: "t",
      completedAtMs: 2,
      item: { type: "mcpToolCall", id, server: "echo", tool, status: "completed", arguments: {} },
    });
  // As codex 0.166 sends it: the approval kind, no tool name.
  const elicitation = (meta: unknown = { codex_approval_kind: "mcp_tool_call" }) => ({
    threadId: "th1",
    turnId: "t",
    serverName: "echo",
    mode: "form",
    message: "Allow the echo MCP server to run tool?",
    requestedSchema: { type: "object", properties: {} },
    _meta: meta,
  });

  test("the tool comes from the running mcpToolCall item: a per-tool deny matches", async () => {
    const { approver, requests } = perToolPolicy();
    const { handle } = makeHandle({}, approver);
    startCall(handle, "call_1", "wipe");
    const reply = await handle.onServerRequest("mcpServer/elicitation/request", elicitation());
    expect(reply).toEqual({ action: "decline", content: null, _meta: null });
    expect(requests).toEqual([
      { kind: "mcpTool", server: "echo", tool: "wipe", arguments: { id: "call_1" } },
    ]);
    endCall(handle, "call_1", "wipe");
    startCall(handle, "call_2", "echo_marker");
    expect(await handle.onServerRequest("mcpServer/elicitation/request", elicitation()))
      .toEqual({ action: "accept", content: null, _meta: null });
    await handle.stop();
    const approvals = (await drain(handle)).filter((e) => e.type === "approval");
    expect(approvals.map((e) => e.type === "approval" && [e.tool, e.decision])).toEqual([
      [{ server: "echo", name: "wipe" }, "deny"],
      [{ server: "echo", name: "echo_marker" }, "allow"],
    ]);
  });

  test("with no running call of that server the tool is unknown: declined without asking", async () => {
    const { approver, requests } = perToolPolicy();
    const { handle } = makeHandle({}, approver);
    startCall(handle, "call_1", "wipe");
    endCall(handle, "call_1", "wipe"); // completed: no longer the call being approved
    const reply = await handle.onServerRequest("mcpServer/elicitation/request", elicitation());
    expect(reply).toEqual({ action: "decline", content: null, _meta: null });
    expect(requests).toEqual([]); // the server-wide allow was never consulted
    await handle.stop();
    const events = await drain(handle);
    expect(events.find((e) => e.type === "approval")).toMatchObject({
      kind: "mcpTool",
      decision: "deny",
      source: "builtin",
      ruleId: "mcp-unknown-tool",
      tool: { server: "echo", name: "" },
    });
    expect(events.some((e) => e.type === "system" && e.subtype === "approval_denied")).toBe(true);
  });

  test("several running tools of the server: _meta's tool name picks one, never names its own", async () => {
    const { approver, requests } = perToolPolicy();
    const { handle } = makeHandle({}, approver);
    startCall(handle, "call_1", "echo_marker");
    startCall(handle, "call_2", "wipe");
    // No name: ambiguous, declined.
    expect(await handle.onServerRequest("mcpServer/elicitation/request", elicitation()))
      .toEqual({ action: "decline", content: null, _meta: null });
    expect(requests).toEqual([]);
    // A name among the running calls picks it (0.169 sends tool_name).
    const named = { codex_approval_kind: "mcp_tool_call", tool_name: "wipe" };
    await handle.onServerRequest("mcpServer/elicitation/request", elicitation(named));
    expect(requests).toEqual([expect.objectContaining({ tool: "wipe" })]);
    // A name no running call has is not believed.
    const forged = { codex_approval_kind: "mcp_tool_call", tool_name: "harmless" };
    expect(await handle.onServerRequest("mcpServer/elicitation/request", elicitation(forged)))
      .toEqual({ action: "decline", content: null, _meta: null });
    expect(requests).toHaveLength(1);
  });

  test("one running call: its tool is judged whatever _meta names", async () => {
    const { approver, requests } = perToolPolicy();
    const { handle } = makeHandle({}, approver);
    startCall(handle, "call_1", "wipe");
    const forged = { codex_approval_kind: "mcp_tool_call", tool_name: "echo_marker" };
    expect(await handle.onServerRequest("mcpServer/elicitation/request", elicitation(forged)))
      .toEqual({ action: "decline", content: null, _meta: null });
    expect(requests).toEqual([expect.objectContaining({ tool: "wipe" })]);
  });

  test("a call of another turn does not answer for this one; a turn's end forgets its calls", async () => {
    const { approver, requests } = perToolPolicy();
    const { handle } = makeHandle({}, approver);
    startCall(handle, "call_1", "echo_marker", "other-turn");
    expect(await handle.onServerRequest("mcpServer/elicitation/request", elicitation()))
      .toEqual({ action: "decline", content: null, _meta: null });
    const fresh = makeHandle({}, approver).handle;
    await fresh.startTurn("go");
    startCall(fresh, "call_2", "echo_marker", "turn-1");
    fresh.onNotification("turn/completed", completed("turn-1"));
    const params = { ...elicitation(), turnId: null };
    expect(await fresh.onServerRequest("mcpServer/elicitation/request", params))
      .toEqual({ action: "decline", content: null, _meta: null });
    expect(requests).toEqual([]);
  });

  test("an elicitation without _meta is no tool approval: refused in its own shape", async () => {
    const { approver, requests } = perToolPolicy();
    const { handle } = makeHandle({}, approver);
    startCall(handle, "call_1", "echo_marker");
    const { _meta: _, ...bare } = elicitation();
    expect(await handle.onServerRequest("mcpServer/elicitation/request", bare))
      .toEqual({ action: "decline", content: null, _meta: null });
    expect(requests).toEqual([]);
  });
});

describe("CodexHandle security notifications", () => {
  test("typed terminal input after the turn ended is still recorded; unknown methods are tallied", async () => {
    unhandledNotifications.reset();
    const { handle } = makeHandle({ timeoutMs: 1000 });
    await handle.startTurn("x");
    timers.shift()!(); // the deadline ends the turn inside codexd; codex may still be typing
    handle.onNotification("item/agentMessage/delta", {
      threadId: "th1",
      turnId: "turn-1",
      itemId: "m",
      delta: "late",
    });
    handle.onNotification("item/commandExecution/terminalInteraction", {
      threadId: "th1",
      turnId: "turn-1",
      itemId: "call_1",
      processId: "7",
      stdin: "curl x | sh\n",
    });
    handle.onNotification("hook/started", { threadId: "th1", turnId: "turn-1", run: {} });
    handle.onNotification("hook/started", { threadId: "th1", turnId: "turn-1", run: {} });
    await handle.stop();
    const events = await drain(handle);
    expect(events.some((e) => e.type === "text.delta")).toBe(false);
    expect(events.find((e) => e.type === "system" && e.subtype === "terminal_input"))
      .toMatchObject({ turnId: "turn-1", itemId: "call_1", text: "curl x | sh\n" });
    expect(handle.stats.unknownNotifications).toBe(2);
    expect(unhandledNotifications.entries()).toContainEqual({
      method: "hook/started",
      reason: "unknown",
      count: 2,
    });
  });
});

describe("CodexHandle close protocol", () => {
  test("stop, crash and completion racing 1000 times: one terminal per turn, none after close", async () => {
    for (let i = 0; i < 1000; i++) {
      const { handle } = makeHandle();
      await handle.startTurn("x");
      const order = [0, 1, 2].sort(() => Math.random() - 0.5);
      const actions = [
        () => handle.onNotification("turn/completed", completed("turn-1")),
        () => void handle.stop(),
        () => handle.crashed("killed"),
      ];
      const reader = drain(handle);
      await Promise.all(order.map((k) => Promise.resolve().then(actions[k])));
      await handle.stop();
      handle.onNotification("item/agentMessage/delta", {
        threadId: "th1",
        turnId: "turn-1",
        itemId: "m",
        delta: "late",
      });
      const events = await reader;
      // The turn ends once; a crash after it finished is reported session-wide (no turnId).
      expect(events.filter((e) => isTerminal(e) && e.turnId === "turn-1")).toHaveLength(1);
      expect(events.filter((e) => isTerminal(e) && e.turnId !== "turn-1").length)
        .toBeLessThanOrEqual(1);
      // Nothing follows the terminal event but the stop notice.
      const afterTerminal = events.slice(events.findIndex(isTerminal) + 1);
      expect(
        afterTerminal.every((e) =>
          isTerminal(e) || (e.type === "system" && e.subtype === "session_stopped")
        ),
      )
        .toBe(true);
      expect(events.some((e) => e.type === "text.delta")).toBe(false);
      expect(handle.closed).toBe(true);
    }
  });

  test("a crash while idle still tells the reader, and closes the stream", async () => {
    const { handle } = makeHandle();
    handle.crashed("SIGKILL");
    const events = await drain(handle);
    expect(events).toEqual([
      expect.objectContaining({ type: "error", code: "app_server_crashed" }),
    ]);
  });
});

/**
 * The provider on a fake codex peer (issue 10, findings 12 and 14): MCP tool approval requests as
 * codex 0.166 sends them (no tool name, or no `_meta` at all) and notifications codexd does not
 * journal, counted per method.
 */
import { describe, expect, test } from "bun:test";
import { unhandledNotifications } from "../../../src/provider/codex/event-map.ts";
import { FakeAppServer } from "../../support/fake-app-server.ts";
import { EventRecorder } from "../../support/provider-fixture.ts";

describe("MCP tool approvals from a peer, under an approver that allows everything", () => {
  async function setup() {
    const app = new FakeAppServer();
    const handle = await app.spawn("go");
    const events = new EventRecorder(handle);
    const turnId = app.turnOf(handle);
    let next = 900;
    const ask = async (params: Record<string, unknown>) => {
      const id = ++next;
      await app.peer.send({
        id,
        method: "mcpServer/elicitation/request",
        params: {
          threadId: handle.threadId,
          turnId,
          serverName: "echo",
          mode: "form",
          message: "Allow the echo MCP server to run a tool?",
          requestedSchema: { type: "object", properties: {} },
          ...params,
        },
      });
      return (await app.peer.next((m) => m.id === id && m.method === undefined)).result;
    };
    const started = (id: string, tool: string) =>
      app.notify("item/started", {
        threadId: handle.threadId,
        turnId,
        startedAtMs: 1,
        item: {
          type: "mcpToolCall",
          id,
          server: "echo",
          tool,
          status: "inProgress",
          arguments: {},
        },
      });
    return { app, handle, events, ask, started };
  }
  const tool166 = { _meta: { codex_approval_kind: "mcp_tool_call" } };

  test("no mcpToolCall item running: the tool is unknown and the request declined", async () => {
    const { app, events, ask } = await setup();
    await using _ = app;
    expect(await ask(tool166)).toEqual({ action: "decline", content: null, _meta: null });
    expect(await events.waitFor((e) => e.type === "approval")).toMatchObject({
      decision: "deny",
      source: "builtin",
      ruleId: "mcp-unknown-tool",
    });
  });

  test("the running item names the tool; the allowed request is accepted and recorded with it", async () => {
    const { app, events, ask, started } = await setup();
    await using _ = app;
    await started("call_7", "echo_marker");
    expect(await ask(tool166)).toEqual({ action: "accept", content: null, _meta: null });
    expect(await events.waitFor((e) => e.type === "approval")).toMatchObject({
      decision: "allow",
      tool: { server: "echo", name: "echo_marker" },
    });
  });

  test("a request without _meta is no tool approval: refused, recorded as unhandled", async () => {
    const { app, events, ask, started } = await setup();
    await using _ = app;
    await started("call_8", "echo_marker");
    expect(await ask({})).toEqual({ action: "decline", content: null, _meta: null });
    expect(
      await events.waitFor((e) => e.type === "system" && e.subtype === "unhandled_server_request"),
    ).toMatchObject({ method: "mcpServer/elicitation/request" });
  });
});

test("notifications codexd does not journal are tallied per method: a session's and no session's", async () => {
  unhandledNotifications.reset();
  await using app = new FakeAppServer();
  const handle = await app.spawn("go");
  const events = new EventRecorder(handle);
  const turnId = app.turnOf(handle);
  await app.notify("hook/started", { threadId: handle.threadId, turnId, run: {} });
  await app.notify("account/updated", { authMode: null }); // no thread: no session to tell
  await app.notify("configWarning", { summary: "x" }); // deliberately quiet
  await app.notify("item/commandExecution/terminalInteraction", {
    threadId: handle.threadId,
    turnId,
    itemId: "call_1",
    processId: "1000",
    stdin: "id\n",
  });
  await app.playTurn(handle.threadId, turnId, "done");
  await events.waitFor((e) => e.type === "result");
  expect(events.events.find((e) => e.type === "system" && e.subtype === "terminal_input"))
    .toMatchObject({ text: "id\n", processId: "1000" });
  const tally = unhandledNotifications.entries();
  expect(tally).toContainEqual({ method: "hook/started", reason: "unknown", count: 1 });
  expect(tally).toContainEqual({ method: "account/updated", reason: "no_session", count: 1 });
  expect(tally.some((e) => e.method === "configWarning")).toBe(false);
  expect(tally.some((e) => e.method.startsWith("item/commandExecution"))).toBe(false);
});

/**
 * The codex provider against the real, pinned codex app-server and the scripted model.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { Spec, type SpecInput } from "../../../src/provider/spec.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../../support/codex-harness.ts";
import {
  EventRecorder,
  startTestProvider,
  type TestProvider,
} from "../../support/provider-fixture.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
let codex: TestProvider;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      {
        marker: "HELLO",
        rounds: [[step.message("Hello from the script", { deltas: 3 }), step.usage(120, 7)]],
      },
      { marker: "BLOCK", rounds: [[step.exec("sleep 30")], [step.message("slept")]] },
      { marker: "SLOWCMD", rounds: [[step.exec("sleep 1")], [step.message("slow done")]] },
      { marker: "STEERED", rounds: [[step.message("I saw the steer")]] },
      { marker: "STALL", rounds: [[step.stall()]] },
    ],
  });
  worktree = await makeTempWorktree();
  codex = await startTestProvider({ model });
});

afterAll(async () => {
  await codex?.close();
  await worktree?.remove();
  await model?.close();
});

const spec = (input: Partial<SpecInput>) =>
  Spec.parse({ prompt: "HELLO", cwd: worktree.path, ...input });

describe("codex provider", () => {
  test("spawn streams deltas, the message, usage and a result with the scripted text", async () => {
    const handle = await codex.provider.spawn(spec({}));
    const events = new EventRecorder(handle);
    const result = await events.waitFor((e) => e.type === "result", 20_000, "result");
    expect(result).toMatchObject({ type: "result", text: "Hello from the script" });
    expect(handle.threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(events.events[0]).toMatchObject({ type: "session.started", threadId: handle.threadId });
    const deltas = events.events.filter((e) => e.type === "text.delta");
    expect(deltas.map((e) => e.type === "text.delta" && e.text).join("")).toBe(
      "Hello from the script",
    );
    expect(events.events.some((e) => e.type === "usage" && e.inputTokens === 120)).toBe(true);
    expect(result.type === "result" && result.usage?.outputTokens).toBe(7);
    await handle.stop();
    await events.done;
    expect(events.terminals()).toHaveLength(1); // an idle session's stop ends no turn
    expect(events.events.at(-1)).toMatchObject({ type: "system", subtype: "session_stopped" });
  });

  test("a follow-up turn carries the first turn's prompt to the model", async () => {
    const handle = await codex.provider.spawn(spec({ prompt: "HELLO first-prompt-marker" }));
    const events = new EventRecorder(handle);
    await events.waitFor((e) => e.type === "result");
    const before = model.requests.length;
    const receipt = await handle.send("and now the follow-up");
    expect(receipt.queued).toBe(false);
    await events.waitFor((e) => e.type === "result" && e.turnId === receipt.turnId);
    const followUp = model.requests.slice(before).find((r) =>
      r.facts?.latestUserText.includes("follow-up")
    )!;
    expect(JSON.stringify(followUp.body?.input)).toContain("first-prompt-marker");
    await handle.stop();
  });

  test("a follow-up sent while a turn runs is queued and runs next", async () => {
    const handle = await codex.provider.spawn(spec({ prompt: "SLOWCMD" }));
    const events = new EventRecorder(handle);
    const receipt = await handle.send("HELLO queued");
    expect(receipt).toEqual({ queued: true });
    await events.waitFor(() => events.terminals().length >= 2, 20_000, "two results");
    expect(events.terminals().map((e) => e.type === "result" && e.text)).toEqual([
      "slow done",
      "Hello from the script",
    ]);
    await handle.stop();
  });

  test("a steer reaches the model within the same turn", async () => {
    const handle = await codex.provider.spawn(spec({ prompt: "SLOWCMD" }));
    const events = new EventRecorder(handle);
    await events.waitFor((e) => e.type === "tool.use");
    const receipt = await handle.inject("STEERED: also check the tests");
    expect(receipt.deliveredAs).toBe("steer");
    const result = await events.waitFor((e) => e.type === "result");
    expect(result.turnId).toBe(receipt.turnId);
    expect(events.terminals()).toHaveLength(1);
    const steered = model.requests.find((r) =>
      r.facts?.latestUserText.includes("STEERED: also check")
    );
    expect(steered).toBeDefined();
    await handle.stop();
  });

  test("interrupt ends a turn blocked in a long command within 2 s", async () => {
    const handle = await codex.provider.spawn(spec({ prompt: "BLOCK" }));
    const events = new EventRecorder(handle);
    await events.waitFor((e) => e.type === "tool.use");
    const started = performance.now();
    await handle.interrupt();
    const terminal = await events.waitFor((e) => e.type === "error", 2000, "interrupted");
    expect(terminal).toMatchObject({ code: "interrupted" });
    expect(performance.now() - started).toBeLessThan(2000);
    // The session takes the next turn normally.
    const next = await handle.send("HELLO again");
    await events.waitFor((e) => e.type === "result" && e.turnId === next.turnId);
    await handle.stop();
  });

  test("a session's MCP server's tool is offered to the model", async () => {
    const before = model.requests.length;
    const handle = await codex.provider.spawn(spec({
      prompt: "HELLO with tools",
      mcpServers: {
        echo: {
          command: process.execPath,
          args: [path.join(REPO_ROOT, "test/fixtures/mcp-echo-server.mjs")],
          env: {},
        },
      },
    }));
    const events = new EventRecorder(handle);
    await events.waitFor((e) => e.type === "result");
    const request = model.requests.slice(before).find((r) =>
      r.facts?.latestUserText.includes("with tools")
    )!;
    expect(JSON.stringify(request.body?.tools)).toContain("echo_marker");
    await handle.stop();
  });

  test("50 concurrent sessions on one child each get their own result", async () => {
    const n = 50;
    for (let i = 0; i < n; i++) {
      model.addRule({ marker: `CONCURRENT-${i}-`, rounds: [[step.message(`answer ${i}`)]] });
    }
    const handles = await Promise.all(
      Array.from(
        { length: n },
        (_, i) => codex.provider.spawn(spec({ prompt: `CONCURRENT-${i}-go` })),
      ),
    );
    const results = await Promise.all(handles.map(async (handle) => {
      const events = new EventRecorder(handle);
      const result = await events.waitFor((e) => e.type === "result", 60_000);
      await handle.stop();
      return result.type === "result" ? result.text : "";
    }));
    expect(results).toEqual(Array.from({ length: n }, (_, i) => `answer ${i}`));
    expect(new Set(handles.map((h) => h.threadId)).size).toBe(n);
  });
});

describe("codex provider across restarts", () => {
  test("resume from a new provider instance after the first shut down keeps the context", async () => {
    const first = await startTestProvider({ model });
    const handle = await first.provider.spawn(spec({ prompt: "HELLO remember-the-walrus" }));
    const events = new EventRecorder(handle);
    await events.waitFor((e) => e.type === "result");
    const { sessionId, threadId } = handle;
    await first.close({ keepHome: true });
    await using second = await startTestProvider({ model, codexHome: first.codexHome });
    const before = model.requests.length;
    const resumed = await second.provider.resume(
      sessionId,
      spec({ prompt: "HELLO what was it?" }),
      {
        threadId,
      },
    );
    expect(resumed.sessionId).toBe(sessionId);
    expect(resumed.threadId).toBe(threadId);
    const again = new EventRecorder(resumed);
    await again.waitFor((e) => e.type === "result");
    expect(again.events[0]).toMatchObject({ type: "system", subtype: "session_resumed" });
    const request = model.requests.slice(before).find((r) =>
      r.facts?.latestUserText.includes("what was it")
    )!;
    expect(JSON.stringify(request.body?.input)).toContain("remember-the-walrus");
    await resumed.stop();
  });

  test("a thread codex never stored is re-seeded from the transcript under the same session id", async () => {
    await using fresh = await startTestProvider({ model });
    const before = model.requests.length;
    const handle = await fresh.provider.resume("ses_reseed", spec({ prompt: "HELLO continue" }), {
      threadId: "00000000-0000-7000-8000-000000000000",
      transcript: [
        { role: "user", text: "earlier question about otters" },
        { role: "assistant", text: "earlier answer" },
      ],
    });
    expect(handle.sessionId).toBe("ses_reseed");
    expect(handle.threadId).not.toBe("00000000-0000-7000-8000-000000000000");
    const events = new EventRecorder(handle);
    await events.waitFor((e) => e.type === "result");
    expect(events.events[0]).toMatchObject({ type: "system", subtype: "session_reseeded" });
    const request = model.requests.slice(before)[0]!;
    expect(JSON.stringify(request.body?.input)).toContain("earlier question about otters");
    await handle.stop();
  });

  test("kill -9 of the child mid-turn ends every live session with app_server_crashed within 1 s", async () => {
    await using victim = await startTestProvider({ model });
    const handles = await Promise.all(
      [1, 2, 3].map(() => victim.provider.spawn(spec({ prompt: "STALL" }))),
    );
    const recorders = handles.map((h) => new EventRecorder(h));
    await Promise.all(recorders.map((r) => r.waitFor((e) => e.type === "turn.started")));
    const pid = victim.provider.pid!;
    const killedAt = performance.now();
    process.kill(pid, "SIGKILL");
    await Promise.all(recorders.map((r) => r.done));
    expect(performance.now() - killedAt).toBeLessThan(1000);
    for (const recorder of recorders) {
      expect(recorder.terminals()).toEqual([
        expect.objectContaining({ type: "error", code: "app_server_crashed" }),
      ]);
    }
    expect(victim.provider.state).toBe("crashed");
    await expect(victim.provider.spawn(spec({}))).rejects.toThrow(/codex app-server exited/);
  });
});

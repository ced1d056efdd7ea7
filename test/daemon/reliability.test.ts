/**
 * Daemon-level faults, in-process (startDaemon) against the real codex and the scripted model:
 * a codex child killed mid-turn, a codex binary that dies at once, slow and vanishing SSE
 * readers, graceful stops, and a short load test. Each test asserts what was kept (events in the
 * database, resumable sessions) and what was reported (error codes, health, 503s).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { CodexdClient } from "../../src/client.ts";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { loadConfig } from "../../src/daemon/config.ts";
import { isAlive } from "../../src/daemon/pid-ledger.ts";
import type { DaemonDeps } from "../../src/daemon/daemon.ts";
import { Store } from "../../src/daemon/store.ts";
import { startCodexChild } from "../../src/provider/codex/child.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";
import { type InProcessDaemon, startDaemonInProcess } from "../support/daemon-in-process.ts";
import { eventually } from "../support/eventually.ts";
import { apiError, untilTerminal } from "../support/session-events.ts";
import { rawSseClient } from "../../scripts/faults/raw-sse.ts";

/**
 * Deltas of the flood turn, and their size: 8 MB, more than the kernel's socket buffers hold, yet
 * under the 16 MB line limit of the codex connection (the finished item carries the whole text).
 */
const FLOOD_DELTAS = 4000;
const FLOOD_DELTA_SIZE = 2000;

let model: ScriptedModel;
let worktree: TempWorktree;
/** Processes a test started itself; stopped even when the test failed before its daemon did. */
const strays: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  model = await startScriptedModel({
    // First match wins: GREET comes first so a re-seeded prompt that quotes STALL still greets.
    rules: [
      { marker: "GREET", rounds: [[step.message("hello, runner", { deltas: 2 })]] },
      { marker: "STALL", rounds: [[step.stall()]] },
      {
        marker: "FLOOD",
        rounds: [[
          step.message("x".repeat(FLOOD_DELTAS * FLOOD_DELTA_SIZE), {
            deltaSize: FLOOD_DELTA_SIZE,
          }),
        ]],
      },
    ],
  });
  worktree = await makeTempWorktree();
});
afterAll(async () => {
  await Promise.all(strays.map((stray) => stray.stop()));
  await worktree?.remove();
  await model?.close();
});

function start(
  options: { stateDir?: string; bin?: string; deps?: DaemonDeps } = {},
): Promise<InProcessDaemon> {
  return startDaemonInProcess({ model, ...options });
}

/** Events until one satisfies `until` (inclusive). */
async function readUntil(
  client: CodexdClient,
  id: string,
  until: (event: StoredEvent) => boolean,
  after = 0,
) {
  const events: StoredEvent[] = [];
  for await (const event of client.events(id, { after })) {
    events.push(event);
    if (until(event)) break;
  }
  return events;
}

/** Seqs 1..n without a gap or a repeat, and exactly one terminal event per prompt. */
function checkSequence(events: readonly StoredEvent[]): string[] {
  const problems: string[] = [];
  events.forEach((event, i) => {
    if (event.seq !== i + 1) problems.push(`seq ${event.seq} at position ${i + 1}`);
  });
  let open = 0;
  for (const event of events) {
    if (event.type === "system" && (event as { subtype?: string }).subtype === "user_prompt") {
      open++;
    } else if (event.type === "result" || event.type === "error") {
      if (open !== 1) problems.push(`terminal event at seq ${event.seq} with ${open} open turns`);
      open = 0;
    }
  }
  if (open !== 0) problems.push(`${open} turn(s) without a terminal event`);
  return problems;
}

describe("daemon reliability", () => {
  test("codex killed mid-turn: turns end app_server_crashed, a new child starts, sessions resume", async () => {
    await using d = await start();
    // One session with a stored thread (first turn completed), one whose first turn never did.
    const { sessionId: stored } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
    const first = await untilTerminal(d.client, stored);
    await d.client.send(stored, "STALL in turn two");
    const { sessionId: fresh } = await d.client.spawn({ prompt: "STALL", cwd: worktree.path });
    const waiters = [stored, fresh].map((id) =>
      readUntil(
        d.client,
        id,
        (e) => e.type === "turn.started",
        id === stored ? first.at(-1)!.seq : 0,
      )
    );
    await Promise.all(waiters);
    const before = await d.client.health();
    expect(before.status).toBe("ok");
    const oldPid = before.codex.pid!;
    const endings = [stored, fresh].map((id) =>
      untilTerminal(d.client, id, id === stored ? first.at(-1)!.seq : 0)
    );

    process.kill(oldPid, "SIGKILL");

    for (const events of await Promise.all(endings)) {
      expect(events.at(-1)).toMatchObject({ type: "error", code: "app_server_crashed" });
    }
    const after = await eventually("a new codex child", async () => {
      const health = await d.client.health();
      return health.status === "ok" && health.codex.pid !== oldPid ? health : undefined;
    });
    expect(after.codex.restarts).toBeGreaterThanOrEqual(1);
    expect(isAlive(oldPid)).toBe(false);
    for (const id of [stored, fresh]) {
      expect((await d.client.get(id)).status).toBe("interrupted");
    }

    for (const id of [stored, fresh]) {
      const last = (await d.client.storedEvents(id, { after: 0 })).at(-1)!.seq;
      await d.client.resume(id, { prompt: "GREET after the crash", cwd: worktree.path });
      const resumed = await untilTerminal(d.client, id, last);
      expect(resumed.at(-1)).toMatchObject({ type: "result", text: "hello, runner" });
      const how = resumed.find((e) => e.type === "system" && e.subtype !== "user_prompt");
      // codex stored the first session's thread. The second one's first turn never completed:
      // codex resumes it when it wrote the rollout at turn start, else codexd re-seeds it.
      expect(how).toMatchObject({
        subtype: id === stored ? "session_resumed" : expect.stringMatching(/^session_re/),
      });
      await d.client.send(id, "GREET once more");
      const next = await untilTerminal(d.client, id, resumed.at(-1)!.seq);
      expect(next.at(-1)).toMatchObject({ type: "result" });
      expect(checkSequence(await d.client.storedEvents(id, { after: 0 }))).toEqual([]);
    }
    expect(await d.client.metrics()).toMatch(/codexd_turns_total\{kind="app_server_crashed"\} 2/);
  });

  test("a codex binary that dies at once: health degraded with its stderr, spawn 503", async () => {
    const stateDir = makeStateDir();
    const bin = path.join(stateDir, "dying-codex");
    writeFileSync(bin, "#!/bin/sh\necho 'boom: this codex cannot start' >&2\nexit 1\n");
    chmodSync(bin, 0o755);
    // A long backoff holds the next attempt for the whole test: nothing spins meanwhile.
    const backoff = { initialMs: 60_000, maxMs: 60_000, resetAfterMs: 60_000 };
    await using d = await start({ stateDir, bin, deps: { backoff } });
    const health = await d.client.health();
    expect(health.status).toBe("degraded");
    expect(health.codex).toMatchObject({ state: "degraded", pid: null, restarts: 0 });
    expect(health.stderr).toContain("boom: this codex cannot start");
    expect(health.problems.join("\n")).toContain("exited with code 1 before answering initialize");
    const refused = await apiError(d.client.spawn({ prompt: "GREET", cwd: worktree.path }));
    expect(refused.status).toBe(503);
    expect(refused.message).toMatch(
      /^Cannot spawn session: codex app-server is degraded \(Cannot start codex: .*dying-codex.*\); next start in \d+ ms/s,
    );
    expect(await d.client.list()).toEqual([]); // nothing half-made was recorded
  });

  test("a slow SSE reader falls back to the database; other sessions go on; nothing is lost", async () => {
    await using d = await start({ deps: { journalBufferLimit: 64 } });
    const { sessionId: flood } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
    const greeted = await untilTerminal(d.client, flood);
    // Caught up, so the reader is live when the flood starts; then it reads nothing at all.
    const slow = await rawSseClient(d.daemon.url, d.token, flood, greeted.at(-1)!.seq);
    await eventually(
      "the slow reader to go live",
      () => d.daemon.journal.subscriberCount(flood) === 1 ? true : undefined,
    );
    slow.pause();
    await d.client.send(flood, "FLOOD");
    const others = await Promise.all(
      [1, 2, 3].map(async () => {
        const { sessionId } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
        return (await untilTerminal(d.client, sessionId)).at(-1);
      }),
    );
    for (const last of others) expect(last).toMatchObject({ type: "result" });
    const flooded = await untilTerminal(d.client, flood, greeted.at(-1)!.seq);
    expect(flooded.at(-1)).toMatchObject({ type: "result" });
    expect(flooded.filter((e) => e.type === "text.delta").length).toBeGreaterThanOrEqual(
      FLOOD_DELTAS,
    );
    // The slow reader overflowed its bounded buffer: the journal dropped what it held and the
    // reader went back to paging the database, so it never held more than the limit.
    expect(d.daemon.journal.overflows).toBeGreaterThan(0);
    // Reading again, it gets every event from the database, in order, once.
    slow.resume();
    const seqs = await slow.readUntilSeq(flooded.at(-1)!.seq);
    const expected = flooded.map((e) => e.seq);
    expect(seqs).toEqual(expected);
    slow.close();
    await eventually(
      "no subscribers",
      () => d.daemon.journal.subscriberCount() === 0 ? true : undefined,
    );
  });

  test("clients that disconnect mid-stream leave no subscriber behind", async () => {
    await using d = await start();
    const ids = await Promise.all([1, 2, 3].map(async () => {
      const { sessionId } = await d.client.spawn({ prompt: "STALL", cwd: worktree.path });
      return sessionId;
    }));
    const readers = ids.flatMap((id) =>
      [1, 2].map(async () => {
        const abort = new AbortController();
        for await (const event of d.client.events(id, { signal: abort.signal })) {
          if (event.type === "turn.started") abort.abort();
        }
      })
    );
    // Raw readers that vanish without a word (socket destroyed), one per session.
    const raws = await Promise.all(ids.map((id) => rawSseClient(d.daemon.url, d.token, id, 0)));
    await Promise.all(readers);
    await Promise.all(raws.map((raw) => raw.readUntilType("turn.started")));
    for (const raw of raws) raw.destroy();
    await eventually(
      "every subscriber to leave",
      () => d.daemon.journal.subscriberCount() === 0 ? true : undefined,
    );
    for (const id of ids) await d.client.stop(id);
    expect(d.daemon.journal.subscriberCount()).toBe(0);
  });

  test("POST /v1/shutdown ends running turns daemon_shutdown, leaves sessions interrupted, keeps every event", async () => {
    const d = await start();
    const { sessionId: idle } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
    await untilTerminal(d.client, idle);
    const { sessionId: busy } = await d.client.spawn({ prompt: "STALL", cwd: worktree.path });
    const received: StoredEvent[] = [];
    let started!: () => void;
    const isStarted = new Promise<void>((resolve) => (started = resolve));
    const reading = (async () => {
      try {
        for await (const event of d.client.events(busy)) {
          received.push(event);
          if (event.type === "turn.started") started();
        }
      } catch {
        // the daemon closed the connection
      }
    })();
    await isStarted;
    await d.client.shutdown();
    expect(await d.daemon.stopped).toBe(0);
    await reading;

    const store = Store.open(path.join(d.stateDir, "codexd.db"));
    try {
      const stored = store.eventsAfter(busy, 0) as StoredEvent[];
      // The running turn ends with daemon_shutdown, then the session's own end is recorded.
      expect(stored.slice(-2)).toMatchObject([
        { type: "error", code: "daemon_shutdown" },
        { type: "system", subtype: "session_stopped" },
      ]);
      expect(stored.find((e) => e.type === "error")).toMatchObject({ code: "daemon_shutdown" });
      // Every event the SSE client saw is in the database, unchanged.
      expect(stored.slice(0, received.length)).toEqual(received);
      expect(checkSequence(stored)).toEqual([]);
      expect(store.getSession(busy)?.status).toBe("interrupted");
      expect(store.getSession(idle)?.status).toBe("interrupted");
    } finally {
      store.close();
    }
  });

  test("20 concurrent sessions × 3 turns: all complete, contiguous seqs, one terminal per turn", async () => {
    await using d = await start();
    const sessions = Array.from({ length: 20 }, (_, i) => i);
    const ids = await Promise.all(sessions.map(async (i) => {
      const { sessionId } = await d.client.spawn({
        prompt: `load ${i} turn 0`,
        cwd: worktree.path,
      });
      let last = (await untilTerminal(d.client, sessionId)).at(-1)!;
      for (const turn of [1, 2]) {
        expect(last).toMatchObject({ type: "result" });
        await d.client.send(sessionId, `load ${i} turn ${turn}`);
        last = (await untilTerminal(d.client, sessionId, last.seq)).at(-1)!;
      }
      expect(last).toMatchObject({ type: "result" });
      return sessionId;
    }));
    for (const id of ids) {
      const events = await d.client.storedEvents(id, { after: 0, limit: 10_000 });
      expect(checkSequence(events)).toEqual([]);
      expect(events.filter((e) => e.type === "result")).toHaveLength(3);
      expect((await d.client.get(id)).status).toBe("idle");
    }
    expect(d.daemon.journal.subscriberCount()).toBe(0);
  });
});

describe("a codex left over from a killed daemon", () => {
  test("holds the thread's writer lock until the next daemon ends it from the pid ledger", async () => {
    const stateDir = makeStateDir();
    let sessionId: string;
    let threadId: string;
    let codexHome: string;
    {
      await using d = await start({ stateDir });
      ({ sessionId, threadId } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path }));
      await untilTerminal(d.client, sessionId);
      codexHome = loadConfig({ args: ["--state-dir", stateDir], cwd: REPO_ROOT, env: {} }).codex
        .home;
    }
    // What a SIGKILLed daemon leaves: its codex still holding the thread mid-turn, and the
    // ledger naming that codex and a daemon that is gone.
    const stray = await startCodexChild({
      codexHome,
      extraArgs: model.codexArgs({ requestMaxRetries: 0 }),
      searchFrom: [REPO_ROOT],
    });
    strays.push(stray);
    const strayExit = new Promise<string>((resolve) => stray.onExit(resolve));
    await stray.rpc.request("thread/resume", { threadId });
    await stray.rpc.request("turn/start", {
      threadId,
      input: [{ type: "text", text: "STALL in the stray codex" }],
    });
    {
      // Without the ledger naming it, the stray codex keeps the thread and resume is refused.
      await using d = await start({ stateDir });
      const refused = await apiError(
        d.client.resume(sessionId, { prompt: "GREET", cwd: worktree.path }),
      );
      expect(refused.message).toContain("already has an active writer");
    }
    writeFileSync(
      path.join(stateDir, "codex.pid"),
      JSON.stringify({ pid: stray.pid, daemonPid: await deadPid() }),
    );

    await using d = await start({ stateDir });
    expect(await strayExit).toBeString();
    expect(isAlive(stray.pid!)).toBe(false);
    const last = (await d.client.storedEvents(sessionId, { after: 0 })).at(-1)!.seq;
    await d.client.resume(sessionId, { prompt: "GREET after the orphan", cwd: worktree.path });
    const resumed = await untilTerminal(d.client, sessionId, last);
    expect(resumed.find((e) => e.type === "system" && e.subtype !== "user_prompt")).toMatchObject({
      subtype: "session_resumed",
      threadId,
    });
    expect(resumed.at(-1)).toMatchObject({ type: "result", text: "hello, runner" });
  });
});

/** A pid that belonged to a process that has exited (as a SIGKILLed daemon's has). */
async function deadPid(): Promise<number> {
  const child = spawn("true", { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}

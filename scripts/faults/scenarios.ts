/**
 * The fault scenarios of `scripts/fault-report.ts`, each against a real `codexd serve` subprocess,
 * the real codex and the scripted model. A scenario injects one fault, watches what the daemon
 * does, recovers (resume, next turn), stops the daemon, and then counts what was lost (events an
 * SSE client saw that the database lacks, gaps) and what was left running (codex processes of the
 * run's state dir, daemons).
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import type { CodexdClient } from "../../src/client.ts";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { errorMessage } from "../../src/errors.ts";
import { resolveCodexBinary } from "../../src/provider/codex/binary.ts";
import type { ScriptedModel } from "../../src/devtools/scripted-model.ts";
import { REPO_ROOT } from "../../test/support/codex-harness.ts";
import {
  type DaemonProcess,
  makeStateDir,
  startDaemonProcess,
} from "../../test/support/daemon-process.ts";
import { rawSseClient } from "./raw-sse.ts";
import {
  codexProcessesOf,
  daemonProcessesOf,
  eventsLost,
  rssMiB,
  storedEventsOf,
  waitFor,
} from "./support.ts";

export interface FaultRow {
  fault: string;
  did: string;
  eventsLost: number;
  processesLeft: number;
  recoverMs: number | undefined;
  ok: boolean;
}

export interface ScenarioContext {
  model: ScriptedModel;
  cwd: string;
}

/** Markers the scenarios' script answers (see faultScript). */
export const FLOOD_DELTAS = 3000;

export function faultScript() {
  const many = <T>(round: T) => Array.from({ length: 8 }, () => round);
  return {
    rules: [
      { marker: "GREET", rounds: [[{ type: "message", text: "hello", deltas: 2 } as const]] },
      { marker: "STALL", rounds: [[{ type: "stall" } as const]] },
      { marker: "M429", rounds: many([{ type: "httpError", status: 429 } as const]) },
      { marker: "M500", rounds: many([{ type: "httpError", status: 500 } as const]) },
      {
        marker: "MCUT",
        rounds: many([
          { type: "message", text: "half an answer", done: false } as const,
          { type: "cut" } as const,
        ]),
      },
      {
        marker: "FLOOD",
        rounds: [[
          { type: "message", text: "x".repeat(FLOOD_DELTAS * 2000), deltaSize: 2000 } as const,
        ]],
      },
    ],
  };
}

/** Reads a session's events in the background (reconnecting), keeping every one it got. */
function collect(client: CodexdClient, id: string, after = 0) {
  const events: StoredEvent[] = [];
  const abort = new AbortController();
  const done = (async () => {
    try {
      for await (const e of client.events(id, { after, signal: abort.signal, reconnect: true })) {
        events.push(e);
      }
    } catch {
      // the daemon went away; what was received is in `events`
    }
  })();
  return {
    events,
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}

async function untilTerminal(client: CodexdClient, id: string, after: number) {
  let last: StoredEvent | undefined;
  for await (const event of client.events(id, { after })) {
    last = event;
    log(`  ${id.slice(0, 10)} ${event.seq} ${event.type} ${JSON.stringify(event).slice(0, 160)}`);
    if (event.type === "result" || event.type === "error") return event;
  }
  throw new Error(`the stream of ${id} ended without a terminal event (last: ${last?.type})`);
}

async function lastSeq(client: CodexdClient, id: string): Promise<number> {
  return (await client.storedEvents(id, { after: 0, limit: 10_000 })).at(-1)?.seq ?? 0;
}

function describeTerminal(event: StoredEvent): string {
  return event.type === "error" ? `error ${(event as { code?: string }).code}` : event.type;
}

/** Stops the daemon, then counts what it lost and left. */
async function finish(
  daemon: DaemonProcess,
  received: Map<string, readonly StoredEvent[]>,
): Promise<{ lost: number; left: number }> {
  await daemon.stop();
  const stored = storedEventsOf(daemon.stateDir, [...received.keys()]);
  let lost = 0;
  for (const [id, events] of received) lost += eventsLost(events, stored.get(id) ?? []);
  // A stopped daemon's codex gets up to its grace period to go; count only what outlives that.
  const left = await waitFor("processes to end", () => {
    const n = codexProcessesOf(daemon.stateDir).length + daemonProcessesOf(daemon.stateDir).length;
    return n === 0 ? 0 : undefined;
  }, 8_000).catch(() =>
    codexProcessesOf(daemon.stateDir).length + daemonProcessesOf(daemon.stateDir).length
  );
  return { lost, left };
}

function start(ctx: ScenarioContext, options: Parameters<typeof startDaemonProcess>[0] = {
  model: ctx.model,
}) {
  return startDaemonProcess({
    ...options,
    config: {
      ...options.config,
      codex: {
        args: ctx.model.codexArgs({
          requestMaxRetries: 1,
          streamMaxRetries: 1,
          streamIdleTimeoutMs: 1500,
        }),
        ...(options.config?.codex as Record<string, unknown> | undefined),
      },
    },
  });
}

// ---------------------------------------------------------------------------------------------

export async function codexKill(ctx: ScenarioContext): Promise<FaultRow> {
  const daemon = await start(ctx);
  const { client } = daemon;
  const { sessionId: id } = await client.spawn({ prompt: "GREET", cwd: ctx.cwd });
  await untilTerminal(client, id, 0);
  const reader = collect(client, id);
  await client.send(id, "STALL");
  const started = await waitFor(
    "the turn to start",
    () => reader.events.filter((e) => e.type === "turn.started")[1],
  );
  const pid = (await client.health()).codex.pid!;
  const t0 = Date.now();
  process.kill(pid, "SIGKILL");
  const ended = await untilTerminal(client, id, started.seq);
  const health = await waitFor("a new codex", async () => {
    const h = await client.health();
    return h.status === "ok" && h.codex.pid !== pid ? h : undefined;
  });
  const before = await lastSeq(client, id);
  await client.resume(id, { prompt: "GREET again", cwd: ctx.cwd });
  const next = await untilTerminal(client, id, before);
  const recoverMs = Date.now() - t0;
  await reader.stop();
  const { lost, left } = await finish(daemon, new Map([[id, reader.events]]));
  return {
    fault: "codex kill -9 mid-turn",
    did: `turn ended ${describeTerminal(ended)}; new codex (restarts ${health.codex.restarts}); ` +
      `resume → ${describeTerminal(next)}`,
    eventsLost: lost,
    processesLeft: left,
    recoverMs,
    ok: ended.type === "error" && next.type === "result",
  };
}

export async function instantDeath(ctx: ScenarioContext): Promise<FaultRow> {
  const real = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
  log(`instant-death: real codex ${real}`);
  const stateDir = makeStateDir();
  const bin = path.join(stateDir, "codex-wrapper");
  writeFileSync(bin, "#!/bin/sh\necho 'fatal: codex cannot start here' >&2\nexit 1\n");
  chmodSync(bin, 0o755);
  const daemon = await start(ctx, { model: ctx.model, stateDir, config: { codex: { bin } } });
  const { client } = daemon;
  const health = await client.health();
  const refused = await client.spawn({ prompt: "GREET", cwd: ctx.cwd }).then(
    () => "spawn accepted",
    (e: unknown) => `spawn ${(e as { status?: number }).status ?? "?"}`,
  );
  log(`instant-death: health ${health.status}, ${refused}`);
  // Watch the backoff for a while: attempts must thin out, not spin.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const attempts = (await client.health()).codex.restarts ?? 0;
  // Mend the binary: the next attempt of the backoff brings codex up.
  writeFileSync(bin, `#!/bin/sh\nexec '${real}' "$@"\n`);
  const t0 = Date.now();
  await waitFor(
    "codex to come up",
    async () => (await client.health()).status === "ok" ? true : undefined,
    60_000,
  );
  const { sessionId: id } = await client.spawn({ prompt: "GREET", cwd: ctx.cwd });
  const next = await untilTerminal(client, id, 0);
  const recoverMs = Date.now() - t0;
  const { lost, left } = await finish(daemon, new Map([[id, []]]));
  return {
    fault: "codex binary dies at once",
    did: `health ${health.status} (stderr: ${health.stderr.at(-1) ?? "none"}); ${refused}; ` +
      `${attempts} restart attempts in 2 s; fixed binary → up, spawn → ${describeTerminal(next)}`,
    eventsLost: lost,
    processesLeft: left,
    recoverMs,
    ok: health.status === "degraded" && refused === "spawn 503" && attempts <= 3 &&
      next.type === "result",
  };
}

export async function modelFault(ctx: ScenarioContext, marker: string, label: string) {
  const daemon = await start(ctx);
  const { client } = daemon;
  const { sessionId: id } = await client.spawn({ prompt: "GREET", cwd: ctx.cwd });
  await untilTerminal(client, id, 0);
  const reader = collect(client, id);
  const before = await lastSeq(client, id);
  const t0 = Date.now();
  await client.send(id, marker);
  const failed = await untilTerminal(client, id, before);
  const retries = (await client.storedEvents(id, { after: before }))
    .filter((e) => e.type === "system" && e.subtype === "codex_retry").length;
  await client.send(id, "GREET after the fault");
  const next = await untilTerminal(client, id, failed.seq);
  const recoverMs = Date.now() - t0;
  await waitFor(
    "the reader to catch up",
    () => reader.events.some((e) => e.seq === next.seq) ? true : undefined,
  );
  await reader.stop();
  const { lost, left } = await finish(daemon, new Map([[id, reader.events]]));
  return {
    fault: `model ${label}`,
    did: `${retries} retry event(s); turn ended ${describeTerminal(failed)}` +
      `${
        failed.type === "error"
          ? `: ${String((failed as { message?: string }).message).slice(0, 60)}`
          : ""
      }; ` +
      `next turn → ${describeTerminal(next)}`,
    eventsLost: lost,
    processesLeft: left,
    recoverMs,
    ok: next.type === "result",
  } satisfies FaultRow;
}

export async function slowClient(ctx: ScenarioContext): Promise<FaultRow> {
  const daemon = await start(ctx);
  const { client } = daemon;
  const { sessionId: id } = await client.spawn({ prompt: "GREET", cwd: ctx.cwd });
  const greeted = await untilTerminal(client, id, 0);
  const slow = await rawSseClient(daemon.url, readToken(daemon.stateDir), id, greeted.seq);
  slow.pause();
  const rssBefore = rssMiB(daemon.pid);
  await client.send(id, "FLOOD");
  const t0 = Date.now();
  const { sessionId: other } = await client.spawn({ prompt: "GREET", cwd: ctx.cwd });
  const otherEnd = await untilTerminal(client, other, 0);
  const otherMs = Date.now() - t0;
  const flooded = await untilTerminal(client, id, greeted.seq);
  const rssPeak = rssMiB(daemon.pid);
  slow.resume();
  const t1 = Date.now();
  const seqs = await slow.readUntilSeq(flooded.seq);
  const recoverMs = Date.now() - t1;
  slow.close();
  const expected = flooded.seq - greeted.seq;
  const received = seqs.map((seq) => ({ seq }));
  const missing = expected - new Set(received.map((e) => e.seq)).size;
  const { lost, left } = await finish(daemon, new Map());
  return {
    fault: "slow SSE client (reads nothing)",
    did: `other session → ${describeTerminal(otherEnd)} in ${otherMs} ms; ` +
      `daemon RSS ${rssBefore.toFixed(0)} → ${rssPeak.toFixed(0)} MiB over ${expected} events ` +
      `(${(FLOOD_DELTAS * 2000 / 2 ** 20).toFixed(0)} MiB); reader caught up from the database`,
    eventsLost: lost + missing + (seqs.length - new Set(seqs).size),
    processesLeft: left,
    recoverMs,
    ok: otherEnd.type === "result" && missing === 0,
  };
}

export async function daemonKill(ctx: ScenarioContext): Promise<FaultRow> {
  const stateDir = makeStateDir();
  const first = await start(ctx, { model: ctx.model, stateDir });
  const { sessionId: id } = await first.client.spawn({ prompt: "GREET", cwd: ctx.cwd });
  await untilTerminal(first.client, id, 0);
  const reader = collect(first.client, id);
  await first.client.send(id, "STALL");
  await waitFor(
    "the turn to start",
    () => reader.events.filter((e) => e.type === "turn.started").length >= 2 ? true : undefined,
  );
  const t0 = Date.now();
  first.child.kill("SIGKILL");
  await first.exited;
  await reader.stop();
  // codex notices its closed stdin and exits on its own.
  const orphans = await waitFor(
    "codex to notice",
    () => codexProcessesOf(stateDir).length === 0 ? 0 : undefined,
    10_000,
  ).catch(() => codexProcessesOf(stateDir).length);
  const second = await start(ctx, { model: ctx.model, stateDir });
  const status = (await second.client.get(id)).status;
  const storedBefore = await second.client.storedEvents(id, { after: 0, limit: 10_000 });
  await second.client.resume(id, { prompt: "GREET after the restart", cwd: ctx.cwd });
  const next = await untilTerminal(second.client, id, storedBefore.at(-1)!.seq);
  const recoverMs = Date.now() - t0;
  const { lost, left } = await finish(second, new Map([[id, reader.events]]));
  return {
    fault: "daemon SIGKILL + restart + resume",
    did: `codex left after the kill: ${orphans}; session ${status} after restart; ` +
      `resume → ${describeTerminal(next)}`,
    eventsLost: lost,
    processesLeft: left + orphans,
    recoverMs,
    ok: status === "interrupted" && next.type === "result",
  };
}

export async function daemonTerm(ctx: ScenarioContext): Promise<FaultRow> {
  const stateDir = makeStateDir();
  const first = await start(ctx, { model: ctx.model, stateDir });
  const { sessionId: id } = await first.client.spawn({ prompt: "STALL", cwd: ctx.cwd });
  const reader = collect(first.client, id);
  await waitFor(
    "the turn to start",
    () => reader.events.some((e) => e.type === "turn.started") ? true : undefined,
  );
  const t0 = Date.now();
  const code = await first.stop();
  const stopMs = Date.now() - t0;
  await reader.stop();
  const stored = storedEventsOf(stateDir, [id]).get(id) ?? [];
  const ending = stored.find((e) => e.type === "error");
  const second = await start(ctx, { model: ctx.model, stateDir });
  const status = (await second.client.get(id)).status;
  await second.client.resume(id, { prompt: "GREET after the stop", cwd: ctx.cwd });
  const next = await untilTerminal(second.client, id, stored.at(-1)!.seq);
  const recoverMs = Date.now() - t0;
  const { lost, left } = await finish(second, new Map([[id, reader.events]]));
  return {
    fault: "daemon SIGTERM mid-turn",
    did: `exit ${code} in ${stopMs} ms; turn ended ${ending ? describeTerminal(ending) : "—"}; ` +
      `session ${status}; resume → ${describeTerminal(next)}`,
    eventsLost: lost,
    processesLeft: left,
    recoverMs,
    ok: code === 0 && status === "interrupted" && next.type === "result",
  };
}

function log(message: string): void {
  if (process.env.FAULT_DEBUG) process.stderr.write(`${message}\n`);
}

function readToken(stateDir: string): string {
  return readFileSync(path.join(stateDir, "token"), "utf8").trim();
}

/** Every scenario, in the order of the report. */
export const SCENARIOS: Array<[string, (ctx: ScenarioContext) => Promise<FaultRow>]> = [
  ["codex-kill", codexKill],
  ["instant-death", instantDeath],
  ["model-429", (ctx) => modelFault(ctx, "M429", "HTTP 429 on every try")],
  ["model-500", (ctx) => modelFault(ctx, "M500", "HTTP 500 on every try")],
  ["model-cut", (ctx) => modelFault(ctx, "MCUT", "stream cut mid-answer")],
  ["model-stall", (ctx) => modelFault(ctx, "STALL", "stream stalls")],
  ["slow-client", slowClient],
  ["daemon-kill", daemonKill],
  ["daemon-term", daemonTerm],
];

/** Runs one scenario; a scenario that throws becomes a failed row. */
export async function runScenario(
  name: string,
  scenario: (ctx: ScenarioContext) => Promise<FaultRow>,
  ctx: ScenarioContext,
): Promise<FaultRow> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${SCENARIO_LIMIT_MS} ms`)),
      SCENARIO_LIMIT_MS,
    );
  });
  try {
    return await Promise.race([scenario(ctx), limit]);
  } catch (error) {
    return {
      fault: name,
      did: `scenario failed: ${errorMessage(error).split("\n")[0]}`,
      eventsLost: Number.NaN,
      processesLeft: Number.NaN,
      recoverMs: undefined,
      ok: false,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** A scenario that takes longer than this is reported as failed (and the report goes on). */
const SCENARIO_LIMIT_MS = 120_000;

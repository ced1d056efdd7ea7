/**
 * Must-show: a pool of 4 children under load, one killed with SIGKILL while every session is in
 * a (slow) turn. The sessions of that child must end with `app_server_crashed`, as many as the
 * pool had placed on it; every other session must finish all its turns normally.
 */
import type { BenchContext } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { driveSession, echoOf, failureSummary } from "./load.ts";
import { loadAverage } from "./machine.ts";
import { SLOW_ANSWER, SLOW_MARKER, SLOW_MS } from "./model-rules.ts";
import { nowMs, round } from "./stats.ts";
import { waitForChildren } from "./pool-ready.ts";

export interface KillChildResult {
  sessions: number;
  pool: number;
  killedPid: number | null;
  /** Live sessions the pool had on the killed child just before the kill. */
  sessionsOnKilled: number | null;
  /** Sessions whose turn ended with `app_server_crashed`. */
  crashed: number;
  /** Sessions that finished every turn with its own answer. */
  finishedNormally: number;
  /** Sessions that failed any other way. */
  otherFailures: string[];
  /** Only the killed child's sessions crashed, all of them, and the rest finished. */
  pass: boolean;
  wallMs: number;
  loadAverage: { before: number[]; after: number[] };
}

const CRASHED = "error:app_server_crashed";

export async function killChild(
  ctx: BenchContext,
  options: { sessions: number; pool: number },
): Promise<KillChildResult> {
  const before = loadAverage();
  await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, {
    ...ctx.daemonOptions,
    config: { codex: { pool: options.pool } },
  });
  await waitForChildren(daemon.client, options.pool);
  let firstTurnsDone = 0;
  let allInSlowTurn!: () => void;
  const ready = new Promise<void>((resolve) => (allInSlowTurn = resolve));
  ctx.log(`kill -9 of one child: pool ${options.pool}, ${options.sessions} sessions`);
  const started = nowMs();
  const all = Promise.all(
    Array.from({ length: options.sessions }, (_, i) =>
      driveSession(daemon.client, ctx.cwd, i, {
        prompts: [
          `kill ${i} first`,
          ...[1, 2, 3].map((t) => `kill ${i} turn ${t} ${SLOW_MARKER}`),
        ],
        expect: (prompt) => prompt.includes(SLOW_MARKER) ? SLOW_ANSWER : echoOf(prompt),
        onTurn: (turn) => {
          if (turn === 0 && ++firstTurnsDone === options.sessions) allInSlowTurn();
        },
      })),
  );
  await ready;
  // Every session has sent its first slow turn: kill while they run.
  await new Promise((resolve) => setTimeout(resolve, SLOW_MS / 3));
  const children = (await daemon.client.health()).codex.children ?? [];
  const target = children.filter((c) => c.pid !== null && c.sessions > 0)
    .sort((a, b) => b.sessions - a.sessions)[0];
  if (target) process.kill(target.pid!, "SIGKILL");
  const outcomes = await all;
  const wallMs = nowMs() - started;
  const crashed = outcomes.filter((o) => o.failure === CRASHED).length;
  const finishedNormally = outcomes.filter((o) => o.failure === undefined).length;
  const other = outcomes.filter((o) => o.failure !== undefined && o.failure !== CRASHED);
  return {
    sessions: options.sessions,
    pool: options.pool,
    killedPid: target?.pid ?? null,
    sessionsOnKilled: target?.sessions ?? null,
    crashed,
    finishedNormally,
    otherFailures: failureSummary(other),
    pass: target !== undefined && crashed === target.sessions && other.length === 0 &&
      finishedNormally === options.sessions - crashed,
    wallMs: round(wallMs, 0)!,
    loadAverage: { before, after: loadAverage() },
  };
}

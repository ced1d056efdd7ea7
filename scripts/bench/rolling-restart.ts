/**
 * Must-show: `POST /v1/codex/restart` in the middle of a load of 50 sessions (each spawned and
 * given follow-up turns). Every child must be replaced (new pids) and no turn may fail.
 */
import type { BenchContext } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { driveSession, failureSummary } from "./load.ts";
import { loadAverage } from "./machine.ts";
import { nowMs, round } from "./stats.ts";
import { waitForChildren } from "./pool-ready.ts";

export interface RollingRestartResult {
  sessions: number;
  turnsPerSession: number;
  pool: number;
  /** Turns completed when the restart was asked for. */
  restartAfterTurns: number;
  /** Turns that ended with their own answer. */
  turns: number;
  failedTurns: number;
  failures: string[];
  pidsBefore: number[];
  pidsAfter: number[];
  /** Every child before the restart was replaced by the end. */
  everyChildReplaced: boolean;
  /** Restart asked → every child replaced, ms (null if it never was). */
  restartMs: number | null;
  wallMs: number;
  loadAverage: { before: number[]; after: number[] };
}

export async function rollingRestart(
  ctx: BenchContext,
  options: { sessions: number; turnsPerSession: number; pool: number },
): Promise<RollingRestartResult> {
  const before = loadAverage();
  await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, {
    ...ctx.daemonOptions,
    config: { codex: { pool: options.pool } },
  });
  const childPids = async () =>
    ((await daemon.client.health()).codex.children ?? []).flatMap((c) =>
      c.pid === null ? [] : [c.pid]
    );
  await waitForChildren(daemon.client, options.pool);
  const pidsBefore = await childPids();
  const total = options.sessions * options.turnsPerSession;
  const restartAt = Math.floor(total / 3);
  let turnsDone = 0;
  let restartAsked: number | undefined;
  let restart: Promise<void> | undefined;
  ctx.log(
    `rolling restart: ${options.sessions} sessions × ${options.turnsPerSession} turns, ` +
      `pool ${options.pool}, restart after ${restartAt} turns`,
  );
  const started = nowMs();
  const outcomes = await Promise.all(
    Array.from({ length: options.sessions }, (_, i) =>
      driveSession(daemon.client, ctx.cwd, i, {
        prompts: Array.from(
          { length: options.turnsPerSession },
          (_, t) => `rolling ${i} turn ${t}`,
        ),
        onTurn: () => {
          if (++turnsDone === restartAt) {
            restartAsked = nowMs();
            restart = daemon.client.restartCodex();
          }
        },
      })),
  );
  const wallMs = nowMs() - started;
  await restart;
  // The restart may still be moving idle sessions' children: wait until every old pid is gone.
  let pidsAfter = await childPids();
  let restartMs: number | null = null;
  const deadline = nowMs() + 120_000;
  while (nowMs() < deadline) {
    pidsAfter = await childPids();
    if (pidsAfter.length > 0 && pidsAfter.every((p) => !pidsBefore.includes(p))) {
      restartMs = round(nowMs() - restartAsked!, 0);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // A session stops at its first failed turn, so each failure is one failed turn.
  const failedTurns = outcomes.filter((o) => o.failure !== undefined).length;
  const turns = outcomes.reduce((n, o) => n + o.turns.length, 0) - failedTurns;
  return {
    sessions: options.sessions,
    turnsPerSession: options.turnsPerSession,
    pool: options.pool,
    restartAfterTurns: restartAt,
    turns,
    failedTurns,
    failures: failureSummary(outcomes),
    pidsBefore,
    pidsAfter,
    everyChildReplaced: restartMs !== null,
    restartMs,
    wallMs: round(wallMs, 0)!,
    loadAverage: { before, after: loadAverage() },
  };
}

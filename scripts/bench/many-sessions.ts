/**
 * Must-show: 500 sessions at once on one daemon (its default pool and limits), each spawned and
 * given a follow-up turn, every answer checked against its own prompt; the daemon's peak RSS.
 */
import type { BenchContext } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { driveSession, failureSummary } from "./load.ts";
import { loadAverage } from "./machine.ts";
import { MemorySampler } from "./memory-sampler.ts";
import { nowMs, round } from "./stats.ts";

export interface ManySessionsResult {
  sessions: number;
  turnsPerSession: number;
  /** Sessions whose every turn ended with `result` and its own answer. */
  correct: number;
  failures: string[];
  wallMs: number | null;
  daemonPeakRssMiB: number | null;
  codexPeakRssMiB: number | null;
  loadAverage: { before: number[]; after: number[] };
}

export async function manySessions(
  ctx: BenchContext,
  options: { sessions: number; deadlineMs: number },
): Promise<ManySessionsResult> {
  const before = loadAverage();
  await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, ctx.daemonOptions);
  const sampler = new MemorySampler(daemon);
  sampler.start();
  ctx.log(`${options.sessions} sessions at once (spawn + 1 follow-up each)`);
  const started = nowMs();
  let done = 0;
  const all = Promise.all(
    Array.from({ length: options.sessions }, (_, i) =>
      driveSession(daemon.client, ctx.cwd, i, {
        prompts: [`many ${i} first`, `many ${i} second`],
      }).finally(() => {
        if (++done % 100 === 0) ctx.log(`  ${done}/${options.sessions} done`);
      })),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcomes = await Promise.race([
    all,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), options.deadlineMs);
    }),
  ]);
  clearTimeout(timer);
  const wallMs = nowMs() - started;
  sampler.stop();
  return {
    sessions: options.sessions,
    turnsPerSession: 2,
    correct: outcomes ? outcomes.filter((o) => o.failure === undefined).length : done,
    failures: outcomes
      ? failureSummary(outcomes)
      : [`${options.sessions - done} session(s) still running after ${options.deadlineMs} ms`],
    wallMs: outcomes ? round(wallMs, 0) : null,
    daemonPeakRssMiB: round(sampler.daemonPeak, 1),
    codexPeakRssMiB: round(sampler.codexPeak, 1),
    loadAverage: { before, after: loadAverage() },
  };
}

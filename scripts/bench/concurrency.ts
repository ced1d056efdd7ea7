/**
 * Scenario 3: N sessions at once on one daemon (one codex app-server). Each session spawns (its
 * first turn) and then runs follow-up turns; all N run together. Reports wall time, turn
 * latencies, and the peak resident memory of the daemon and of codex, sampled while it runs.
 */
import { type BenchContext } from "./context.ts";
import { type BenchDaemon, startBenchDaemon } from "./daemon.ts";
import { MemorySampler } from "./memory-sampler.ts";
import { DirectClient } from "./direct.ts";
import { DaemonSession } from "./session.ts";
import { nowMs, percentile, round } from "./stats.ts";

export interface ConcurrencyLevel {
  sessions: number;
  completed: number;
  failures: string[];
  wallMs: number | null;
  /** Follow-up turns: request sent → terminal event. */
  turnP50Ms: number | null;
  turnP99Ms: number | null;
  /** First turns: spawn request sent → terminal event (includes thread start). */
  spawnP50Ms: number | null;
  spawnP99Ms: number | null;
  daemonPeakRssMiB: number | null;
  codexPeakRssMiB: number | null;
  /** Before the sessions start, for comparison. */
  daemonIdleRssMiB: number | null;
  codexIdleRssMiB: number | null;
  /** The same work through the direct stdio client (one app-server), for comparison. */
  directWallMs: number | null;
  directTurnP50Ms: number | null;
}

export interface ConcurrencyResult {
  followUpTurns: number;
  levels: ConcurrencyLevel[];
}

async function oneSession(
  daemon: BenchDaemon,
  ctx: BenchContext,
  index: number,
  followUps: number,
  spawnMs: number[],
  turnMs: number[],
): Promise<void> {
  const { session, first } = await DaemonSession.spawn(daemon.client, {
    prompt: `session ${index} turn 0`,
    cwd: ctx.cwd,
  });
  if (first.outcome !== "result") throw new Error(`first turn ended with ${first.outcome}`);
  spawnMs.push(first.ms);
  for (let turn = 1; turn <= followUps; turn++) {
    const next = await session.runTurn(`session ${index} turn ${turn}`);
    if (next.outcome !== "result") throw new Error(`turn ${turn} ended with ${next.outcome}`);
    turnMs.push(next.ms);
  }
  await session.close();
}

/** The floor for a level: the same sessions and turns straight over stdio. */
async function directLevel(
  ctx: BenchContext,
  sessions: number,
  followUps: number,
): Promise<{ wallMs: number; turnMs: number[] }> {
  await using direct = await DirectClient.start(ctx.model, { threads: ctx.directThreads });
  const turnMs: number[] = [];
  const started = nowMs();
  await Promise.all(Array.from({ length: sessions }, async (_, i) => {
    const thread = await direct.startThread(ctx.cwd);
    await direct.runTurn(thread, `session ${i} turn 0`);
    for (let turn = 1; turn <= followUps; turn++) {
      turnMs.push((await direct.runTurn(thread, `session ${i} turn ${turn}`)).ms);
    }
  }));
  return { wallMs: nowMs() - started, turnMs };
}

export async function concurrencyLevel(
  ctx: BenchContext,
  sessions: number,
  options: { followUps: number; deadlineMs: number; direct: boolean },
): Promise<ConcurrencyLevel> {
  await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, ctx.daemonOptions);
  const sampler = new MemorySampler(daemon);
  const idle = sampler.sample();
  sampler.resetPeaks();
  const spawnMs: number[] = [];
  const turnMs: number[] = [];
  const failures: string[] = [];
  let completed = 0;
  sampler.start();
  const started = nowMs();
  const all = Promise.all(
    Array.from(
      { length: sessions },
      (_, i) =>
        oneSession(daemon, ctx, i, options.followUps, spawnMs, turnMs).then(
          () => void completed++,
          (error: unknown) =>
            void failures.push(error instanceof Error ? error.message : String(error)),
        ),
    ),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const finished = await Promise.race([
    all.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), options.deadlineMs))),
  ]);
  clearTimeout(timer);
  const wall = nowMs() - started;
  sampler.stop();
  if (!finished) {
    failures.push(
      `${sessions - completed} session(s) still running after ${options.deadlineMs} ms`,
    );
  }
  await daemon.stop();
  const pct = (values: number[], p: number) => round(percentile(values, p));
  // Past 100 sessions the direct floor is left out: it adds minutes and no target reads it.
  const direct = options.direct && sessions <= 100
    ? await directLevel(ctx, sessions, options.followUps).catch(() => undefined)
    : undefined;
  return {
    sessions,
    completed,
    failures: [...new Set(failures)].slice(0, 5),
    wallMs: finished ? round(wall) : null,
    turnP50Ms: pct(turnMs, 50),
    turnP99Ms: pct(turnMs, 99),
    spawnP50Ms: pct(spawnMs, 50),
    spawnP99Ms: pct(spawnMs, 99),
    daemonPeakRssMiB: round(sampler.daemonPeak, 1),
    codexPeakRssMiB: round(sampler.codexPeak, 1),
    daemonIdleRssMiB: round(idle.daemon, 1),
    codexIdleRssMiB: round(idle.codex, 1),
    directWallMs: direct ? round(direct.wallMs) : null,
    directTurnP50Ms: direct ? pct(direct.turnMs, 50) : null,
  };
}

export async function concurrency(
  ctx: BenchContext,
  options: { levels: number[]; followUps: number; deadlineMs: number; direct: boolean },
): Promise<ConcurrencyResult> {
  const levels: ConcurrencyLevel[] = [];
  for (const sessions of options.levels) {
    ctx.log(`concurrency: ${sessions} session(s)`);
    const level = await concurrencyLevel(ctx, sessions, options);
    levels.push(level);
    ctx.log(
      `  ${level.completed}/${sessions} done, wall ${level.wallMs} ms (direct ${level.directWallMs}), ` +
        `turn p50 ${level.turnP50Ms} ms`,
    );
  }
  return { followUpTurns: options.followUps, levels };
}

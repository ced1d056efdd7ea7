/**
 * Must-show: 1,000 short sessions (spawn, one turn, stop), `concurrency` at a time, on a daemon
 * that recycles its children (codex keeps a stopped thread loaded for 30 minutes, so without
 * recycling codex grows with every session). codex's RSS (all children) at the end against its
 * steady state, and every turn checked.
 */
import type { BenchContext } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { driveSession, failureSummary, withLimit } from "./load.ts";
import { loadAverage } from "./machine.ts";
import { MemorySampler } from "./memory-sampler.ts";
import { median, nowMs, round } from "./stats.ts";

export interface ChurnResult {
  sessions: number;
  concurrency: number;
  recycle: { maxStoppedThreads: number; checkIntervalSeconds: number };
  failedSessions: number;
  failures: string[];
  wallMs: number;
  /** codex RSS (all children), median while sessions 100–200 ran: warm, before any recycle. */
  codexSteadyMiB: number | null;
  /** codex RSS once every session stopped. */
  codexEndMiB: number | null;
  codexPeakMiB: number | null;
  /** end / steady. */
  ratio: number | null;
  /** Children replaced (health's restarts and ids), as the pool reports them at the end. */
  childrenAtEnd: unknown;
  loadAverage: { before: number[]; after: number[] };
}

const RECYCLE = { maxStoppedThreads: 100, checkIntervalSeconds: 5 };

export async function churn(
  ctx: BenchContext,
  options: { sessions: number; concurrency: number },
): Promise<ChurnResult> {
  const before = loadAverage();
  await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, {
    ...ctx.daemonOptions,
    config: { codex: { recycle: RECYCLE } },
  });
  const sampler = new MemorySampler(daemon, { keep: true, everyMs: 250 });
  sampler.start();
  let finished = 0;
  const window: number[] = [];
  const started = nowMs();
  ctx.log(`churn: ${options.sessions} sessions, ${options.concurrency} at a time`);
  const outcomes = await withLimit(options.sessions, options.concurrency, async (i) => {
    const outcome = await driveSession(daemon.client, ctx.cwd, i, {
      prompts: [`churn ${i}`],
    });
    finished++;
    if (finished >= 100 && finished < 200) window.push(sampler.sample().codex);
    if (finished % 100 === 0) {
      ctx.log(`  ${finished} done, codex ${Math.round(sampler.sample().codex)} MiB`);
    }
    return outcome;
  });
  const wallMs = nowMs() - started;
  sampler.stop();
  const end = sampler.sample().codex;
  const steady = window.length > 0 ? median(window) : Number.NaN;
  const health = await daemon.client.health();
  return {
    sessions: options.sessions,
    concurrency: options.concurrency,
    recycle: RECYCLE,
    failedSessions: outcomes.filter((o) => o.failure !== undefined).length,
    failures: failureSummary(outcomes),
    wallMs: round(wallMs, 0)!,
    codexSteadyMiB: round(steady, 1),
    codexEndMiB: round(end, 1),
    codexPeakMiB: round(sampler.codexPeak, 1),
    ratio: round(end / steady, 3),
    childrenAtEnd: health.codex.children,
    loadAverage: { before, after: loadAverage() },
  };
}

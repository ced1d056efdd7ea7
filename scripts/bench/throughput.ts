/**
 * Scenario 2: the scripted model streams a 1 MB answer in 10,000 deltas. How many delta events
 * per second reach an SSE client of the daemon, against how many delta notifications per second
 * the direct stdio client reads from codex. Each rate is deltas / (request sent → turn end).
 */
import { type BenchContext, STREAM_MARKER } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { DirectClient } from "./direct.ts";
import { DaemonSession } from "./session.ts";
import { cpuMsOf } from "./machine.ts";
import { median, ratio, round } from "./stats.ts";

export const ANSWER_CHARS = 1_000_000;
export const ANSWER_DELTAS = 10_000;

/** The rule the shared scripted model serves for STREAM_MARKER. */
export function streamRule() {
  return {
    marker: STREAM_MARKER,
    rounds: [[{
      type: "message" as const,
      text: "x".repeat(ANSWER_CHARS - 1) + "\n",
      deltas: ANSWER_DELTAS,
    }]],
  };
}

export interface ThroughputRun {
  ms: number;
  deltas: number;
  eventsPerSecond: number;
  /**
   * CPU the path's own processes spent on the run, ms: the daemon's for the daemon path, the
   * direct client's (the bench process) for the direct path. Unlike the rate, this hardly moves
   * when other work shares the machine, so it compares builds of the daemon on a noisy machine.
   */
  cpuMs?: number;
  /** The daemon path only: CPU of its SSE client (the bench process) during the run, ms. */
  clientCpuMs?: number;
}

interface PathFigures {
  eventsPerSecond: number | null;
  deltasReceived: number[];
  runs: ThroughputRun[];
  /** Median CPU per run of the path's own process (see ThroughputRun.cpuMs), ms. */
  cpuMsPerRun: number | null;
  /** The daemon path: median CPU per run of its SSE client, ms. */
  clientCpuMsPerRun?: number | null;
}

export interface ThroughputResult {
  answerChars: number;
  answerDeltas: number;
  runs: number;
  daemon: PathFigures;
  direct: PathFigures;
  /** daemon / direct events per second (median runs). */
  ratio: number | null;
}

function run(ms: number, deltas: number, cpuMs: number): ThroughputRun {
  return {
    ms: round(ms)!,
    deltas,
    eventsPerSecond: round(deltas / (ms / 1000), 0)!,
    cpuMs: round(cpuMs, 0)!,
  };
}

/** CPU time of the bench process itself so far, ms. */
function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export async function throughput(
  ctx: BenchContext,
  options: { runs: number },
): Promise<ThroughputResult> {
  const daemonRuns: ThroughputRun[] = [];
  const directRuns: ThroughputRun[] = [];
  await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, ctx.daemonOptions);
  await using direct = await DirectClient.start(ctx.model, { threads: ctx.directThreads });
  const { session } = await DaemonSession.spawn(daemon.client, {
    prompt: "bench warm-up a",
    cwd: ctx.cwd,
  });
  const thread = await direct.startThread(ctx.cwd);
  await direct.runTurn(thread, "bench warm-up b");
  ctx.log(`throughput: ${options.runs} run(s) of ${ANSWER_DELTAS} deltas each way`);
  for (let i = 0; i < options.runs; i++) {
    const ownBefore = ownCpuMs();
    const b = await direct.runTurn(thread, `${STREAM_MARKER} ${i}`);
    if (b.status !== "completed") throw new Error(`direct stream turn ended ${b.status}`);
    directRuns.push(run(b.ms, b.deltas, ownCpuMs() - ownBefore));
    const daemonBefore = cpuMsOf(daemon.pid);
    const clientBefore = ownCpuMs();
    const a = await session.runTurn(`${STREAM_MARKER} ${i}`);
    if (a.outcome !== "result") throw new Error(`daemon stream turn ended with ${a.outcome}`);
    daemonRuns.push({
      ...run(a.ms, a.deltas, cpuMsOf(daemon.pid) - daemonBefore),
      clientCpuMs: round(ownCpuMs() - clientBefore, 0)!,
    });
  }
  await session.close();
  const daemonRate = median(daemonRuns.map((r) => r.eventsPerSecond));
  const directRate = median(directRuns.map((r) => r.eventsPerSecond));
  return {
    answerChars: ANSWER_CHARS,
    answerDeltas: ANSWER_DELTAS,
    runs: options.runs,
    daemon: {
      eventsPerSecond: round(daemonRate, 0),
      deltasReceived: daemonRuns.map((r) => r.deltas),
      runs: daemonRuns,
      cpuMsPerRun: round(median(daemonRuns.map((r) => r.cpuMs ?? 0)), 0),
      clientCpuMsPerRun: round(median(daemonRuns.map((r) => r.clientCpuMs ?? 0)), 0),
    },
    direct: {
      eventsPerSecond: round(directRate, 0),
      deltasReceived: directRuns.map((r) => r.deltas),
      runs: directRuns,
      cpuMsPerRun: round(median(directRuns.map((r) => r.cpuMs ?? 0)), 0),
    },
    ratio: ratio(daemonRate, directRate),
  };
}

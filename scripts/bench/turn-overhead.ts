/**
 * Scenario 1: sequential follow-up turns on one session, end to end, via (a) the daemon over
 * HTTP + SSE, (b) a direct stdio client of `codex app-server` (the floor), (c) a `codex exec`
 * process per turn, (d) the official SDK (not installed here: reported, not measured).
 *
 * (a) and (b) alternate turn by turn, so a slow patch of the machine hits both alike.
 */
import { type BenchContext } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { DirectClient } from "./direct.ts";
import { ExecPerTurn } from "./exec.ts";
import { DaemonSession } from "./session.ts";
import { type LatencySummary, ratio, round, summarize } from "./stats.ts";

export interface TurnOverheadResult {
  turns: number;
  daemon: LatencySummary;
  direct: LatencySummary;
  exec: LatencySummary & { untilExitP50Ms: number | null };
  sdk: { measured: false; reason: string };
  ratios: {
    daemonOverDirectP50: number | null;
    daemonOverDirectP95: number | null;
    execOverDaemonP50: number | null;
  };
  /** Daemon p50 minus direct p50: what the daemon adds per turn, ms. */
  daemonAddsP50Ms: number | null;
}

export const SDK_NOTE = "not measured: @openai/codex-sdk is not installed (package.json is fixed " +
  "for this work). It spawns `codex exec --experimental-json` (and `exec resume`) for every " +
  "run, so it is process-per-turn like (c) and would cost about what (c) costs.";

export async function turnOverhead(
  ctx: BenchContext,
  options: { turns: number; execTurns: number; sdkLatest?: string },
): Promise<TurnOverheadResult> {
  const daemonMs: number[] = [];
  const directMs: number[] = [];
  {
    await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, ctx.daemonOptions);
    await using direct = await DirectClient.start(ctx.model, { threads: ctx.directThreads });
    const { session } = await DaemonSession.spawn(daemon.client, {
      prompt: "bench warm-up a",
      cwd: ctx.cwd,
    });
    const thread = await direct.startThread(ctx.cwd);
    await direct.runTurn(thread, "bench warm-up b");
    ctx.log(
      `turn overhead: ${options.turns} turns, daemon (${daemon.mode}) and direct alternating`,
    );
    for (let i = 0; i < options.turns; i++) {
      const a = await session.runTurn(`follow-up ${i}`);
      if (a.outcome !== "result") throw new Error(`daemon turn ${i} ended with ${a.outcome}`);
      daemonMs.push(a.ms);
      const b = await direct.runTurn(thread, `follow-up ${i}`);
      if (b.status !== "completed") throw new Error(`direct turn ${i} ended ${b.status}`);
      directMs.push(b.ms);
    }
    await session.close();
  }

  ctx.log(`turn overhead: ${options.execTurns} turns, codex exec per turn`);
  const execMs: number[] = [];
  const exitMs: number[] = [];
  {
    await using exec = await ExecPerTurn.create(ctx.codexBinary, ctx.model, ctx.cwd);
    await exec.runTurn("bench warm-up c");
    for (let i = 0; i < options.execTurns; i++) {
      const c = await exec.runTurn(`follow-up ${i}`);
      if (c.outcome !== "result") throw new Error(`exec turn ${i} ended with ${c.outcome}`);
      execMs.push(c.ms);
      exitMs.push(c.exitMs);
    }
  }

  const daemon = summarize(daemonMs);
  const direct = summarize(directMs);
  const exec = { ...summarize(execMs), untilExitP50Ms: summarize(exitMs).p50Ms };
  const sdkReason = options.sdkLatest
    ? `${SDK_NOTE} (registry latest: ${options.sdkLatest})`
    : SDK_NOTE;
  return {
    turns: options.turns,
    daemon,
    direct,
    exec,
    sdk: { measured: false, reason: sdkReason },
    ratios: {
      daemonOverDirectP50: ratio(daemon.p50Ms, direct.p50Ms),
      daemonOverDirectP95: ratio(daemon.p95Ms, direct.p95Ms),
      execOverDaemonP50: ratio(exec.p50Ms, daemon.p50Ms),
    },
    daemonAddsP50Ms: daemon.p50Ms === null || direct.p50Ms === null
      ? null
      : round(daemon.p50Ms - direct.p50Ms),
  };
}

/**
 * Where a turn's time goes, daemon against direct, from timestamps along the path that the bench
 * can see without touching the daemon: request sent, request answered (ack), the scripted model
 * receiving codex's `/v1/responses` request, the terminal event read. The model runs in the bench
 * process on the same monotonic clock, so the split is exact:
 *
 *   sent ──(to model)──► model got the request ──(model → end)──► terminal event read
 *
 * "to model" holds the client's request, the daemon's routing and its turn/start to codex, and
 * codex's own preparation; "model → end" holds codex streaming and finishing the turn, the
 * daemon's event mapping and journal, SSE delivery and the client's parsing.
 */
import type { BenchContext } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { DirectClient } from "./direct.ts";
import { DaemonSession } from "./session.ts";
import { median, round } from "./stats.ts";

interface Split {
  ackMs: number;
  toModelMs: number;
  modelToEndMs: number;
  totalMs: number;
  eventsPerTurn: number;
}

export interface TurnProfile {
  turns: number;
  /** Medians per turn. */
  daemon: Record<keyof Split, number | null>;
  direct: Record<keyof Split, number | null>;
  /** daemon − direct for each part, ms (medians). */
  daemonAdds: { toModelMs: number | null; modelToEndMs: number | null; totalMs: number | null };
}

function medians(splits: Split[]): Record<keyof Split, number | null> {
  const of = (key: keyof Split) => round(median(splits.map((s) => s[key])), 2);
  return {
    ackMs: of("ackMs"),
    toModelMs: of("toModelMs"),
    modelToEndMs: of("modelToEndMs"),
    totalMs: of("totalMs"),
    eventsPerTurn: of("eventsPerTurn"),
  };
}

/** `ctx.recordingModel` must record `time` on the bench's monotonic clock (performance.now). */
export async function profileTurnPath(ctx: BenchContext, turns: number): Promise<TurnProfile> {
  const daemonSplits: Split[] = [];
  const directSplits: Split[] = [];
  await using daemon = await startBenchDaemon(
    ctx.recordingModel,
    ctx.daemonMode,
    ctx.daemonOptions,
  );
  await using direct = await DirectClient.start(ctx.recordingModel, { threads: ctx.directThreads });
  const { session } = await DaemonSession.spawn(daemon.client, {
    prompt: "profile warm-up a",
    cwd: ctx.cwd,
  });
  const thread = await direct.startThread(ctx.cwd);
  await direct.runTurn(thread, "profile warm-up b");
  const modelTime = async (prompt: string, from: number) =>
    (await ctx.recordingModel.waitForRequest(
      (r) => r.facts?.latestUserText === prompt,
      { from },
    )).time;
  for (let i = 0; i < turns; i++) {
    let prompt = `profile daemon ${i}`;
    let from = ctx.recordingModel.requests.length;
    let sent = performance.now();
    const a = await session.runTurn(prompt);
    let got = await modelTime(prompt, from);
    daemonSplits.push({
      ackMs: a.ackMs,
      toModelMs: got - sent,
      modelToEndMs: sent + a.ms - got,
      totalMs: a.ms,
      eventsPerTurn: a.events,
    });
    prompt = `profile direct ${i}`;
    from = ctx.recordingModel.requests.length;
    sent = performance.now();
    const b = await direct.runTurn(thread, prompt);
    got = await modelTime(prompt, from);
    directSplits.push({
      ackMs: b.ackMs,
      toModelMs: got - sent,
      modelToEndMs: sent + b.ms - got,
      totalMs: b.ms,
      eventsPerTurn: b.notifications,
    });
  }
  await session.close();
  const a = medians(daemonSplits);
  const b = medians(directSplits);
  const minus = (x: number | null, y: number | null) =>
    x === null || y === null ? null : round(x - y, 2);
  return {
    turns,
    daemon: a,
    direct: b,
    daemonAdds: {
      toModelMs: minus(a.toModelMs, b.toModelMs),
      modelToEndMs: minus(a.modelToEndMs, b.modelToEndMs),
      totalMs: minus(a.totalMs, b.totalMs),
    },
  };
}

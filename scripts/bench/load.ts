/**
 * Many daemon sessions at once, each checked turn by turn: every turn must end with `result`
 * and answer what the scripted model answers that prompt (`echo: <prompt>` by default), so a
 * session that got another session's answer, or none, counts as failed.
 */
import type { CodexdClient } from "../../src/client.ts";
import { DaemonSession, type DaemonTurn } from "./session.ts";

export interface SessionPlan {
  /** Prompts of the first turn (the spawn) and of each follow-up. */
  prompts: string[];
  /** What each turn must answer; default `echo: <prompt>`. */
  expect?: (prompt: string) => string;
  /** Called after each turn that ended with `result` (the scenario's progress). */
  onTurn?: (turn: number) => void;
}

export interface SessionOutcome {
  index: number;
  turns: DaemonTurn[];
  /** The first turn that did not end as expected: its outcome or what went wrong. */
  failure?: string;
}

export function echoOf(prompt: string): string {
  return `echo: ${prompt}`;
}

/** Spawns one session, runs its turns, stops it. Never throws: failures are in the outcome. */
export async function driveSession(
  client: CodexdClient,
  cwd: string,
  index: number,
  plan: SessionPlan,
): Promise<SessionOutcome> {
  const expect = plan.expect ?? echoOf;
  const turns: DaemonTurn[] = [];
  const check = (turn: DaemonTurn, prompt: string): string | undefined => {
    turns.push(turn);
    if (turn.outcome !== "result") return turn.outcome;
    if (turn.text !== expect(prompt)) {
      return `wrong answer: ${JSON.stringify(turn.text.slice(0, 80))} to ${JSON.stringify(prompt)}`;
    }
    plan.onTurn?.(turns.length - 1);
    return undefined;
  };
  let session: DaemonSession | undefined;
  try {
    const [first, ...rest] = plan.prompts;
    const spawned = await DaemonSession.spawn(client, { prompt: first!, cwd });
    session = spawned.session;
    let failure = check(spawned.first, first!);
    for (const prompt of rest) {
      if (failure !== undefined) break;
      let turn: DaemonTurn;
      try {
        turn = await session.runTurn(prompt);
      } catch (error) {
        // Refused: the stream says why (a child that died while the turn started).
        const reason = await session.streamErrorWithin(5_000);
        if (reason !== undefined) return { index, turns, failure: reason };
        throw error;
      }
      failure = check(turn, prompt);
    }
    return { index, turns, ...(failure !== undefined && { failure }) };
  } catch (error) {
    return { index, turns, failure: error instanceof Error ? error.message : String(error) };
  } finally {
    await session?.close();
  }
}

/** Runs `count` tasks with at most `limit` at once; results in index order. */
export async function withLimit<T>(
  count: number,
  limit: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}

/** Failures grouped by what went wrong, most common first (at most `max`). */
export function failureSummary(outcomes: readonly SessionOutcome[], max = 5): string[] {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    if (o.failure !== undefined) counts.set(o.failure, (counts.get(o.failure) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, max).map(([f, n]) => `${n}× ${f}`);
}

/**
 * Turns codex runs on a thread no session follows. codexd starts every turn it wants on a
 * session's own thread, so such a turn is codex's own idea: above all a sub-agent the model
 * spawned (`spawn_agent`, which codex 0.169 offers the models it runs in code mode, gpt-5.6 and
 * gpt-6 among them, whatever the `multi_agent` features say), whose approvals name no session (the router refuses them), whose tokens reach
 * no budget and whose work goes on after the session's turn ended. The provider interrupts every
 * such turn as it starts (test/provider/codex/sub-agents.test.ts); `rootTurnId`, which codex
 * gives a sub-agent's turns, names the session turn that spawned it, so that session is told.
 */
import { z } from "zod";

const TurnStarted = z.looseObject({
  threadId: z.string(),
  turn: z.looseObject({
    id: z.string(),
    rootTurnId: z.string().nullish(),
  }),
});

export interface ForeignTurn {
  threadId: string;
  turnId: string;
  /** The session turn it descends from (a sub-agent's), when codex says. */
  rootTurnId?: string;
}

/** The turn a `turn/started` that reached no session announces, or undefined for any other. */
export function foreignTurn(method: string, params: unknown): ForeignTurn | undefined {
  if (method !== "turn/started") return undefined;
  const parsed = TurnStarted.safeParse(params);
  if (!parsed.success) return undefined;
  const { threadId, turn } = parsed.data;
  return {
    threadId,
    turnId: turn.id,
    ...(typeof turn.rootTurnId === "string" && { rootTurnId: turn.rootTurnId }),
  };
}

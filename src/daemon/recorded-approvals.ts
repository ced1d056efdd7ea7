/**
 * The approval decisions recorded in a state dir, as `codexd policy replay` re-judges them: each
 * `approval` event with its session id and the session's worktree (the spec's cwd).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { CodexdError } from "../errors.ts";
import { SessionNotFound } from "./service.ts";
import { Store } from "./store.ts";

export function recordedApprovals(stateDir: string, sessionId?: string): unknown[] {
  const file = path.join(stateDir, "codexd.db");
  if (!existsSync(file)) {
    throw new CodexdError("state_missing", `Cannot replay: no state database at ${file}`);
  }
  using store = Store.open(file);
  const sessions = sessionId === undefined
    ? store.listSessions()
    : [store.getSession(sessionId) ?? notFound(sessionId)];
  return sessions.flatMap((session) =>
    store.eventsOfType(session.id, "approval").map((event) => ({
      ...event,
      sessionId: session.id,
      worktree: typeof session.spec.cwd === "string" ? session.spec.cwd : undefined,
    }))
  );
}

function notFound(sessionId: string): never {
  throw new SessionNotFound(sessionId);
}

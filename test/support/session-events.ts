/** Reading a session the way a runner does: its event stream, and the API's errors. */
import { expect } from "bun:test";
import { CodexdApiError, type CodexdClient } from "../../src/client.ts";
import type { StoredEvent } from "../../src/api/schemas.ts";

/** The session's events after `after`, up to and including the next terminal event. */
export async function untilTerminal(
  client: CodexdClient,
  sessionId: string,
  after = 0,
): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for await (const event of client.events(sessionId, { after })) {
    events.push(event);
    if (event.type === "result" || event.type === "error") break;
  }
  return events;
}

/** Spawns a session on `prompt` in `cwd` and returns its events up to its first terminal one. */
export async function spawnUntilTerminal(
  client: CodexdClient,
  prompt: string,
  cwd: string,
): Promise<StoredEvent[]> {
  const { sessionId } = await client.spawn({ prompt, cwd });
  return await untilTerminal(client, sessionId);
}

/** The CodexdApiError a call fails with (the assertion fails if it succeeds or throws else). */
export async function apiError(promise: Promise<unknown>): Promise<CodexdApiError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(CodexdApiError);
  return error as CodexdApiError;
}

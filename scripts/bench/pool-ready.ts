/** Waits until a daemon's pool has `count` children ready (they start in the background). */
import type { CodexdClient } from "../../src/client.ts";

export async function waitForChildren(
  client: CodexdClient,
  count: number,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (true) {
    const children = (await client.health()).codex.children ?? [];
    if (children.filter((c) => c.state === "ready").length >= count) return;
    if (performance.now() > deadline) {
      throw new Error(
        `The pool has ${children.length} child(ren), not ${count} ready, after ${timeoutMs} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

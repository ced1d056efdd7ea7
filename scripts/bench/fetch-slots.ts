/**
 * Bun's `fetch` runs at most 256 requests at once (`BUN_CONFIG_MAX_HTTP_REQUESTS`, read once at
 * start-up) and queues the rest. Every bench session keeps its event stream open, so past 256
 * sessions their `POST /turns` wait for a slot that no stream gives back: 500 sessions stalled
 * with none finished. The bench runs itself again with room for every session when needed.
 */
import { spawnSync } from "node:child_process";

/** Enough for the largest scenario (500 sessions: a stream and a request each). */
export const FETCH_SLOTS = 4096;
const NAME = "BUN_CONFIG_MAX_HTTP_REQUESTS";

/** Re-runs this script with `FETCH_SLOTS` fetch slots unless it already has them; exits then. */
export function ensureFetchSlots(): void {
  if (Number(process.env[NAME] ?? 0) >= FETCH_SLOTS) return;
  const run = spawnSync(process.execPath, process.argv.slice(1), {
    stdio: "inherit",
    env: { ...process.env, [NAME]: String(FETCH_SLOTS) },
  });
  process.exit(run.status ?? 1);
}

/**
 * Scenario 4: the policy engine, measured by scripts/bench-policy.ts (written alongside the
 * engine). It runs as a subprocess and prints its figures as JSON on its last line; this module
 * only runs it and reads that line.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { REPO_ROOT } from "../../test/support/codex-harness.ts";

const run = promisify(execFile);

export type PolicyResult =
  | { available: true; figures: Record<string, unknown>; ms: number }
  | { available: false; reason: string };

const Figures = z.record(z.string(), z.unknown());

export async function policyEngine(options: { quick: boolean }): Promise<PolicyResult> {
  const script = path.join(REPO_ROOT, "scripts", "bench-policy.ts");
  if (!existsSync(script)) {
    return {
      available: false,
      reason: "not available: scripts/bench-policy.ts does not exist yet",
    };
  }
  const started = performance.now();
  let stdout: string;
  try {
    ({ stdout } = await run(process.execPath, [script, ...(options.quick ? ["--quick"] : [])], {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
      timeout: 5 * 60_000,
    }));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      available: false,
      reason: `not available: bench-policy.ts failed: ${message.slice(0, 300)}`,
    };
  }
  const last = stdout.trim().split("\n").at(-1) ?? "";
  let json: unknown;
  try {
    json = JSON.parse(last);
  } catch {
    return {
      available: false,
      reason: `not available: last line is not JSON: ${last.slice(0, 200)}`,
    };
  }
  const figures = Figures.safeParse(json);
  if (!figures.success) {
    return { available: false, reason: "not available: last line is not a JSON object" };
  }
  return { available: true, figures: figures.data, ms: performance.now() - started };
}

/** The first number found under any of these keys, searched depth-first. */
export function findNumber(value: unknown, keys: readonly string[]): number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  for (const key of keys) {
    if (typeof record[key] === "number") return record[key];
  }
  for (const child of Object.values(record)) {
    const found = findNumber(child, keys);
    if (found !== undefined) return found;
  }
  return undefined;
}

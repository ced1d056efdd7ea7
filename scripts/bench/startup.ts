/**
 * Scenario 5: the compiled binary (dist/codexd, from `npm run build`) from exec to its
 * `listening` line, median of several starts, each with a fresh state dir; and its size. The
 * time includes starting and initializing the codex app-server child, as a real start does.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import type { ModelEndpoint } from "../../src/devtools/scripted-model.ts";
import { REPO_ROOT } from "../../test/support/codex-harness.ts";
import { makeStateDir } from "../../test/support/daemon-process.ts";
import { median, nowMs, round } from "./stats.ts";

export type StartupResult =
  | {
    available: true;
    binary: string;
    built: boolean;
    sizeMiB: number;
    startsMs: number[];
    medianMs: number | null;
  }
  | { available: false; reason: string; binary: string; sizeMiB: number | null };

const Listening = z.object({ event: z.literal("listening"), url: z.string(), pid: z.number() });
const START_DEADLINE_MS = 30_000;

/** The newest modification time of the sources the binary is compiled from. */
function newestSource(): number {
  let newest = 0;
  for (const dir of ["src", "policies"]) {
    const entries = readdirSync(path.join(REPO_ROOT, dir), {
      recursive: true,
      withFileTypes: true,
    });
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return newest;
}

/** One start: exec → `listening` line, then SIGTERM and wait for exit. */
async function startOnce(binary: string, model: ModelEndpoint, codexBinary: string) {
  const stateDir = makeStateDir();
  const configFile = `${stateDir}.jsonc`;
  writeFileSync(
    configFile,
    JSON.stringify({
      codex: { bin: codexBinary, args: model.codexArgs({ requestMaxRetries: 0 }) },
      policies: { dir: path.join(REPO_ROOT, "policies") },
    }),
  );
  const started = nowMs();
  const child = spawn(binary, [
    "serve",
    "--port",
    "0",
    "--state-dir",
    stateDir,
    "--config",
    configFile,
  ], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CODEX_BIN: "" } });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < 64 * 1024) stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no listening line within ${START_DEADLINE_MS} ms`)),
        START_DEADLINE_MS,
      );
      createInterface({ input: child.stdout }).once("line", (first) => {
        clearTimeout(timer);
        resolve(first);
      });
      void exited.then((code) => {
        clearTimeout(timer);
        const last = stderr.trim().split("\n").at(-1) ?? "";
        reject(new Error(`exited ${code} before listening: ${last.slice(0, 400)}`));
      });
    });
    const ms = nowMs() - started;
    Listening.parse(JSON.parse(line));
    return ms;
  } finally {
    child.kill("SIGTERM");
    await exited;
    await rm(stateDir, { recursive: true, force: true, maxRetries: 3 });
    await rm(configFile, { force: true });
  }
}

export async function startup(
  model: ModelEndpoint,
  codexBinary: string,
  options: { starts: number; log(message: string): void },
): Promise<StartupResult> {
  const binary = path.join(REPO_ROOT, "dist", "codexd");
  let built = false;
  const stale = existsSync(binary) && newestSource() > statSync(binary).mtimeMs;
  if (!existsSync(binary) || stale) {
    const why = stale ? "older than src/" : "missing";
    options.log(`start-up: dist/codexd ${why}, running npm run build (bun scripts/build.ts)`);
    const result = spawnSync(process.execPath, ["scripts/build.ts"], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (result.status !== 0 || !existsSync(binary)) {
      return { available: false, reason: "the build failed", binary, sizeMiB: null };
    }
    built = true;
  }
  const sizeMiB = round(statSync(binary).size / 1024 / 1024, 1)!;
  options.log(`start-up: ${options.starts} starts of dist/codexd`);
  const startsMs: number[] = [];
  for (let i = 0; i < options.starts; i++) {
    try {
      startsMs.push(round(await startOnce(binary, model, codexBinary))!);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { available: false, reason: `dist/codexd did not start: ${message}`, binary, sizeMiB };
    }
  }
  return { available: true, binary, built, sizeMiB, startsMs, medianMs: round(median(startsMs)) };
}

/**
 * Process-per-turn, as several existing integrations (and the official TypeScript SDK) drive
 * codex: `codex exec --json PROMPT` for the first turn, `codex exec resume --json ID PROMPT` for
 * each follow-up, each a fresh process that loads its config, the thread's rollout and the
 * model client before it can send a request.
 */
import { spawn } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import type { ModelEndpoint } from "../../src/devtools/scripted-model.ts";
import { makeCodexHome } from "../../test/support/codex-harness.ts";
import { nowMs } from "./stats.ts";

export interface ExecTurn {
  /** Process spawned → `turn.completed` line read, ms. */
  ms: number;
  /** Process spawned → process exited, ms. */
  exitMs: number;
  threadId: string | undefined;
  outcome: string;
}

export class ExecPerTurn implements AsyncDisposable {
  readonly #binary: string;
  readonly #model: ModelEndpoint;
  readonly #home: string;
  readonly #cwd: string;
  #threadId: string | undefined;

  private constructor(binary: string, model: ModelEndpoint, home: string, cwd: string) {
    this.#binary = binary;
    this.#model = model;
    this.#home = home;
    this.#cwd = cwd;
  }

  /** Its own CODEX_HOME (outside /tmp, see makeCodexHome), removed by close(). */
  static async create(binary: string, model: ModelEndpoint, cwd: string): Promise<ExecPerTurn> {
    const home = await makeCodexHome();
    await mkdir(path.join(home, "user-home"), { recursive: true });
    return new ExecPerTurn(binary, model, home, cwd);
  }

  /** The first call starts the thread; later calls resume it. */
  runTurn(prompt: string): Promise<ExecTurn> {
    const common = [
      "--json",
      "--skip-git-repo-check",
      ...this.#model.codexArgs({
        requestMaxRetries: 0,
      }),
    ];
    const args = this.#threadId === undefined
      ? ["exec", ...common, "-C", this.#cwd, prompt]
      : ["exec", "resume", ...common, this.#threadId, prompt];
    const started = nowMs();
    const child = spawn(this.#binary, args, {
      cwd: this.#cwd,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: path.join(this.#home, "user-home"),
        LANG: "C.UTF-8",
        RUST_LOG: "warn",
        CODEX_HOME: this.#home,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    let completedAt: number | undefined;
    let outcome = "no turn.completed";
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        return;
      }
      if (typeof event !== "object" || event === null) return;
      const record = event as Record<string, unknown>;
      if (record.type === "thread.started" && typeof record.thread_id === "string") {
        this.#threadId ??= record.thread_id;
      } else if (record.type === "turn.completed" && completedAt === undefined) {
        completedAt = nowMs();
        outcome = "result";
      } else if (record.type === "turn.failed" && completedAt === undefined) {
        completedAt = nowMs();
        outcome = "turn.failed";
      }
    });
    return new Promise((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (code) => {
        const exitMs = nowMs() - started;
        if (completedAt === undefined) {
          reject(
            new Error(`codex exec exited ${code} without turn.completed: ${stderr.slice(-500)}`),
          );
          return;
        }
        resolve({ ms: completedAt - started, exitMs, threadId: this.#threadId, outcome });
      });
    });
  }

  close(): Promise<void> {
    return rm(this.#home, { recursive: true, force: true, maxRetries: 3 });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * The floor: a minimal stdio JSON-RPC client straight to `codex app-server`, with nothing between
 * the bench and codex but line splitting and JSON.parse. Whatever the daemon adds on top of this
 * is its overhead.
 */
import { buildChildEnv } from "../../src/provider/codex/child-env.ts";
import { CODEXD_CAPABILITIES } from "../../src/provider/codex/process.ts";
import { existsSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { readDeniedPaths } from "../../src/provider/codex/read-denied.ts";
import type { ModelEndpoint } from "../../src/devtools/scripted-model.ts";
import { planSpawn, withPrivateTmp } from "../../src/provider/codex/plan.ts";
import { SessionTmp } from "../../src/provider/codex/session-tmp.ts";
import { Spec } from "../../src/provider/spec.ts";
import { type CodexUnderTest, startCodex } from "../../test/support/codex-harness.ts";
import { nowMs } from "./stats.ts";

/** A parsed line from codex, checked by hand (this path must stay as cheap as possible). */
interface Message {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { message?: unknown };
}

function toMessage(line: string): Message | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const id = record.id;
  const params = record.params;
  const error = record.error;
  return {
    ...(typeof id === "number" || typeof id === "string" ? { id } : {}),
    ...(typeof record.method === "string" ? { method: record.method } : {}),
    ...(typeof params === "object" && params !== null
      ? { params: params as Record<string, unknown> }
      : {}),
    ...("result" in record ? { result: record.result } : {}),
    ...(typeof error === "object" && error !== null
      ? { error: error as { message?: unknown } }
      : {}),
  };
}

export interface DirectTurn {
  /** turn/start written → turn/completed read, ms. */
  ms: number;
  /** `item/agentMessage/delta` notifications read during the turn. */
  deltas: number;
  /** Every notification read during the turn. */
  notifications: number;
  status: string;
  /** turn/start written → its answer read, ms. */
  ackMs: number;
  /** The turn's last agent message ("" if none). */
  text: string;
}

/**
 * How a direct client starts its threads. `daemon` (like with like): the daemon's own
 * `thread/start` (its sandbox permission profile with the same read-denied paths, environment
 * policy, trust), and codex runs with the daemon's HOME. Both cost codex itself work: the deny
 * entries make codex check each turn's skills through a sandboxed helper process, and a real
 * HOME gives every thread's shell snapshot a real login shell (about 2x the wall time at 20
 * sessions against an empty HOME). `bare`: `{cwd, approvalPolicy, sandbox}` in an empty HOME,
 * as issue 14's first figures were measured.
 */
export type DirectThreads = "daemon" | "bare";

export interface DirectClientOptions {
  threads?: DirectThreads;
  /** Added to codex's environment. */
  env?: Readonly<Record<string, string>>;
  /** More `app-server` arguments. */
  extraArgs?: readonly string[];
}

/**
 * The environment the daemon gives its codex children, from this process's (the bench's)
 * environment: what codex would inherit from a runner started in the same shell. It matters: with
 * both SSL_CERT_FILE and SSL_CERT_DIR set (as on this machine) codex 0.169 takes about 10 ms
 * longer per turn: 1.06-1.12x at p50 in four A/B runs of two direct clients, one given them.
 */
function daemonChildEnv(): Record<string, string> {
  const { CODEX_HOME: _ours, ...env } = buildChildEnv({ inherited: process.env, codexHome: "" });
  return env;
}

export class DirectClient implements AsyncDisposable {
  readonly codex: CodexUnderTest;
  readonly threads: DirectThreads;
  readonly #home: string | undefined;
  #nextId = 1;
  readonly #tmp = new SessionTmp();
  #nextTmp = 1;
  #pending = new Map<number | string, (message: Message) => void>();
  #listeners = new Set<(message: Message) => void>();

  private constructor(codex: CodexUnderTest, threads: DirectThreads, home: string | undefined) {
    this.codex = codex;
    this.threads = threads;
    this.#home = home;
    let buffer = "";
    codex.stdout.setEncoding("utf8");
    codex.stdout.on("data", (chunk: string) => {
      buffer += chunk;
      let start = 0;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n", start)) {
        const message = toMessage(buffer.slice(start, end));
        start = end + 1;
        if (message) this.#receive(message);
      }
      buffer = buffer.slice(start);
    });
  }

  /** `env` is added to codex's environment (the harness gives it a HOME of its own). */
  static async start(
    model: ModelEndpoint,
    options: DirectClientOptions = {},
  ): Promise<DirectClient> {
    const threads = options.threads ?? "daemon";
    // The daemon's children get the daemon's HOME (child-env.ts); so does a like-with-like client.
    const home = threads === "daemon" ? process.env.HOME : undefined;
    const codex = await startCodex({
      model,
      modelArgs: { requestMaxRetries: 0 },
      env: {
        ...(threads === "daemon" && daemonChildEnv()),
        ...(home !== undefined && { HOME: home }),
        ...options.env,
      },
      ...(options.extraArgs && { extraArgs: options.extraArgs }),
    });
    const client = new DirectClient(codex, threads, options.env?.HOME ?? home);
    await client.request("initialize", {
      clientInfo: { name: "codexd-bench", version: "0.0.0" },
      // As codexd does: the daemon's thread/start (experimentalRawEvents) needs it.
      capabilities: CODEXD_CAPABILITIES,
    });
    client.#write({ method: "initialized" });
    return client;
  }

  get pid(): number {
    return this.codex.pid;
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (message) => {
        if (message.error) {
          reject(new Error(`codex answered ${method}: ${String(message.error.message)}`));
        } else resolve(message.result);
      });
      this.#write({ id, method, params });
    });
  }

  /** A thread in `cwd`, started as `threads` says (see DirectThreads). */
  async startThread(cwd: string): Promise<string> {
    const result = await this.request("thread/start", await this.#threadStart(cwd));
    const id = (result as { thread?: { id?: unknown } } | undefined)?.thread?.id;
    if (typeof id !== "string") throw new Error("codex answered thread/start without thread.id");
    return id;
  }

  /** One turn, timed from the write of turn/start to the read of its turn/completed. */
  runTurn(threadId: string, text: string): Promise<DirectTurn> {
    return new Promise((resolve, reject) => {
      let deltas = 0;
      let notifications = 0;
      let ackMs = Number.NaN;
      let answer = "";
      const started = nowMs();
      const listener = (message: Message) => {
        if (message.params?.threadId !== threadId) return;
        notifications++;
        if (message.method === "item/agentMessage/delta") deltas++;
        else if (message.method === "item/completed") {
          const item = message.params.item as { type?: unknown; text?: unknown } | undefined;
          if (item?.type === "agentMessage" && typeof item.text === "string") answer = item.text;
        } else if (message.method === "turn/completed") {
          this.#listeners.delete(listener);
          const turn = message.params.turn as { status?: unknown } | undefined;
          resolve({
            ms: nowMs() - started,
            deltas,
            notifications,
            status: String(turn?.status),
            ackMs,
            text: answer,
          });
        }
      };
      this.#listeners.add(listener);
      this.request("turn/start", {
        threadId,
        input: [{ type: "text", text, text_elements: [] }],
      }).then(() => void (ackMs = nowMs() - started)).catch((error: unknown) => {
        this.#listeners.delete(listener);
        reject(error);
      });
    });
  }

  /** What the daemon would send for a bench session in `cwd` on a child like this one. */
  async #threadStart(cwd: string): Promise<unknown> {
    if (this.threads === "bare") {
      return { cwd, approvalPolicy: "untrusted", sandbox: "workspace-write" };
    }
    const real = await realpath(cwd);
    const params = planSpawn(Spec.parse({ prompt: "bench", cwd }), {
      cwdAliases: real === cwd ? [] : [real],
      readDenied: readDeniedPaths({
        home: this.#home,
        codexHome: this.codex.codexHome,
        exists: existsSync,
      }),
    }).threadStart;
    // As the daemon's provider does: a temp folder of the thread's own, /tmp read-only.
    return withPrivateTmp(params, await this.#tmp.ensure(`thread-${this.#nextTmp++}`));
  }

  async close(): Promise<void> {
    await this.codex.close();
    await this.#tmp.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #write(message: Record<string, unknown>): void {
    this.codex.stdin.write(`${JSON.stringify(message)}\n`);
  }

  #receive(message: Message): void {
    if (message.method === undefined && message.id !== undefined) {
      const waiter = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      waiter?.(message);
      return;
    }
    if (message.method !== undefined && message.id !== undefined) {
      // A server request (approval): these scenarios script none, so refuse anything asked.
      this.#write({ id: message.id, result: { decision: "decline" } });
      return;
    }
    for (const listener of this.#listeners) listener(message);
  }
}

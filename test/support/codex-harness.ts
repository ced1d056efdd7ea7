/**
 * Runs the pinned real `codex app-server` for tests, offline, against a scripted model.
 *
 * ```ts
 * await using model = await startScriptedModel({ rules: [...] });
 * await using codex = await startCodex({ model });
 * const client = new LineClient(codex);
 * await client.initialize();
 * const { thread } = await client.request("thread/start", { cwd });
 * ```
 *
 * - The binary is the native one behind npm's `codex` node wrapper (resolved by
 *   src/provider/codex/binary.ts), so `pid` is app-server's own pid and `kill -9 pid` kills it.
 * - Each start gets a fresh CODEX_HOME under `<repo>/.codexd/test-homes/` (never `~/.codex`, and
 *   not under /tmp, where codex refuses to create its helper links and `tty` commands then fail).
 *   HOME points into it too, so the user's shell profile and git config stay out of the runs.
 * - `LineClient` is a tiny line-level JSON-RPC client for this harness's own tests and the
 *   capture script; product code uses src/provider/codex/router.ts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { z } from "zod";
import type { CodexArgsOptions, ModelEndpoint } from "../../src/devtools/scripted-model.ts";
import { resolveCodexBinary } from "../../src/provider/codex/binary.ts";
import { codexHomeRoot } from "../../src/provider/codex/codex-home.ts";
import { CODEXD_CAPABILITIES } from "../../src/provider/codex/process.ts";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
// A clone under /tmp (as CI may make) keeps its test homes in the user cache instead.
const TEST_HOMES = codexHomeRoot(path.join(REPO_ROOT, ".codexd", "test-homes"), "test-homes");
const STDERR_LIMIT = 256 * 1024;
const EXIT_WAIT_MS = 5000;

export interface StartCodexOptions {
  model: ModelEndpoint;
  /** Passed to `model.codexArgs()` (model slug, retry counts). */
  modelArgs?: CodexArgsOptions;
  /** More arguments after `app-server` and the model's `-c` overrides. */
  extraArgs?: readonly string[];
  /** Added to the child's environment (CODEX_HOME is always the fresh one). */
  env?: Readonly<Record<string, string>>;
  /** Reuse an existing CODEX_HOME (e.g. to resume a thread after a restart); not removed. */
  codexHome?: string;
}

export interface CodexUnderTest extends AsyncDisposable {
  readonly child: ChildProcess;
  /** The native app-server's pid. */
  readonly pid: number;
  readonly binary: string;
  readonly codexHome: string;
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything codex wrote to stderr so far (capped, ANSI kept). */
  stderrText(): string;
  /** Sends a signal to the pid (default SIGKILL). No-op once exited. */
  kill(signal?: NodeJS.Signals): void;
  /** Kills (if needed), waits for exit, removes the CODEX_HOME it created. Idempotent. */
  close(): Promise<void>;
}

/**
 * The codex the real-codex tests run: `$CODEX_BIN` when set (`npm run test:codex -- <version>`
 * sets it), else the pinned one from node_modules; its version as `codex --version` reports it.
 */
export async function codexUnderTest(): Promise<{ path: string; version: string }> {
  const binary = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
  const { stdout } = await promisify(execFile)(binary, ["--version"]);
  return { path: binary, version: /\d+\.\d+\.\d+\S*/.exec(stdout)?.[0] ?? stdout.trim() };
}

/** A fresh folder for CODEX_HOME outside the temp folder (see codex-home.ts). The caller removes it. */
export async function makeCodexHome(): Promise<string> {
  await mkdir(TEST_HOMES, { recursive: true });
  return await mkdtemp(path.join(TEST_HOMES, "home-"));
}

export async function startCodex(options: StartCodexOptions): Promise<CodexUnderTest> {
  const binary = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
  const ownsHome = options.codexHome === undefined;
  const codexHome = options.codexHome ?? await makeCodexHome();
  const home = path.join(codexHome, "user-home");
  await mkdir(home, { recursive: true });
  const args = [
    "app-server",
    ...options.model.codexArgs(options.modelArgs),
    ...options.extraArgs ?? [],
  ];
  const child = spawn(binary, args, {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      LANG: "C.UTF-8",
      RUST_LOG: "warn",
      ...options.env,
      CODEX_HOME: codexHome,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve) => child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once("spawn", () => resolve(undefined));
    child.once("error", resolve);
  });
  if (spawned || child.pid === undefined) {
    if (ownsHome) await rm(codexHome, { recursive: true, force: true });
    throw new Error(`Cannot start codex: ${binary}: ${spawned?.message ?? "no pid"}`);
  }
  const pid = child.pid;
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    if (stderr.length < STDERR_LIMIT) stderr += chunk;
  });
  // A write after the child died must not crash the test process.
  child.stdin.on("error", () => {});
  let exitedYet = false;
  void exited.then(() => (exitedYet = true));
  let closing: Promise<void> | undefined;

  const codex: CodexUnderTest = {
    child,
    pid,
    binary,
    codexHome,
    stdin: child.stdin,
    stdout: child.stdout,
    exited,
    stderrText: () => stderr,
    kill(signal = "SIGKILL") {
      if (exitedYet) return;
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone between the check and the signal.
      }
    },
    close() {
      closing ??= (async () => {
        child.stdin.end();
        codex.kill("SIGKILL");
        await Promise.race([exited, Bun.sleep(EXIT_WAIT_MS)]);
        if (ownsHome) await rm(codexHome, { recursive: true, force: true, maxRetries: 3 });
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => codex.close(),
  };
  return codex;
}

export interface TempWorktree extends AsyncDisposable {
  readonly path: string;
  remove(): Promise<void>;
}

const run = promisify(execFile);

/**
 * A git repository with one commit (README.md), under the OS temp folder: only CODEX_HOME must
 * avoid /tmp; a thread's cwd there works, with and without the sandbox.
 */
export async function makeTempWorktree(): Promise<TempWorktree> {
  const dir = await makeRepository(await mkdtemp(path.join(tmpdir(), "codexd-worktree-")));
  let removed: Promise<void> | undefined;
  const remove = () => (removed ??= rm(dir, { recursive: true, force: true }));
  return { path: dir, remove, [Symbol.asyncDispose]: remove };
}

/** A git repository with one commit (README.md) at `dir`, made if missing. Returns `dir`. */
export async function makeRepository(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const git = (...args: string[]) =>
    run("git", ["-c", "user.name=codexd test", "-c", "user.email=test@codexd.invalid", ...args], {
      cwd: dir,
    });
  await git("init", "-q", "-b", "main");
  await writeFile(path.join(dir, "README.md"), "# scratch\n");
  await git("add", "README.md");
  await git("commit", "-q", "-m", "initial");
  return dir;
}

/** One JSON-RPC line from codex (codex usually omits `"jsonrpc"`). */
export const RpcLine = z.looseObject({
  id: z.union([z.number(), z.string()]).optional(),
  method: z.string().optional(),
  params: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number(), message: z.string() }).optional(),
});
export type RpcLine = z.infer<typeof RpcLine>;

export interface TranscriptEntry {
  dir: "in" | "out";
  msg: unknown;
}

/**
 * Line-level client: writes JSON lines to codex's stdin, collects what comes back. Keeps the full
 * transcript (`dir: "in"` = sent to codex, `"out"` = from codex).
 */
export class LineClient {
  readonly messages: RpcLine[] = [];
  readonly transcript: TranscriptEntry[] = [];
  /** Resolves when codex's stdout ends. */
  readonly closed: Promise<void>;
  #nextId = 1;
  #waiters = new Set<(message: RpcLine) => void>();
  #stdin: Writable;
  #onServerRequest?: (request: RpcLine) => unknown;

  constructor(codex: { stdin: Writable; stdout: Readable }) {
    this.#stdin = codex.stdin;
    let buffer = "";
    codex.stdout.setEncoding("utf8");
    codex.stdout.on("data", (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const line = buffer.slice(0, end).trim();
        buffer = buffer.slice(end + 1);
        if (line !== "") this.#receive(line);
      }
    });
    this.closed = new Promise((resolve) => codex.stdout.once("close", () => resolve()));
  }

  /** Answers every server request (approvals) with `handler(request)`'s result. */
  onServerRequest(handler: (request: RpcLine) => unknown): void {
    this.#onServerRequest = handler;
  }

  send(message: Record<string, unknown>): void {
    this.transcript.push({ dir: "in", msg: message });
    this.#stdin.write(`${JSON.stringify(message)}\n`);
  }

  async request(method: string, params: unknown, timeoutMs = 10_000): Promise<unknown> {
    const id = this.#nextId++;
    this.send({ id, method, params });
    const answer = await this.waitFor((m) => m.id === id && m.method === undefined, timeoutMs);
    if (answer.error) {
      throw new Error(
        `codex answered ${method} with error ${answer.error.code}: ${answer.error.message}`,
      );
    }
    return answer.result;
  }

  notify(method: string, params?: unknown): void {
    this.send(params === undefined ? { method } : { method, params });
  }

  /**
   * `initialize` + `initialized`; returns the initialize result. With the experimental API, as
   * codexd does, so that thread params planned by codexd (experimentalRawEvents) are accepted.
   */
  async initialize(): Promise<unknown> {
    const result = await this.request("initialize", {
      clientInfo: { name: "codexd-test", version: "0.0.0" },
      capabilities: CODEXD_CAPABILITIES,
    });
    this.notify("initialized");
    return result;
  }

  /** `thread/start` with `params`; the new thread's id. */
  async startThread(params: Record<string, unknown>): Promise<string> {
    const started = asRecord(await this.request("thread/start", params));
    return String(asRecord(started.thread).id);
  }

  /** First message (already received or future) that satisfies `predicate`. */
  waitFor(predicate: (message: RpcLine) => boolean, timeoutMs = 10_000): Promise<RpcLine> {
    const found = this.messages.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`No matching message from codex within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (message: RpcLine) => {
        if (!predicate(message)) return;
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        resolve(message);
      };
      this.#waiters.add(waiter);
    });
  }

  /** Like waitFor, for a notification with this method (and optional params check). */
  /** Starts a turn of `text` on `threadId` and waits for its `turn/completed`. */
  async runTurn(threadId: string, text: string, timeoutMs = 30_000): Promise<RpcLine> {
    await this.request("turn/start", {
      threadId,
      input: [{ type: "text", text, text_elements: [] }],
    });
    return await this.waitForNotification(
      "turn/completed",
      (p) => p.threadId === threadId,
      timeoutMs,
    );
  }

  waitForNotification(
    method: string,
    where: (params: Record<string, unknown>) => boolean = () => true,
    timeoutMs?: number,
  ): Promise<RpcLine> {
    return this.waitFor(
      (m) => m.method === method && m.id === undefined && where(asRecord(m.params)),
      timeoutMs,
    );
  }

  #receive(line: string): void {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new Error(`codex wrote a line that is not JSON: ${line.slice(0, 200)}`);
    }
    const message = RpcLine.parse(json);
    this.transcript.push({ dir: "out", msg: json });
    this.messages.push(message);
    for (const waiter of [...this.#waiters]) waiter(message);
    if (message.method !== undefined && message.id !== undefined && this.#onServerRequest) {
      const result = this.#onServerRequest(message);
      if (result !== undefined) this.send({ id: message.id, result });
    }
  }
}

const AnyRecord = z.record(z.string(), z.unknown()).catch({});

/** `value` if it is an object, else `{}` (for poking at params in predicates). */
export function asRecord(value: unknown): Record<string, unknown> {
  return AnyRecord.parse(value);
}

/**
 * One turn on a bare codex, as a positive control: `thread/start` with only the approval policy
 * and sandbox codexd sent before its protections (no profile, no pinned config), every approval
 * accepted. Resolves once the turn completed.
 */
export async function bareCodexTurn(
  options: StartCodexOptions & { cwd: string; prompt: string },
): Promise<void> {
  const { cwd, prompt, ...start } = options;
  await using codex = await startCodex(start);
  const client = new LineClient(codex);
  client.onServerRequest(() => ({ decision: "accept" }));
  await client.initialize();
  const opened = asRecord(
    await client.request("thread/start", {
      cwd,
      approvalPolicy: "untrusted",
      sandbox: "workspace-write",
    }),
  );
  await client.runTurn(String(asRecord(opened.thread).id), prompt);
}

/**
 * A bare codex (startCodex) and a LineClient on it that has done the `initialize` handshake and
 * answers every approval with `decision`: the positive controls' "codex without codexd".
 */
export async function startBareClient(
  options: StartCodexOptions & { decision: "accept" | "decline" },
): Promise<{ client: LineClient } & AsyncDisposable> {
  const codex = await startCodex({ modelArgs: { requestMaxRetries: 0 }, ...options });
  const client = new LineClient(codex);
  client.onServerRequest(() => ({ decision: options.decision }));
  await client.initialize();
  return { client, [Symbol.asyncDispose]: () => codex.close() };
}

/**
 * `codexd serve` configuration: embedded defaults, then the JSONC file (`--config`), then flags.
 * The file is validated with zod; an error names the file, line, column and key, e.g.
 * `codexd.jsonc:4:13: server.port: Too big: expected number to be <=65535`.
 */
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { findNodeAtLocation, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import { z } from "zod";
import { CodexdError } from "../errors.ts";
import { isWithin } from "../paths.ts";
import { codexHomeRoot } from "../provider/codex/codex-home.ts";
import { McpServer } from "../provider/spec.ts";
import { defaultMaxProcesses } from "../provider/codex/process-limit.ts";
import { serversRunningWritableCode } from "../approval/mcp-server-code.ts";
import { realPathOf } from "../approval/spec-guard.ts";
import { DEFAULT_LIMITS } from "./http-edge.ts";

export const DEFAULT_PORT = 7420;

const Host = z.string().min(1);
const ConfigFile = z.strictObject({
  $schema: z.string().optional(),
  server: z.strictObject({
    host: Host.optional(),
    port: z.number().int().min(0).max(65535).optional(),
    tokenFile: z.string().min(1).optional(),
    allowRemote: z.boolean().optional(),
    /** PEM files; required for `allowRemote` (a token is never sent in plain text off the host). */
    tls: z.strictObject({ cert: z.string().min(1), key: z.string().min(1) }).optional(),
    /** More `Host` names clients may use, e.g. the DNS name in the certificate. */
    allowedHosts: z.array(z.string().regex(/^[A-Za-z0-9.:[\]-]+$/)).optional(),
  }).optional(),
  limits: z.strictObject({
    /** Sessions running or idle at once; more get 429. */
    maxLiveSessions: z.number().int().min(1).optional(),
    /** Open SSE event streams at once; more get 429. */
    maxEventStreams: z.number().int().min(1).optional(),
  }).optional(),
  stateDir: z.string().min(1).optional(),
  codex: z.strictObject({
    bin: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    home: z.string().min(1).optional(),
    /**
     * The account codex and every agent command run as when the daemon runs as root: a name,
     * a uid, or `uid:gid`. It must not be able to read the state dir (token, database).
     */
    user: z.string().regex(/^(?:[a-z_][a-z0-9_.-]*\$?|\d+(?::\d+)?)$/i).optional(),
    /**
     * The most processes codex and everything it starts may hold (RLIMIT_NPROC, counted for the
     * account codex runs as); null for no limit (see process-limit.ts).
     */
    maxProcesses: z.number().int().min(64).nullable().optional(),
    /** codex app-server children sessions are spread over (default: see `defaultPoolSize`). */
    pool: z.number().int().min(1).max(64).optional(),
    /** When a child is replaced by a fresh one, its sessions moved between turns (pool.ts). */
    recycle: z.strictObject({
      /** Resident memory of a child, in MiB. */
      maxRssMiB: z.number().int().min(16).optional(),
      /** Threads a child holds loaded beyond its live sessions (codex keeps them 30 min). */
      maxStoppedThreads: z.number().int().min(1).optional(),
      /** How often the limits are checked; 0 turns recycling off. */
      checkIntervalSeconds: z.number().min(0).optional(),
    }).optional(),
  }).optional(),
  policies: z.strictObject({
    dir: z.string().min(1).optional(),
    default: z.string().min(1).optional(),
  }).optional(),
  events: z.strictObject({
    /** Events kept per session (oldest pruned). */
    retention: z.number().int().min(100).optional(),
  }).optional(),
  /**
   * Folders sessions may work in: a spec's cwd (resolved) must be one of them or inside one.
   * Relative to the file.
   */
  worktreeRoots: z.array(z.string().min(1)).optional(),
  /** MCP servers pushed to every codex child through `config/batchWrite`. */
  mcpServers: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), McpServer).optional(),
});
export type ConfigFile = z.infer<typeof ConfigFile>;

export interface ResolvedConfig {
  server: {
    host: string;
    port: number;
    tokenFile?: string;
    allowRemote: boolean;
    /** Absolute paths of the PEM certificate and key. */
    tls?: { cert: string; key: string };
    allowedHosts: string[];
  };
  limits: { maxLiveSessions: number; maxEventStreams: number };
  stateDir: string;
  codex: {
    bin?: string;
    args: string[];
    env: Record<string, string>;
    home: string;
    /** `codex.user` as written; daemon.ts resolves it (see agent-user.ts). */
    user?: string;
    /** RLIMIT_NPROC for codex and its commands (process-limit.ts); null: none. */
    maxProcesses: number | null;
    /** app-server children (see pool.ts). */
    pool: number;
    recycle: { maxRssMiB: number; maxStoppedThreads: number; checkIntervalSeconds: number };
  };
  policies: { dir: string; default: string };
  events: { retention?: number };
  /** Absolute; empty when unrestricted. */
  worktreeRoots: string[];
  /** The config file (`--config`), absolute, when there is one. */
  configFile?: string;
  mcpServers?: Record<string, McpServer>;
  /** Notes for the log (e.g. CODEX_HOME moved out of the temp folder). */
  notes: string[];
}

/** A configuration problem; the CLI prints the message and exits 2. */
export class ConfigError extends CodexdError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("config_invalid", message, options);
  }
}

export interface LoadConfigInput {
  args: string[];
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

const FLAGS = {
  config: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  "state-dir": { type: "string" },
  policies: { type: "string" },
  "allow-remote": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export function loadConfig({ args, cwd, env }: LoadConfigInput): ResolvedConfig {
  let flags;
  try {
    flags = parseArgs({ args, options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error));
  }
  const file = flags.config === undefined ? {} : readConfigFile(path.resolve(cwd, flags.config));
  // Paths in the file are relative to the file; paths in flags to the working folder.
  const fileBase = flags.config === undefined ? cwd : path.dirname(path.resolve(cwd, flags.config));
  const fromFile = (p: string | undefined) =>
    p === undefined ? undefined : path.resolve(fileBase, p);
  const fromCwd = (p: string | undefined) => p === undefined ? undefined : path.resolve(cwd, p);

  let port = file.server?.port ?? DEFAULT_PORT;
  if (flags.port !== undefined) {
    if (!/^\d{1,5}$/.test(flags.port) || Number(flags.port) > 65535) {
      throw new ConfigError(`Invalid --port ${flags.port}: expected an integer from 0 to 65535`);
    }
    port = Number(flags.port);
  }
  const host = flags.host ?? file.server?.host ?? "127.0.0.1";
  const allowRemote = flags["allow-remote"] ?? file.server?.allowRemote ?? false;
  if (!isLoopback(host) && !allowRemote) {
    throw new ConfigError(
      `Refusing to listen on ${host}: it is not a loopback address; pass --allow-remote to allow it`,
    );
  }
  const tls = file.server?.tls && {
    cert: fromFile(file.server.tls.cert)!,
    key: fromFile(file.server.tls.key)!,
  };
  if (allowRemote && !tls) {
    throw new ConfigError(
      "Refusing --allow-remote without TLS: the token would cross the network in plain text; " +
        "set server.tls.cert and server.tls.key (PEM files) in the config file",
    );
  }
  for (const [name, pem] of Object.entries(tls ?? {})) {
    try {
      readFileSync(pem);
    } catch (error) {
      throw new ConfigError(`Cannot read server.tls.${name} ${pem}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  const stateDir = fromCwd(flags["state-dir"]) ?? fromFile(file.stateDir) ??
    path.resolve(cwd, ".codexd");
  const notes: string[] = [];
  const user = file.codex?.user;
  const home = fromFile(file.codex?.home) ??
    (user === undefined
      ? defaultCodexHome(stateDir, env, notes)
      : agentCodexHome(stateDir, env, notes));
  if (user !== undefined) checkAgentPaths(stateDir, home, fromFile(file.server?.tokenFile));
  const tokenFile = fromFile(file.server?.tokenFile);
  const bin = fromFile(file.codex?.bin) ?? env.CODEX_BIN;
  const worktreeRoots = (file.worktreeRoots ?? []).map((p) => path.resolve(fileBase, p));
  checkMcpServerCode(file.mcpServers ?? {}, worktreeRoots);
  return {
    server: {
      host,
      port,
      allowRemote,
      ...(tokenFile !== undefined && { tokenFile }),
      ...(tls && { tls }),
      allowedHosts: file.server?.allowedHosts ?? [],
    },
    limits: {
      maxLiveSessions: file.limits?.maxLiveSessions ?? DEFAULT_LIMITS.maxLiveSessions,
      maxEventStreams: file.limits?.maxEventStreams ?? DEFAULT_LIMITS.maxEventStreams,
    },
    stateDir,
    codex: {
      ...(bin !== undefined && bin !== "" && { bin }),
      args: file.codex?.args ?? [],
      env: file.codex?.env ?? {},
      home,
      ...(user !== undefined && { user }),
      maxProcesses: file.codex?.maxProcesses === undefined
        ? defaultMaxProcesses()
        : file.codex.maxProcesses,
      pool: file.codex?.pool ?? defaultPoolSize(),
      recycle: {
        maxRssMiB: file.codex?.recycle?.maxRssMiB ?? DEFAULT_RECYCLE.maxRssMiB,
        maxStoppedThreads: file.codex?.recycle?.maxStoppedThreads ??
          DEFAULT_RECYCLE.maxStoppedThreads,
        checkIntervalSeconds: file.codex?.recycle?.checkIntervalSeconds ??
          DEFAULT_RECYCLE.checkIntervalSeconds,
      },
    },
    policies: {
      dir: fromCwd(flags.policies) ?? fromFile(file.policies?.dir) ?? path.resolve(cwd, "policies"),
      default: file.policies?.default ?? "default",
    },
    events: { ...(file.events?.retention !== undefined && { retention: file.events.retention }) },
    worktreeRoots,
    ...(flags.config !== undefined && { configFile: path.resolve(cwd, flags.config) }),
    ...(file.mcpServers && { mcpServers: file.mcpServers }),
    notes,
  };
}

/**
 * `codex.pool` when the config names none: half the machine's cores, at least 1 and at most 4
 * (one child per two cores leaves the other core to the daemon and the agents' commands; past 4
 * a child's own threads already use what the cores give). 1 on a 2-core machine.
 */
export function defaultPoolSize(cpus = availableParallelism()): number {
  return Math.min(4, Math.max(1, Math.floor(cpus / 2)));
}

export const DEFAULT_RECYCLE = {
  maxRssMiB: 1024,
  maxStoppedThreads: 100,
  checkIntervalSeconds: 30,
} as const;

/** Reads and validates a JSONC config file; errors carry `file:line:column`. */
export function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`Cannot read config ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || tree === undefined) {
    const first = errors[0];
    const where = first ? location(text, first.offset) : "1:1";
    const what = first ? printParseErrorCode(first.error) : "empty file";
    throw new ConfigError(`${file}:${where}: invalid JSONC: ${what}`);
  }
  const parsed = ConfigFile.safeParse(nodeValue(tree));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  // Point at the deepest node that exists: the key itself, or the object missing it.
  let keyPath = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
  if (issue.code === "unrecognized_keys") keyPath = [...keyPath, issue.keys[0]!];
  let node = findNodeAtLocation(tree, keyPath);
  for (let n = keyPath.length - 1; !node && n >= 0; n--) {
    node = findNodeAtLocation(tree, keyPath.slice(0, n));
  }
  // For a property, point at its key rather than its value.
  const offset = node?.parent?.type === "property" && issue.code === "unrecognized_keys"
    ? node.parent.offset
    : node?.offset ?? 0;
  const key = keyPath.join(".") || "(root)";
  throw new ConfigError(`${file}:${location(text, offset)}: ${key}: ${issue.message}`);
}

/** `line:column`, both 1-based. */
function location(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return `${line}:${offset - lineStart + 1}`;
}

type JsonNode = NonNullable<ReturnType<typeof parseTree>>;

/** The plain value of a parse tree (jsonc-parser's getNodeValue, without its `any`). */
function nodeValue(node: JsonNode): unknown {
  switch (node.type) {
    case "object":
      return Object.fromEntries(
        (node.children ?? []).map((prop) => [
          String(prop.children![0]!.value),
          prop.children![1] ? nodeValue(prop.children![1]) : undefined,
        ]),
      );
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value as unknown;
  }
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * `<stateDir>/codex-home`, unless the state dir is in the temp folder, where codex refuses its
 * helper links (see codex-home.ts): then a folder in the user's cache, one per state dir.
 */
function defaultCodexHome(
  stateDir: string,
  env: Readonly<Record<string, string | undefined>>,
  notes: string[],
): string {
  const preferred = path.join(stateDir, "codex-home");
  const id = createHash("sha256").update(stateDir).digest("hex").slice(0, 16);
  const home = codexHomeRoot(preferred, path.join("codex-homes", id), env);
  if (home !== preferred) notes.push(`state dir is in the temp folder; CODEX_HOME is ${home}`);
  return home;
}

/**
 * The codex home of a separate agent user: it must be that user's and so outside the state dir
 * (0700, the daemon's): `<stateDir>-codex-home` beside it (or in the cache when the state dir is
 * in the temp folder, as for the default).
 */
function agentCodexHome(
  stateDir: string,
  env: Readonly<Record<string, string | undefined>>,
  notes: string[],
): string {
  const preferred = `${stateDir}-codex-home`;
  const id = createHash("sha256").update(stateDir).digest("hex").slice(0, 16);
  const home = codexHomeRoot(preferred, path.join("codex-homes", `${id}-agent`), env);
  if (home !== preferred) notes.push(`state dir is in the temp folder; CODEX_HOME is ${home}`);
  return home;
}

/**
 * The daemon's MCP servers start outside the sandbox for every session: none may run code from a
 * folder under `worktreeRoots`, which sessions' commands write (approval/mcp-server-code.ts).
 */
function checkMcpServerCode(servers: Record<string, McpServer>, worktreeRoots: string[]): void {
  const [found] = serversRunningWritableCode(servers, worktreeRoots, realPathOf);
  if (found === undefined) return;
  throw new ConfigError(
    `Cannot use mcpServers.${found.server}.${found.field}: ${JSON.stringify(found.word)} names ` +
      `${found.root}, under worktreeRoots: an MCP server starts outside the sandbox and would ` +
      "run what sessions' commands wrote there; install it outside every worktree",
  );
}

/**
 * With `codex.user` the codex home is handed to that user, so it may neither hold nor sit inside
 * what the user must not read: the state dir and the token file.
 */
function checkAgentPaths(stateDir: string, home: string, tokenFile: string | undefined): void {
  if (isWithin(home, stateDir) || isWithin(stateDir, home)) {
    throw new ConfigError(
      `codex.home ${home} and the state dir ${stateDir} overlap: with codex.user the codex home ` +
        `belongs to that user, the state dir (token, database) must stay out of its reach`,
    );
  }
  if (tokenFile !== undefined && isWithin(tokenFile, home)) {
    throw new ConfigError(
      `server.tokenFile ${tokenFile} is inside codex.home ${home}, which codex.user owns`,
    );
  }
}

export interface LoadedToken {
  token: string;
  path: string;
  created: boolean;
}

/**
 * The API token: from `tokenFile` when configured (it must exist), else `<stateDir>/token`,
 * generated at first start (32 random bytes, hex) with mode 0600.
 */
export function loadOrCreateToken(stateDir: string, tokenFile?: string): LoadedToken {
  const file = tokenFile ?? path.join(stateDir, "token");
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim();
    if (token.length < 16) {
      throw new ConfigError(
        `Cannot use token file ${file}: the token is shorter than 16 characters`,
      );
    }
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return { token, path: file, created: false };
  }
  if (tokenFile !== undefined) {
    throw new ConfigError(`Cannot read token file ${file}: it does not exist`);
  }
  const token = randomBytes(32).toString("hex");
  writeFileSync(file, token + "\n", { mode: 0o600, flag: "wx" });
  return { token, path: file, created: true };
}

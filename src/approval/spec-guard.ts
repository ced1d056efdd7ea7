/**
 * The fleet policy governs the spec. Before a session is spawned or resumed, everything the spec
 * asks for around its prompt is checked against the session's policy and a built-in floor no
 * policy can lift:
 *
 * - `env` (and each MCP server's `env`): never a name on the floor (env-floor.ts), and only names
 *   the policy's `spec.env.allow` globs admit;
 * - `mcpServers`: only where the policy says `spec.mcpServers: allow`, and each server's command
 *   line judged by the engine under the policy like a command an agent runs (built-in rules,
 *   deny, allow-list, ask, default); it must be allowed outright, as nobody is there to ask;
 *   and no word of it may name a path inside the worktree or a worktree root (the floor:
 *   mcp-server-code.ts);
 * - `sandbox`: no looser than the policy's `spec.maxSandbox` (an unnamed sandbox becomes
 *   read-only where that is the limit); `permissionMode: bypassPermissions` only under
 *   `allowBypass: true`;
 * - `webSearch`: no more than the policy's `spec.maxWebSearch` (`disabled` unless it says);
 * - `permissionConfig.defaultDecision`: no looser than the policy's default (the engine also
 *   only lets the spec narrow; see engine.ts);
 * - `cwd`: resolved (symlinks, `..`) to a real folder that is not `/`, a system folder, a home
 *   folder itself or a hidden folder of the daemon user's home (`~/.config`, `~/.local/bin`), a
 *   folder of the daemon's PATH (or one holding it), the daemon's state dir, codex home or
 *   policies folder (nor inside or around them), no folder holding the daemon's config or token
 *   file, and inside the configured `worktreeRoots` when there are any.
 *
 * The check is a function of its inputs and the file system (realpath); it returns every refusal,
 * each naming the spec field and a rule id, and the spec to use (cwd resolved).
 */
import { realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { CodexdError } from "../errors.ts";
import { isWithin } from "../paths.ts";
import type { Spec, WebSearchMode } from "../provider/spec.ts";
import type { ShellAnalyzer } from "./analyzer.ts";
import type { CompiledPolicy } from "./compiled-policy.ts";
import { type EngineDecision, evaluate } from "./engine.ts";
import { envFloorReason, envGlobMatches } from "./env-floor.ts";
import { serversRunningWritableCode } from "./mcp-server-code.ts";
import type { PolicyDecision, SandboxMode } from "./policy-schema.ts";

/** What the daemon knows that a spec must keep away from. */
export interface SpecGuardContext {
  /** The daemon's state dir (token, database). */
  stateDir?: string;
  /** codex's CODEX_HOME. */
  codexHome?: string;
  /** The fleet policies folder (an agent that could edit it could loosen its own policy). */
  policiesDir?: string;
  /** Files of the daemon outside the state dir: its config file, the token file. */
  daemonFiles?: readonly string[];
  /** When non-empty, every cwd must be one of these folders or inside one. */
  worktreeRoots?: readonly string[];
  /** The daemon user's home folder (default: `os.homedir()`). */
  home?: string;
  /** The agent account's home (`codex.user`): its commands' HOME, guarded as `home` is. */
  agentHome?: string;
  /** The folders of the daemon's PATH (default: `process.env.PATH`'s). */
  pathDirs?: readonly string[];
}

export interface SpecRefusal {
  /** Dotted path of the spec field: `env.BASH_ENV`, `mcpServers.x.command`, `cwd`. */
  path: string;
  /** A stable rule id: `env.floor`, `cwd.system`, ... */
  rule: string;
  message: string;
}

export interface SpecGuardResult {
  refusals: SpecRefusal[];
  /** The spec to run: `cwd` resolved to its real path. */
  spec: Spec;
}

/** A spec its policy (or the floor) refuses. → 400 with one detail per refusal. */
export class SpecRefused extends CodexdError {
  readonly field: string;
  readonly issues: SpecRefusal[];
  constructor(action: string, refusals: SpecRefusal[]) {
    const first = refusals[0];
    const more = refusals.length > 1 ? ` (and ${refusals.length - 1} more)` : "";
    super(
      "invalid_input",
      `Cannot ${action}: ${first.path}: ${first.message} (rule ${first.rule})${more}`,
    );
    this.field = first.path;
    this.issues = refusals;
  }
}

const SANDBOX_ORDER: Record<SandboxMode, number> = {
  "read-only": 0,
  "workspace-write": 1,
  "danger-full-access": 2,
};
const STRICTNESS: Record<PolicyDecision, number> = { deny: 0, ask: 1, allow: 2 };

/** Checks a spec against its policy and the floor; see the module comment. */
export function guardSpec(
  spec: Spec,
  policy: CompiledPolicy,
  analyzer: ShellAnalyzer,
  context: SpecGuardContext = {},
): SpecGuardResult {
  const refusals: SpecRefusal[] = [];
  const refuse = (path: string, rule: string, message: string) =>
    refusals.push({ path, rule, message });

  const cwd = checkCwd(spec.cwd, context, refuse);
  const guarded: Spec = { ...spec, cwd: cwd ?? spec.cwd };
  // A spec that names no sandbox gets workspace-write (plan.ts); under a policy whose limit is
  // read-only it gets read-only instead.
  const bypassing = spec.permissionMode === "bypassPermissions" && policy.merged.allowBypass;
  if (spec.sandbox === undefined && !bypassing && policy.merged.spec.maxSandbox === "read-only") {
    guarded.sandbox = "read-only";
  }

  checkEnv(spec.env ?? {}, "env", policy, refuse);
  checkPermissions(spec, policy, refuse);
  checkWebSearch(spec, policy, refuse);
  checkMcpServers(guarded, policy, analyzer, refuse);
  checkMcpServerCode(spec, guarded, context, refuse);
  return { refusals, spec: guarded };
}

/** {@link guardSpec}, throwing {@link SpecRefused} when anything is refused. */
export function guardSpecOrThrow(
  action: string,
  spec: Spec,
  policy: CompiledPolicy,
  analyzer: ShellAnalyzer,
  context: SpecGuardContext = {},
): Spec {
  const result = guardSpec(spec, policy, analyzer, context);
  if (result.refusals.length > 0) throw new SpecRefused(action, result.refusals);
  return result.spec;
}

type Refuse = (path: string, rule: string, message: string) => void;

const WEB_SEARCH_ORDER: Record<WebSearchMode, number> = { disabled: 0, cached: 1, live: 2 };

function checkWebSearch(spec: Spec, policy: CompiledPolicy, refuse: Refuse): void {
  const max = policy.merged.spec.maxWebSearch;
  if (spec.webSearch === undefined || WEB_SEARCH_ORDER[spec.webSearch] <= WEB_SEARCH_ORDER[max]) {
    return;
  }
  refuse(
    "webSearch",
    "webSearch.max",
    `web search ${spec.webSearch} runs outside the sandbox and is more than policy ` +
      `${policy.name} allows (spec.maxWebSearch: ${max})`,
  );
}

function checkEnv(
  env: Record<string, string>,
  at: string,
  policy: CompiledPolicy,
  refuse: Refuse,
): void {
  const allow = policy.merged.spec.envAllow;
  for (const name of Object.keys(env)) {
    const floor = envFloorReason(name);
    if (floor !== undefined) {
      refuse(`${at}.${name}`, "env.floor", `${floor}: no policy can allow it`);
    } else if (!allow.some((glob) => envGlobMatches(glob, name))) {
      refuse(
        `${at}.${name}`,
        "env.not-allowed",
        `policy ${policy.name} does not let a spec set ${name} (spec.env.allow: ${
          allow.length === 0 ? "none" : allow.join(", ")
        })`,
      );
    }
  }
}

function checkPermissions(spec: Spec, policy: CompiledPolicy, refuse: Refuse): void {
  const bypass = spec.permissionMode === "bypassPermissions";
  if (bypass && !policy.merged.allowBypass) {
    refuse(
      "permissionMode",
      "permissionMode.bypass",
      `bypassPermissions would let codex run commands without asking; policy ${policy.name} ` +
        "does not say allowBypass: true",
    );
  }
  const max = policy.merged.spec.maxSandbox;
  // A session that may bypass approvals altogether runs unsandboxed by default anyway.
  const bypassing = bypass && policy.merged.allowBypass;
  if (
    spec.sandbox !== undefined && !bypassing && SANDBOX_ORDER[spec.sandbox] > SANDBOX_ORDER[max]
  ) {
    refuse(
      "sandbox",
      "sandbox.max",
      `sandbox ${spec.sandbox} is looser than policy ${policy.name} allows (spec.maxSandbox: ${max})`,
    );
  }
  const fromSpec = spec.permissionConfig?.defaultDecision;
  const policyDefault = policy.merged.default;
  if (fromSpec !== undefined && STRICTNESS[fromSpec] > STRICTNESS[policyDefault]) {
    refuse(
      "permissionConfig.defaultDecision",
      "permissionConfig.narrow-only",
      `defaultDecision ${fromSpec} is looser than the default of policy ${policy.name} ` +
        `(${policyDefault}); a spec can only narrow its policy`,
    );
  }
}

function checkMcpServers(
  spec: Spec,
  policy: CompiledPolicy,
  analyzer: ShellAnalyzer,
  refuse: Refuse,
): void {
  for (const [name, server] of Object.entries(spec.mcpServers ?? {})) {
    const at = `mcpServers.${name}`;
    if (policy.merged.spec.mcpServers !== "allow") {
      refuse(
        at,
        "mcpServers.not-allowed",
        `policy ${policy.name} does not let a spec start MCP servers (spec.mcpServers: deny); ` +
          "they would run outside the sandbox",
      );
      continue;
    }
    const line = shellLine([server.command, ...server.args]);
    // Judged by the policy alone: the spec's permissionMode and permissionConfig are about the
    // commands its agent runs, and a spec cannot vouch for its own server.
    let decided: EngineDecision;
    try {
      decided = evaluate(
        policy,
        { kind: "command", command: line, cwd: spec.cwd },
        { worktree: spec.cwd, permissionMode: "default" },
        analyzer,
      );
    } catch (error) {
      // Fail closed, as the bridge does: what cannot be judged does not run.
      decided = {
        decision: "deny",
        ruleId: "engine-error",
        source: "default",
        reason: `cannot judge it: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    if (decided.decision !== "allow") {
      refuse(
        `${at}.command`,
        "mcpServers.command",
        `policy ${policy.name} ${decided.decision === "ask" ? "would ask about" : "denies"} ` +
          `the server's command line ${JSON.stringify(line)} (rule ${decided.ruleId ?? "?"}: ` +
          `${decided.reason}); an MCP server starts unsandboxed with nobody to ask, so it must ` +
          "be allowed outright",
      );
    }
    checkEnv(server.env, `${at}.env`, policy, refuse);
  }
}

/**
 * No MCP server of the spec runs code from a folder the session's commands write: its worktree,
 * and every worktree root (mcp-server-code.ts says why).
 */
function checkMcpServerCode(
  given: Spec,
  guarded: Spec,
  context: SpecGuardContext,
  refuse: Refuse,
): void {
  const roots = [given.cwd, guarded.cwd, ...context.worktreeRoots ?? []].map((p) =>
    path.resolve(p)
  );
  for (const found of serversRunningWritableCode(guarded.mcpServers ?? {}, roots, realPathOf)) {
    refuse(
      `mcpServers.${found.server}.${found.field}`,
      "mcpServers.writable-code",
      `${JSON.stringify(found.word)} names ${found.root}, which the session's commands can ` +
        "write: an MCP server starts outside the sandbox and would run what they wrote there; " +
        "install the server outside every worktree (a server that only reads the worktree can " +
        "get the folder through its env)",
    );
  }
}

/** argv as one shell line, quoted so the analyzer reads back exactly these words. */
export function shellLine(argv: readonly string[]): string {
  return argv.map((word) =>
    /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
  ).join(" ");
}

// ---------------------------------------------------------------------------------------------
// cwd

/** Folders that are refused along with everything inside them. */
const SYSTEM_TREES = [
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/proc",
  "/root",
  "/run",
  "/sbin",
  "/snap",
  "/sys",
  "/usr",
  "/var",
  "/System",
  "/Library",
  "/private/etc",
  "/private/var",
];
/** Temp areas inside a system tree: refused themselves, their subfolders allowed. */
const TEMP_INSIDE_TREES = ["/var/tmp", "/private/var/tmp", "/private/var/folders"];
/** Folders that hold everybody's folders: refused themselves, their subfolders allowed. */
const SHARED_ROOTS = [
  "/",
  "/home",
  "/tmp",
  "/mnt",
  "/media",
  "/opt",
  "/srv",
  "/nix",
  "/Users",
  "/Volumes",
  "/Applications",
  "/private",
  "/private/tmp",
  ...TEMP_INSIDE_TREES,
];
/** Folders whose direct subfolders are people's homes. */
const HOME_PARENTS = ["/home", "/Users"];

/** The real path of `p`, or of its deepest existing ancestor with the rest appended. */
export function realPathOf(p: string): string {
  const absolute = path.resolve(p);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = path.dirname(absolute);
    return parent === absolute ? absolute : path.join(realPathOf(parent), path.basename(absolute));
  }
}

function checkCwd(cwd: string, context: SpecGuardContext, refuse: Refuse): string | undefined {
  let real: string;
  try {
    real = realpathSync(path.resolve(cwd));
    if (!statSync(real).isDirectory()) {
      refuse("cwd", "cwd.not-directory", `${cwd} is not a folder`);
      return undefined;
    }
  } catch (error) {
    refuse(
      "cwd",
      "cwd.unresolvable",
      `cannot resolve ${cwd}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
  const shown = real === cwd ? cwd : `${cwd} (${real})`;
  if (real === "/") {
    refuse("cwd", "cwd.root", "the filesystem root cannot be a worktree");
    return real;
  }
  const tempInside = TEMP_INSIDE_TREES.some((t) => isWithin(real, t) && real !== t);
  const tree = SYSTEM_TREES.find((t) => isWithin(real, t));
  if (tree !== undefined && !tempInside) {
    refuse("cwd", "cwd.system", `${shown} is the system folder ${tree} or inside it`);
    return real;
  }
  if (SHARED_ROOTS.includes(real)) {
    refuse("cwd", "cwd.system", `${shown} holds other folders than one worktree: use a subfolder`);
    return real;
  }
  const homes = [context.home ?? homedir(), ...(context.agentHome ? [context.agentHome] : [])]
    .map(realPathOf);
  if (
    homes.some((home) => isWithin(home, real)) || HOME_PARENTS.includes(path.dirname(real))
  ) {
    refuse("cwd", "cwd.home", `${shown} is a home folder or contains one: use a subfolder`);
    return real;
  }
  // The session's cwd is writable to its commands: a home's hidden folders hold what programs
  // run or obey for the home's user (~/.config/git/config, which codex's own git reads too;
  // ~/.config/systemd/user, ~/.local/bin).
  for (const home of homes) {
    const hidden = path.relative(home, real).split(path.sep)[0];
    if (isWithin(real, home) && hidden?.startsWith(".")) {
      refuse(
        "cwd",
        "cwd.home-hidden",
        `${shown} is inside ${path.join(home, hidden)}, where programs keep their configuration`,
      );
      return real;
    }
  }
  // ... and a program written into a folder of the daemon's PATH runs for whoever looks it up.
  const pathDirs = context.pathDirs ?? (process.env.PATH ?? "").split(path.delimiter);
  for (const dir of pathDirs) {
    if (!path.isAbsolute(dir)) continue;
    const onPath = realPathOf(dir);
    if (isWithin(onPath, real)) {
      refuse("cwd", "cwd.path", `${shown} is or contains ${onPath}, a folder of the daemon's PATH`);
      return real;
    }
  }
  for (
    const [dir, rule, what] of [
      [context.stateDir, "cwd.state-dir", "the daemon's state dir (token, database)"],
      [context.codexHome, "cwd.codex-home", "codex's home (its configuration and sessions)"],
      [context.policiesDir, "cwd.policies", "the fleet policies folder"],
    ] as const
  ) {
    if (dir === undefined) continue;
    const protectedDir = realPathOf(dir);
    if (isWithin(real, protectedDir) || isWithin(protectedDir, real)) {
      refuse("cwd", rule, `${shown} is, is inside or contains ${what} ${protectedDir}`);
      return real;
    }
  }
  for (const file of context.daemonFiles ?? []) {
    const protectedFile = realPathOf(file);
    if (isWithin(protectedFile, real)) {
      refuse("cwd", "cwd.daemon-files", `${shown} contains the daemon's file ${protectedFile}`);
      return real;
    }
  }
  const roots = context.worktreeRoots ?? [];
  if (roots.length > 0 && !roots.some((root) => isWithin(real, realPathOf(root)))) {
    refuse(
      "cwd",
      "cwd.worktree-roots",
      `${shown} is not inside the configured worktreeRoots (${roots.join(", ")})`,
    );
  }
  return real;
}

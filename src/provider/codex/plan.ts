/**
 * Spec → codex params: a pure translation, table-tested. `planSpawn` decides every codex setting a
 * session starts with; nothing else in the provider invents thread or turn parameters.
 */
import { CORE_ENV_NAMES, LOCALE_PREFIX } from "./child-env.ts";
import path from "node:path";
import type { McpServer, PermissionMode, Spec, WebSearchMode } from "../spec.ts";
import type { IgnoredField, PlanOptions } from "../types.ts";

export type ApprovalPolicy = "untrusted" | "on-request" | "never";
export type SandboxMode = "read-only" | "workspace-write" | "danger-full-access";

export interface ThreadStartParams {
  cwd: string;
  approvalPolicy: ApprovalPolicy;
  /** Always `user`: codex's own reviewers (`auto_review`, guardian) would decide without us. */
  approvalsReviewer: "user";
  /**
   * Sent only for `danger-full-access`. The sandboxed modes are a permission profile in `config`
   * (`sandboxProfileConfig`): with this parameter codex would drop the profile's entries.
   */
  sandbox?: SandboxMode;
  model?: string;
  baseInstructions?: string;
  developerInstructions?: string;
  /** Always sent: the pinned settings below, then the spec's MCP servers. */
  config: Record<string, unknown>;
  /**
   * thread/start only (thread/resume has no such field): raw items show each tool call's
   * sandbox request (escalation.ts).
   */
  experimentalRawEvents?: true;
}

export interface TextInput {
  type: "text";
  text: string;
  text_elements: never[];
}

export interface TurnStartParams {
  threadId: string;
  input: TextInput[];
  effort?: string;
}

export interface ConfigBatchWriteParams {
  edits: Array<{ keyPath: string; value: unknown; mergeStrategy: "replace" | "upsert" }>;
  reloadUserConfig: boolean;
}

export interface SpawnPlan {
  threadStart: ThreadStartParams;
  /** The first turn's params; `threadId` is filled in once `thread/start` answered. */
  firstTurn: Omit<TurnStartParams, "threadId">;
  /** Daemon-wide MCP servers pushed once per provider lifetime (`config/batchWrite`). */
  mcpConfigEdit?: ConfigBatchWriteParams;
  ignoredFields: IgnoredField[];
}

export interface CodexPlanOptions extends PlanOptions {
  /** Daemon-wide MCP servers from the configuration. */
  daemonMcpServers?: Record<string, McpServer>;
  /**
   * Other spellings of `cwd` codex may look its trust up by (its realpath when it differs);
   * each gets the same `untrusted` entries as `cwd`.
   */
  cwdAliases?: readonly string[];
  /** Absolute paths the sandbox denies every command reads of (read-denied.ts). */
  readDenied?: readonly string[];
  /** Absolute paths the sandbox keeps read-only for every command: the cwd's git folders (git-dirs.ts). */
  readOnly?: readonly string[];
  /** The folder MCP servers start in (session-tmp.ts `mcpCwd`); `/` when not given. */
  mcpCwd?: string;
}

/**
 * The codex features that decide whether codex asks before acting, pinned on every thread start
 * and resume so a codex whose defaults change (or a config layer) cannot switch them:
 * - `unified_exec`: commands run through `exec_command` (and its approval request), with
 *   `write_stdin` for running terminals;
 * - `write_stdin_approval`: input typed into a running terminal with escalated permissions is
 *   sent for approval (`kind: "writeStdin"`) instead of passing unseen;
 * - `tool_call_mcp_elicitation`: MCP tool-call approvals come as `mcpServer/elicitation/request`,
 *   which the bridge judges (not as a free-form user-input question);
 * - `skill_mcp_dependency_install` off: a skill (which a repository can ship) never gets codex to
 *   install and start the MCP servers it names; MCP servers come from the spec and the config;
 * - `multi_agent` and `multi_agent_v2` off: a sub-agent is a thread of codex's own that codexd
 *   does not govern (its approval requests name no session, so every command it tries is
 *   rejected; its events and token usage reach no journal and no budget), so the model gets no
 *   tool to spawn one (test/provider/codex/agent-tools.test.ts);
 * - `request_permissions_tool` and `exec_permission_approvals` off: the model asking for a wider
 *   sandbox (src/approval/permission-grants.ts says what the bridge would grant: network access
 *   at most); off in codex 0.169 already, pinned so a codex that turns them on does not offer them;
 * - `goals` off: a goal the model creates (`create_goal`) has codex start turns by itself once the
 *   runner's turn ended, until the goal is met or its own token budget runs out: turns the runner
 *   never asked for, running while the session looks idle (the handle refuses any such turn,
 *   handle.ts `#refuseTurn`; test/provider/codex/agent-tools.test.ts);
 * - `shell_snapshot` off: codex took its snapshot by running the account's login profile outside
 *   the sandbox with the worktree as its cwd, so a profile hook acting on its folder (rvm's
 *   `.rvmrc`, autoenv's `.env`) ran the repository's file unsandboxed
 *   (test/provider/codex/login-shell-env.test.ts); with `allow_login_shell = false` (pinnedConfig)
 *   commands run a plain `bash -c`, and no profile is read at all.
 * The drift check (protocol-usage.ts) verifies each name exists in the installed codex.
 */
export const PINNED_FEATURES: Readonly<Record<string, boolean>> = Object.freeze({
  unified_exec: true,
  write_stdin_approval: true,
  tool_call_mcp_elicitation: true,
  skill_mcp_dependency_install: false,
  multi_agent: false,
  multi_agent_v2: false,
  request_permissions_tool: false,
  exec_permission_approvals: false,
  goals: false,
  shell_snapshot: false,
});

/**
 * codex's web search unless the spec asks for it (within its policy's `spec.maxWebSearch`): off.
 * The search runs at the model provider, outside the sandbox whose network is off, so a query
 * (or, live, a page fetched from a URL the model chose) would carry what an agent read in the
 * worktree to any address on the internet.
 */
export const DEFAULT_WEB_SEARCH: WebSearchMode = "disabled";

/**
 * What agent commands inherit from codex's own environment (codex's `include_only` patterns:
 * `*` wildcards, matched case-insensitively). codex itself keeps its whole environment (its API
 * key); its commands get only these, plus the spec's `env`.
 */
export const COMMAND_ENV_INHERITED: readonly string[] = Object.freeze([
  ...CORE_ENV_NAMES,
  `${LOCALE_PREFIX}*`,
]);

/** Never inherited by a command, even if a later codex ignored `include_only`. */
export const COMMAND_ENV_EXCLUDED: readonly string[] = Object.freeze(["OPENAI_*", "CODEX_*"]);

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * codex's `shell_environment_policy` for a session: start from codex's environment, drop
 * anything named like a secret (`*KEY*`, `*SECRET*`, `*TOKEN*`) and codex's / OpenAI's own
 * variables, add the spec's `env`, then keep only the allow-list and the spec's names. Nothing a
 * shell profile sets adds to it: codex takes no shell snapshot and starts no login shell
 * (`shell_snapshot` off, `allow_login_shell = false`, see pinnedConfig).
 */
export function commandEnvPolicy(env: Readonly<Record<string, string>> = {}): Record<
  string,
  unknown
> {
  const specNames = Object.keys(env).filter((name) => ENV_NAME.test(name));
  return {
    inherit: "all",
    ignore_default_excludes: false,
    exclude: [...COMMAND_ENV_EXCLUDED],
    set: { ...COMMAND_ENV_SET, ...env },
    include_only: [...COMMAND_ENV_INHERITED, ...Object.keys(COMMAND_ENV_SET), ...specNames],
  };
}

/**
 * Set for every command. `SHLVL=1`: bash sources `~/.bashrc` for a `bash -c` whose stdin is a
 * socket, as codex starts commands (bash takes itself for a command run over ssh), unless SHLVL
 * says it is nested; the sandbox denies reading that file (read-denied.ts), so without this every
 * command's output would start with "bash: …/.bashrc: Permission denied".
 */
export const COMMAND_ENV_SET: Readonly<Record<string, string>> = Object.freeze({ SHLVL: "1" });

/**
 * `projects` entries marking `cwd`, every folder above it and the same for each alias
 * `untrusted`. codex loads a worktree's `.codex/` (config.toml, hooks, exec-policy rules) only for
 * a trusted project, and on `thread/start` it marks a project trusted by itself (persisting it in
 * its home's config.toml) when no trust level is configured for it. An explicit `untrusted` for
 * the folder, its project root and its git root (all of them are above or at `cwd`) leaves
 * nothing to decide: no file in the worktree changes codex's configuration, and nothing is
 * written to the codex home. (codex 0.169 also reads a project's AGENTS.md only when it is
 * trusted, so the worktree's AGENTS.md does not reach the model either.)
 */
export function untrustedProjects(
  cwd: string,
  aliases: readonly string[] = [],
): Record<string, { trust_level: "untrusted" }> {
  const projects: Record<string, { trust_level: "untrusted" }> = {};
  for (const start of [cwd, ...aliases]) {
    let dir = path.resolve(start);
    while (true) {
      projects[dir] = { trust_level: "untrusted" };
      const parent = path.dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return projects;
}

/**
 * Skills codex shows the model: none. codex 0.169 lists every skill it finds in the prompt, the
 * worktree's `.agents/skills/*` and `.codex/skills/*` included, even in a project marked
 * `untrusted` (whose AGENTS.md it does not read): a repository's own text would reach the model
 * as codex's instructions. `include_instructions` off drops the whole list: codex's bundled
 * skills and those of HOME's `.agents/skills` go too (test/provider/codex/repo-skills.test.ts).
 */
export const PINNED_SKILLS: Readonly<Record<string, boolean>> = Object.freeze({
  include_instructions: false,
});

/**
 * The `config` overrides every `thread/start` and `thread/resume` sends, before the spec's MCP
 * servers: worktree config off, the command environment, the pinned features, no skills, no web
 * search, no login shells (see PINNED_FEATURES' `shell_snapshot`).
 */
export function pinnedConfig(
  cwd: string,
  env: Readonly<Record<string, string>> | undefined,
  aliases: readonly string[] = [],
  webSearch: WebSearchMode = DEFAULT_WEB_SEARCH,
): Record<string, unknown> {
  return {
    projects: untrustedProjects(cwd, aliases),
    shell_environment_policy: commandEnvPolicy(env),
    features: { ...PINNED_FEATURES },
    skills: { ...PINNED_SKILLS },
    web_search: webSearch,
    allow_login_shell: false,
  };
}

/** Every Spec field, and how codexd handles it: translated for codex, or why not. */
export const SPEC_FIELD_HANDLING: Record<
  keyof Spec,
  { translatedTo: string } | { reason: string }
> = {
  prompt: { translatedTo: "turn/start input[0].text" },
  cwd: { translatedTo: "thread/start cwd" },
  model: { translatedTo: "thread/start model" },
  baseInstructions: { translatedTo: "thread/start baseInstructions" },
  developerInstructions: { translatedTo: "thread/start developerInstructions" },
  reasoningEffort: { translatedTo: "turn/start effort" },
  sandbox: {
    translatedTo: "thread/start config default_permissions (sandbox: danger-full-access)",
  },
  webSearch: { translatedTo: "thread/start config web_search" },
  permissionMode: { translatedTo: "thread/start approvalPolicy and default_permissions" },
  mcpServers: { translatedTo: "thread/start config mcp_servers.<name>" },
  env: { translatedTo: "thread/start config shell_environment_policy.set (and include_only)" },
  policy: { reason: "enforced by codexd's approval bridge, not sent to codex" },
  permissionConfig: { reason: "enforced by codexd's approval bridge, not sent to codex" },
  timeoutMs: { reason: "enforced by codexd as each turn's hard deadline" },
  onBusy: { reason: "decides how codexd queues follow-up turns" },
  metadata: { reason: "stored and listed by codexd, opaque to codex" },
  budget: { reason: "enforced by codexd from codex's token usage reports" },
};

/** The permission profile codexd defines on every sandboxed thread (`sandboxProfileConfig`). */
export const SANDBOX_PROFILE = "codexd";

/**
 * A path that does not exist, denied to reads in codexd's permission profile. It hides nothing:
 * it is there so that codex never runs an approved command outside the sandbox (see below).
 */
export const SANDBOX_GUARD_PATH = "/nonexistent/codexd-sandbox-guard";

const PROFILE_BASE: Readonly<Record<"read-only" | "workspace-write", string>> = Object.freeze({
  "read-only": ":read-only",
  "workspace-write": ":workspace",
});

/**
 * The `config` that gives a thread the `read-only` or `workspace-write` sandbox as a permission
 * profile (codex's built-in `:read-only` / `:workspace`) with deny-read entries: the guard below,
 * and `readDenied` (credentials and codexd's own files, read-denied.ts); and read-only entries,
 * `readOnly` (the cwd's git folders, which codex's own unsandboxed git obeys: git-dirs.ts).
 *
 * Why not thread/start's `sandbox`: under `untrusted`, once a command was approved, codex 0.169
 * runs it again WITHOUT any sandbox, and without asking again, when the sandboxed run fails the
 * way a sandbox denial looks (a quick non-zero exit with "Read-only file system", "Permission
 * denied", "Operation not permitted", ... in its output): codex-rs/core/src/tools/orchestrator.rs,
 * "retry with an escalated sandbox strategy on denial", the approval counting as given. So a
 * command the bridge allows (`npm test` running the repository's code) could leave the sandbox
 * by failing that way first (with `read-only`, every such failure tried got out). codex refuses
 * that unsandboxed run when the filesystem policy denies any read (`unsandboxed_execution_allowed`
 * is `!has_denied_read_restrictions()`: running unsandboxed would lift the deny), and keeps the
 * command's sandboxed result. thread/start's `sandbox` replaces the profile's entries, so it is
 * not sent with the profile. Every command still asks for approval (`untrusted` is unchanged).
 *
 * Not covered, and not coverable from here in codex 0.169: a command the model sends with
 * `sandbox_permissions: "require_escalated"` runs unsandboxed once approved, and its approval
 * request looks like any other (test/provider/codex/approved-sandbox.test.ts documents both).
 */
export function sandboxProfileConfig(
  sandbox: "read-only" | "workspace-write",
  readDenied: readonly string[] = [],
  readOnly: readonly string[] = [],
): Record<string, unknown> {
  const filesystem: Record<string, "deny" | "read"> = { [SANDBOX_GUARD_PATH]: "deny" };
  for (const kept of readOnly) filesystem[kept] = "read";
  for (const denied of readDenied) filesystem[denied] = "deny";
  return {
    default_permissions: SANDBOX_PROFILE,
    permissions: {
      [SANDBOX_PROFILE]: { extends: PROFILE_BASE[sandbox], filesystem },
    },
  };
}

/**
 * `params` (a thread/start or thread/resume) with the session's own temp folder `dir`: `/tmp` and
 * codex's `$TMPDIR` read-only, the folder holding every session's temp folder (`dir`'s parent)
 * unreadable, `dir` writable and its commands' `TMPDIR` (session-tmp.ts says why). Only a `workspace-write` profile changes: `read-only` writes no temp folder anyway and
 * full access has no profile. Measured on 0.169: the cwd stays writable under a read-only `/tmp`.
 */
export function withPrivateTmp<T extends { config?: { [key: string]: unknown } | null }>(
  params: T,
  dir: string,
): T {
  const config = params.config;
  const permissions = config?.permissions as Record<string, ProfileConfig> | undefined;
  const profile = permissions?.[SANDBOX_PROFILE];
  if (!config || !profile || profile.extends !== PROFILE_BASE["workspace-write"]) return params;
  const env = (config.shell_environment_policy ?? {}) as { set?: Record<string, string> };
  return {
    ...params,
    config: {
      ...config,
      permissions: {
        ...permissions,
        [SANDBOX_PROFILE]: {
          ...profile,
          filesystem: {
            ...profile.filesystem,
            ":slash_tmp": "read",
            ":tmpdir": "read",
            [path.dirname(dir)]: "deny",
            [dir]: "write",
          },
        },
      },
      shell_environment_policy: { ...env, set: { ...env.set, TMPDIR: dir } },
    },
  };
}

interface ProfileConfig {
  extends: string;
  filesystem: Record<string, string>;
}

/**
 * The codex approval policy and sandbox for a permission mode, so the bridge sees every call.
 * Whether a fleet may use `bypassPermissions` is not decided here: the spec guard refuses it
 * under a policy without `allowBypass: true` (src/approval/spec-guard.ts), before any provider
 * sees the spec.
 */
export function codexPermissions(
  mode: PermissionMode,
  sandbox: SandboxMode | undefined,
): { approvalPolicy: ApprovalPolicy; sandbox: SandboxMode } {
  switch (mode) {
    case "default":
    case "acceptEdits":
      return { approvalPolicy: "untrusted", sandbox: sandbox ?? "workspace-write" };
    case "plan":
      return { approvalPolicy: "untrusted", sandbox: "read-only" };
    case "bypassPermissions":
      return { approvalPolicy: "never", sandbox: sandbox ?? "danger-full-access" };
  }
}

export function textInput(text: string): TextInput[] {
  return [{ type: "text", text, text_elements: [] }];
}

/** The `thread/start` params for a spec (also the overrides `thread/resume` sends). */
export function planThread(spec: Spec, options: CodexPlanOptions = {}): ThreadStartParams {
  const permissions = codexPermissions(spec.permissionMode, spec.sandbox);
  const config = pinnedConfig(spec.cwd, spec.env, options.cwdAliases, spec.webSearch);
  const sandbox = permissions.sandbox;
  if (sandbox !== "danger-full-access") {
    Object.assign(config, sandboxProfileConfig(sandbox, options.readDenied, options.readOnly));
  }
  for (const [name, server] of Object.entries(spec.mcpServers ?? {})) {
    config[`mcp_servers.${name}`] = mcpServerConfig(server, options.mcpCwd);
  }
  return {
    cwd: spec.cwd,
    approvalPolicy: permissions.approvalPolicy,
    approvalsReviewer: "user",
    experimentalRawEvents: true,
    ...(sandbox === "danger-full-access" && { sandbox }),
    ...(spec.model !== undefined && { model: spec.model }),
    ...(spec.baseInstructions !== undefined && { baseInstructions: spec.baseInstructions }),
    ...(spec.developerInstructions !== undefined &&
      { developerInstructions: spec.developerInstructions }),
    config,
  };
}

/** The params of a turn (first or follow-up) carrying `prompt`. */
export function planTurn(spec: Spec, prompt: string): Omit<TurnStartParams, "threadId"> {
  return {
    input: textInput(prompt),
    ...(spec.reasoningEffort !== undefined && { effort: spec.reasoningEffort }),
  };
}

export function planSpawn(spec: Spec, options: CodexPlanOptions = {}): SpawnPlan {
  const daemonServers = options.daemonMcpServers ?? {};
  return {
    threadStart: planThread(spec, options),
    firstTurn: planTurn(spec, spec.prompt),
    ...(Object.keys(daemonServers).length > 0 && {
      mcpConfigEdit: mcpBatchWrite(daemonServers, options.mcpCwd),
    }),
    ignoredFields: ignoredFields(spec, options.fieldsSet),
  };
}

/**
 * The fields the caller set that this session will not honour as given. A field codexd itself
 * enforces (SPEC_FIELD_HANDLING's reasons: policy, permissionConfig, timeoutMs, onBusy, metadata,
 * budget) is honoured, not ignored; so is every field translated for codex, except where
 * another field overrides it: a `sandbox` under `permissionMode: plan`, which runs read-only.
 */
function ignoredFields(spec: Spec, fieldsSet: readonly string[] | undefined): IgnoredField[] {
  const set = new Set(
    fieldsSet ?? Object.keys(spec).filter((key) => spec[key as keyof Spec] !== undefined),
  );
  const ignored: IgnoredField[] = [];
  if (set.has("sandbox") && spec.permissionMode === "plan" && spec.sandbox !== "read-only") {
    ignored.push({
      field: "sandbox",
      reason: `permissionMode plan runs read-only, not ${spec.sandbox}`,
    });
  }
  return ignored;
}

/** `config/batchWrite` params replacing codex's `mcp_servers` table (keyPath is the TOML name). */
export function mcpBatchWrite(
  servers: Record<string, McpServer>,
  cwd?: string,
): ConfigBatchWriteParams {
  const value = Object.fromEntries(
    Object.entries(servers).map(([name, server]) => [name, mcpServerConfig(server, cwd)]),
  );
  return {
    edits: [{ keyPath: "mcp_servers", value, mergeStrategy: "replace" }],
    reloadUserConfig: true,
  };
}

/**
 * An MCP server as codex's config names it. codex starts it outside the sandbox, by default in the
 * thread's cwd: the repository's (or an earlier command's) `probe.py` beside `python -m probe`,
 * `node_modules/.bin/x` beside `npx x`, a `bunfig.toml` preload or `.cargo/config.toml` runner
 * would run unsandboxed (test/provider/codex/mcp-cwd.test.ts). So every server starts in `cwd`,
 * a folder no session writes; a server that needs the worktree gets its path as an argument.
 */
function mcpServerConfig(server: McpServer, cwd = "/"): Record<string, unknown> {
  return {
    command: server.command,
    args: server.args,
    cwd,
    ...(Object.keys(server.env).length > 0 && { env: server.env }),
  };
}

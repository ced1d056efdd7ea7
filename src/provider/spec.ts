/**
 * The session spec: what a fleet runner asks for when it spawns or resumes a session.
 * Provider-agnostic; `src/provider/codex/plan.ts` translates it for codex.
 */
import { isAbsolute } from "node:path";
import { z } from "zod";

export const PermissionMode = z.enum(["default", "acceptEdits", "plan", "bypassPermissions"]);
export type PermissionMode = z.infer<typeof PermissionMode>;

export const Decision = z.enum(["allow", "deny", "ask"]);
export type Decision = z.infer<typeof Decision>;

export const PermissionConfig = z.strictObject({
  /** Argv-prefix patterns, e.g. "npm test"; where any allow pattern exists only matches pass. */
  allowPatterns: z.array(z.string().min(1)).default([]),
  disallowPatterns: z.array(z.string().min(1)).default([]),
  defaultDecision: Decision.optional(),
});
export type PermissionConfig = z.infer<typeof PermissionConfig>;

export const McpServer = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
});
export type McpServer = z.infer<typeof McpServer>;

/** A name usable as a TOML bare key: it becomes `mcp_servers.<name>` in codex's config. */
const McpServerName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must match [A-Za-z0-9_-]{1,64}");

/** Its form only: whether the folder exists is the session service's check (a 400 naming `cwd`). */
export const Cwd = z.string().refine(isAbsolute, "must be an absolute path");

/** codex's `web_search` setting: off, answers from OpenAI's cache, or live pages. */
export const WebSearchMode = z.enum(["disabled", "cached", "live"]);
export type WebSearchMode = z.infer<typeof WebSearchMode>;

export const Spec = z.strictObject({
  prompt: z.string().min(1),
  /** The session's worktree: absolute (and existing: see Cwd). */
  cwd: Cwd,
  model: z.string().min(1).optional(),
  baseInstructions: z.string().optional(),
  developerInstructions: z.string().optional(),
  reasoningEffort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).optional(),
  sandbox: z.enum(["read-only", "workspace-write", "danger-full-access"]).optional(),
  /**
   * codex's web search for this session: it runs at the model provider, outside the sandbox, so
   * it is off unless asked for here, and at most what the policy's `spec.maxWebSearch` allows.
   */
  webSearch: WebSearchMode.optional(),
  permissionMode: PermissionMode.default("default"),
  /** The fleet policy's name (a file `policies/<name>.yaml`). */
  policy: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/).default("default"),
  permissionConfig: PermissionConfig.optional(),
  mcpServers: z.record(McpServerName, McpServer).optional(),
  /** Extra environment for commands codex runs in this session. Values are secrets: never echoed. */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
  /** Hard deadline for each turn; the turn ends with error{code:"timeout"}. */
  timeoutMs: z.number().int().positive().max(7 * 24 * 3600_000).optional(),
  /** What `send` does while a turn runs: queue it (default) or interrupt the running turn. */
  onBusy: z.enum(["queue", "interrupt"]).default("queue"),
  /**
   * The session's token budget over its whole life (input + output, cached input as its policy
   * says); at most the policy's `budgets.sessionTokens`, which applies when this is absent.
   */
  budget: z.strictObject({
    tokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  }).optional(),
  /** Opaque to codexd: stored and listed with the session. */
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type Spec = z.infer<typeof Spec>;
export type SpecInput = z.input<typeof Spec>;

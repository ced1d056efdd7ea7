/**
 * The policy file format (version 1), as zod schemas. Raw schemas carry no defaults so that
 * `extends` can tell "unset" from "set to the default"; {@link POLICY_DEFAULTS} is applied after
 * merging.
 */
import { z } from "zod";
import { WebSearchMode } from "../provider/spec.ts";

export const PolicyDecision = z.enum(["allow", "deny", "ask"]);
export type PolicyDecision = z.infer<typeof PolicyDecision>;

/** `500ms`, `30s`, `5m`, `1h`, or a number of milliseconds. */
export const Duration = z.union([
  z.number().int().positive(),
  z.string().regex(/^\d+(ms|s|m|h)$/, "must be a duration such as 30s, 5m or 1h"),
]).transform(parseDuration);

export function parseDuration(value: number | string): number {
  if (typeof value === "number") return value;
  const match = /^(\d+)(ms|s|m|h)$/.exec(value);
  if (match === null) throw new Error(`Not a duration: ${value}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as "ms" | "s" | "m" | "h"];
  return Number(match[1]) * unit;
}

const RuleId = z.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  "must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}",
);

export const CommandRule = z.strictObject({
  id: RuleId.optional(),
  /** Argv prefix, matched flag-aware against every normalized simple command. */
  prefix: z.array(z.string().min(1)).min(1).optional(),
  /** RE2 pattern. Deny/ask: searched in the whole command line; allow: must match a whole simple command. */
  regex: z.string().min(1).optional(),
  reason: z.string().min(1).optional(),
  description: z.string().optional(),
  /** Example commands the rule must match; checked at load. */
  match: z.array(z.string()).optional(),
  /** Example commands the rule must not match; checked at load. */
  notMatch: z.array(z.string()).optional(),
}).refine((r) => (r.prefix === undefined) !== (r.regex === undefined), {
  message: "a rule needs exactly one of prefix or regex",
});
export type CommandRule = z.infer<typeof CommandRule>;

export const McpRule = z.strictObject({
  id: RuleId.optional(),
  server: z.string().min(1),
  /** Absent: every tool of the server. */
  tool: z.string().min(1).optional(),
  reason: z.string().min(1).optional(),
});
export type McpRule = z.infer<typeof McpRule>;

/** An environment variable name, or a glob of them with `*` (e.g. `*_TOKEN`). */
export const EnvNameGlob = z.string().regex(
  /^[A-Za-z0-9_*]{1,128}$/,
  "must be a variable name or a glob of them: letters, digits, _ and *",
);

/** codex's sandbox modes, loosest last. */
export const SandboxMode = z.enum(["read-only", "workspace-write", "danger-full-access"]);
export type SandboxMode = z.infer<typeof SandboxMode>;

/** A number of tokens, or `unlimited` (no cap, also over a base policy's). */
const TOKEN_CAP = "must be a positive whole number of tokens or unlimited";
const TokenCap = z.union([
  z.number(TOKEN_CAP).int(TOKEN_CAP).positive(TOKEN_CAP).max(Number.MAX_SAFE_INTEGER, TOKEN_CAP),
  z.literal("unlimited", TOKEN_CAP),
], TOKEN_CAP).transform((v) => (v === "unlimited" ? null : v));

/**
 * Token budgets (`src/daemon/budgets.ts`): a session's lifetime cap (also the most a spec's
 * `budget.tokens` may ask for), and the fleet's caps over rolling windows of the last hour and
 * the last 24 hours. Tokens counted are input + output (reasoning is part of output); cached
 * input counts as input unless `countCachedInput: false`.
 */
export const Budgets = z.strictObject({
  sessionTokens: TokenCap.optional(),
  fleetTokensPerHour: TokenCap.optional(),
  fleetTokensPerDay: TokenCap.optional(),
  countCachedInput: z.boolean().optional(),
}).superRefine((b, ctx) => {
  const hour = b.fleetTokensPerHour;
  const day = b.fleetTokensPerDay;
  if (typeof hour === "number" && typeof day === "number" && hour > day) {
    ctx.addIssue({
      code: "custom",
      path: ["fleetTokensPerHour"],
      message: `${hour} is more than fleetTokensPerDay ${day}: the hourly cap could never bind`,
    });
  }
});

const PolicyName = z.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  "must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}",
);

export const PolicyFile = z.strictObject({
  version: z.literal(1),
  name: PolicyName,
  description: z.string().optional(),
  extends: z.array(PolicyName).optional(),
  default: PolicyDecision.optional(),
  allowBypass: z.boolean().optional(),
  askTimeout: Duration.optional(),
  /** Input the analyzer cannot see through is never allowed: at most held for a person. */
  unanalyzable: z.enum(["deny", "ask"]).optional(),
  /**
   * Longer command lines are not parsed (a 100 KB line takes the parser ~150 ms): they are
   * decided as unanalysable input at once.
   */
  maxCommandLength: z.number().int().min(1024).max(1_048_576).optional(),
  /** `allow` lets the command go on to the ordinary rules. */
  interactive: PolicyDecision.optional(),
  commands: z.strictObject({
    deny: z.array(CommandRule).optional(),
    allow: z.array(CommandRule).optional(),
    ask: z.array(CommandRule).optional(),
  }).optional(),
  files: z.strictObject({
    /** Decision for a contained, unprotected file change; the policy `default` when absent. */
    default: PolicyDecision.optional(),
    /** picomatch globs relative to the worktree. */
    deny: z.array(z.string().min(1)).optional(),
    /** Absolute folders outside the worktree that file changes may also touch. */
    allowRoots: z.array(z.string().refine((p) => p.startsWith("/"), "must be an absolute path"))
      .optional(),
  }).optional(),
  mcp: z.strictObject({
    default: PolicyDecision.optional(),
    allow: z.array(McpRule).optional(),
    deny: z.array(McpRule).optional(),
  }).optional(),
  permissions: PolicyDecision.optional(),
  /** What a session's spec may ask for (on top of the built-in floor, which no policy lifts). */
  spec: z.strictObject({
    env: z.strictObject({
      /** Variable names (`*` globs) a spec's `env` may set; the floor (spec-guard.ts) still applies. */
      allow: z.array(EnvNameGlob).optional(),
    }).optional(),
    /** May a spec bring its own MCP servers? Each server's command line is still judged. */
    mcpServers: z.enum(["allow", "deny"]).optional(),
    /** The loosest sandbox a spec may name. */
    maxSandbox: SandboxMode.optional(),
    /** The most web search a spec may ask for (`disabled` < `cached` < `live`). */
    maxWebSearch: WebSearchMode.optional(),
  }).optional(),
  budgets: Budgets.optional(),
  mode: z.enum(["enforce", "shadow"]).optional(),
  shadows: PolicyName.optional(),
}).superRefine((p, ctx) => {
  if (p.mode === "shadow" && p.shadows === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["shadows"],
      message: "mode shadow needs shadows: <fleet>",
    });
  }
  if (p.shadows !== undefined && p.mode !== "shadow") {
    ctx.addIssue({ code: "custom", path: ["mode"], message: "shadows needs mode: shadow" });
  }
});
export type PolicyFile = z.infer<typeof PolicyFile>;

export type RuleKind = "deny" | "allow" | "ask";

/** A policy after `extends` is resolved and defaults applied. */
export interface MergedPolicy {
  name: string;
  description?: string;
  default: PolicyDecision;
  allowBypass: boolean;
  askTimeoutMs: number;
  unanalyzable: "deny" | "ask";
  maxCommandLength: number;
  interactive: PolicyDecision;
  commands: Record<RuleKind, Array<CommandRule & { id: string; from: string }>>;
  files: { default?: PolicyDecision; deny: string[]; allowRoots: string[] };
  mcp: {
    default?: PolicyDecision;
    allow: Array<McpRule & { id: string; from: string }>;
    deny: Array<McpRule & { id: string; from: string }>;
  };
  permissions: PolicyDecision;
  spec: {
    /** Globs of the env names a spec may set (bases first, concatenated). */
    envAllow: string[];
    mcpServers: "allow" | "deny";
    maxSandbox: SandboxMode;
    maxWebSearch: WebSearchMode;
  };
  /** Token caps; null: no cap. */
  budgets: MergedBudgets;
  mode: "enforce" | "shadow";
  shadows?: string;
}

export interface MergedBudgets {
  sessionTokens: number | null;
  fleetTokensPerHour: number | null;
  fleetTokensPerDay: number | null;
  countCachedInput: boolean;
}

export const POLICY_DEFAULTS = {
  default: "deny",
  allowBypass: false,
  askTimeoutMs: 5 * 60_000,
  unanalyzable: "deny",
  maxCommandLength: 16_384,
  interactive: "deny",
  permissions: "deny",
  /** Fail closed: a policy that says nothing lets a spec set no env, start no MCP server. */
  specMcpServers: "deny",
  specMaxSandbox: "workspace-write",
  /** Web search runs outside the sandbox: off unless a policy lets a spec ask for it. */
  specMaxWebSearch: "disabled",
  /** No caps unless a policy sets them; cached input counts in full (every token the model read). */
  budgets: {
    sessionTokens: null,
    fleetTokensPerHour: null,
    fleetTokensPerDay: null,
    countCachedInput: true,
  },
} as const;

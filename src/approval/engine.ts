/**
 * The decision engine: a pure function from (policy, request, session facts) to a decision.
 * It never runs anything; commands are only analysed as strings.
 *
 * Order for commands: built-in rules → policy deny → spec disallowPatterns → unanalysable /
 * interactive input → the policy's allow-list → ask rules → default; then the spec's
 * allowPatterns, which can only turn an allow or ask into a deny. A spec narrows its policy,
 * never widens it.
 */
import type { ApprovalRequest } from "../provider/types.ts";
import type { PermissionConfig, PermissionMode } from "../provider/spec.ts";
import type { CommandAnalysis, ShellAnalyzer, SimpleCommand } from "./analyzer.ts";
import {
  allowRuleAccepts,
  type CompiledCommandRule,
  type CompiledPolicy,
  searchRuleMatches,
} from "./compiled-policy.ts";
import { checkPaths } from "./file-paths.ts";
import { ungrantablePermissions } from "./permission-grants.ts";
import type { PolicyDecision } from "./policy-schema.ts";

export interface EngineDecision {
  decision: PolicyDecision;
  ruleId?: string;
  /** `builtin`, `policy:<name>`, `spec`, `default`, `mode`. */
  source: string;
  reason: string;
}

export interface SessionFacts {
  worktree?: string;
  /** Files a downloader wrote earlier in this session (absolute): running one is declined. */
  tainted?: ReadonlySet<string>;
  /** Follows symlinks already on disk (the bridge passes the filesystem's; tests a fake). */
  realpath?: (path: string) => string | undefined;
  /** The worktree's `core.hooksPath` folder (absolute), read only when a command writes files. */
  hooksDir?: () => string | undefined;
  permissionMode: PermissionMode;
  permissionConfig?: PermissionConfig;
}

export function evaluate(
  policy: CompiledPolicy,
  request: ApprovalRequest,
  session: SessionFacts,
  analyzer: ShellAnalyzer,
): EngineDecision {
  switch (request.kind) {
    case "command":
    case "writeStdin":
      if (request.escalation !== undefined && !bypassing(policy, session)) {
        return escalationDecision(request.escalation);
      }
      return evaluateCommand(policy, request.command, request.cwd, session, analyzer);
    case "fileChange":
      return evaluateFileChange(policy, request.paths, request.grantRoot ?? undefined, session);
    case "mcpTool":
      return evaluateMcp(policy, request.server, request.tool, session);
    case "permissions": {
      if (bypassing(policy, session)) return bypassDecision();
      const ungrantable = ungrantablePermissions(request.permissions);
      if (ungrantable !== undefined) {
        return {
          decision: "deny",
          ruleId: "builtin.sandbox-escalation",
          source: "builtin",
          reason: `the request asks for ${ungrantable}; a policy can grant network access only`,
        };
      }
      return {
        decision: policy.merged.permissions,
        ruleId: "permissions",
        source: `policy:${policy.name}`,
        reason: `policy ${policy.name} says ${policy.merged.permissions} to extra permissions`,
      };
    }
  }
}

function bypassing(policy: CompiledPolicy, session: SessionFacts): boolean {
  // A session can only bypass under a policy that allows it; spawn refuses otherwise, and
  // here the mode is simply ignored.
  return session.permissionMode === "bypassPermissions" && policy.merged.allowBypass;
}

/**
 * A command that asks to leave the sandbox (codex runs an approved escalation unsandboxed) is
 * declined whatever it is: the policy judged commands as run inside the sandbox, and the sandbox
 * is what keeps credentials and codexd's files out of reach (read-denied.ts).
 */
function escalationDecision(escalation: string): EngineDecision {
  return {
    decision: "deny",
    ruleId: "builtin.sandbox-escalation",
    source: "builtin",
    reason: `the command asks to run outside the sandbox (${escalation}); commands stay in it`,
  };
}

function bypassDecision(): EngineDecision {
  return {
    decision: "allow",
    ruleId: "mode.bypassPermissions",
    source: "mode",
    reason: "permissionMode bypassPermissions",
  };
}

const STRICTNESS: Record<PolicyDecision, number> = { deny: 0, ask: 1, allow: 2 };

/**
 * The policy's default, or the spec's `defaultDecision` where it is stricter (deny < ask < allow):
 * a spec can only narrow its policy.
 */
function defaultDecision(policy: CompiledPolicy, session: SessionFacts): EngineDecision {
  const fromSpec = session.permissionConfig?.defaultDecision;
  return fromSpec !== undefined && STRICTNESS[fromSpec] < STRICTNESS[policy.merged.default]
    ? {
      decision: fromSpec,
      source: "spec",
      ruleId: "spec.defaultDecision",
      reason: `spec defaultDecision ${fromSpec}`,
    }
    : {
      decision: policy.merged.default,
      source: "default",
      ruleId: "default",
      reason: `default of policy ${policy.name}`,
    };
}

function ruleDecision(
  policy: CompiledPolicy,
  rule: CompiledCommandRule,
  decision: PolicyDecision,
  what: string,
): EngineDecision {
  return {
    decision,
    ruleId: rule.id,
    source: `policy:${policy.name}`,
    reason: rule.reason ?? `${what} rule ${rule.id} of policy ${policy.name}`,
  };
}

/**
 * A deny or ask regex sees the line as written and each command as it will run: quotes removed,
 * escapes decoded, braces and known variables expanded (`cat ~/.a''ws/credentials`). Allow
 * regexes never get this second look, so it can only make a decision stricter.
 */
function regexHit<T>(
  set: { firstMatch(text: string): T | undefined },
  line: string,
  analysis: CommandAnalysis,
): T | undefined {
  const hit = set.firstMatch(line);
  if (hit !== undefined) return hit;
  for (const command of analysis.commands) {
    const text = command.argv.join(" ");
    // Most commands are written as they run: the line already showed this text.
    if (line.includes(text)) continue;
    const found = set.firstMatch(text);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The first deny/ask rule (in file order) that hits the line. */
function firstHit(
  rules: readonly CompiledCommandRule[],
  regexHit: CompiledCommandRule | undefined,
  line: string,
  analysis: CommandAnalysis,
  analyzer: ShellAnalyzer,
): CompiledCommandRule | undefined {
  for (const rule of rules) {
    if (rule.regex !== undefined) {
      // The regex set already named the first regex rule that matches.
      if (rule === regexHit) return rule;
    } else if (searchRuleMatches(rule, line, analysis, analyzer)) {
      return rule;
    }
  }
  return undefined;
}

/** A spec pattern such as "npm publish" as an argv prefix, split by the shell analyzer. */
function patternPrefix(pattern: string, analyzer: ShellAnalyzer): string[] {
  const analysis = analyzer.analyze(pattern);
  const first = analysis.commands[0];
  if (analysis.unanalyzable === undefined && analysis.commands.length === 1 && first.argv.length) {
    return first.argv;
  }
  return pattern.trim().split(/\s+/);
}

function evaluateCommand(
  policy: CompiledPolicy,
  line: string,
  cwd: string | undefined,
  session: SessionFacts,
  analyzer: ShellAnalyzer,
): EngineDecision {
  const max = policy.merged.maxCommandLength;
  if (line.length > max) {
    // Neither parsed nor searched: a 100 KB line takes the parser ~150 ms, and nothing can be
    // allowed without the built-in rules having seen it.
    return {
      decision: policy.merged.unanalyzable,
      ruleId: "unanalyzable",
      source: `policy:${policy.name}`,
      reason: `the command is longer than ${max} characters (maxCommandLength) and is not analysed`,
    };
  }
  const analysis = analyzer.analyze(line);
  const builtin = analyzer.matchBuiltin(analysis, {
    ...(session.worktree !== undefined && { worktree: session.worktree }),
    ...(cwd !== undefined && cwd !== "" && { cwd }),
    ...(session.tainted !== undefined && { tainted: session.tainted }),
    ...(session.realpath !== undefined && { realpath: session.realpath }),
    ...(session.hooksDir !== undefined && { hooksDir: session.hooksDir }),
  });
  if (builtin !== undefined && builtin.kind !== "unanalyzable") {
    return { decision: "deny", ruleId: builtin.ruleId, source: "builtin", reason: builtin.reason };
  }
  if (bypassing(policy, session)) return bypassDecision();

  const deny = firstHit(
    policy.rules.deny,
    regexHit(policy.denyRegexes, line, analysis),
    line,
    analysis,
    analyzer,
  );
  if (deny !== undefined) return ruleDecision(policy, deny, "deny", "deny");

  for (const pattern of session.permissionConfig?.disallowPatterns ?? []) {
    const prefix = patternPrefix(pattern, analyzer);
    if (analysis.commands.some((c) => analyzer.matchesPrefix(c, prefix))) {
      return {
        decision: "deny",
        ruleId: "spec.disallowPatterns",
        source: "spec",
        reason: `matches the spec's disallowPattern ${JSON.stringify(pattern)}`,
      };
    }
  }

  const doubt = analysis.unanalyzable?.reason ?? builtin?.reason;
  if (doubt !== undefined) {
    return {
      decision: policy.merged.unanalyzable,
      ruleId: "unanalyzable",
      source: `policy:${policy.name}`,
      reason: `cannot analyse the command (${doubt})`,
    };
  }
  if (analysis.interactive !== undefined && policy.merged.interactive !== "allow") {
    return {
      decision: policy.merged.interactive,
      ruleId: "interactive",
      source: `policy:${policy.name}`,
      reason:
        `opens an interactive ${analysis.interactive.program}; what is typed into it later is not judged`,
    };
  }

  const decided = policyDecision(policy, line, analysis, session, analyzer);
  return narrowedBySpecAllow(decided, analysis.commands, session, analyzer);
}

/** The policy's own answer once deny rules and unanalysable input are out of the way. */
function policyDecision(
  policy: CompiledPolicy,
  line: string,
  analysis: CommandAnalysis,
  session: SessionFacts,
  analyzer: ShellAnalyzer,
): EngineDecision {
  const ask = () =>
    firstHit(
      policy.rules.ask,
      regexHit(policy.askRegexes, line, analysis),
      line,
      analysis,
      analyzer,
    );
  if (policy.rules.allow.length > 0) {
    const accepted = acceptAll(policy, analysis.commands, analyzer);
    if (accepted.ok) return accepted.decision;
    const asked = ask();
    if (asked !== undefined) return ruleDecision(policy, asked, "ask", "ask");
    return {
      decision: "deny",
      ruleId: "allow-list",
      source: `policy:${policy.name}`,
      reason: accepted.unmatched === undefined
        ? `empty command is not in the allow-list of policy ${policy.name}`
        : `${
          JSON.stringify(accepted.unmatched.text)
        } is not in the allow-list of policy ${policy.name}`,
    };
  }
  const asked = ask();
  if (asked !== undefined) return ruleDecision(policy, asked, "ask", "ask");
  return defaultDecision(policy, session);
}

/**
 * The spec's `allowPatterns` only narrow: where any exist, a command the policy would allow (or
 * ask about) must also match one of them in every simple command, else it is declined. They never
 * admit what the policy would not (`allowPatterns: ["node"]` under an allow-list without node).
 */
function narrowedBySpecAllow(
  decided: EngineDecision,
  commands: SimpleCommand[],
  session: SessionFacts,
  analyzer: ShellAnalyzer,
): EngineDecision {
  const specAllow = session.permissionConfig?.allowPatterns ?? [];
  if (specAllow.length === 0 || decided.decision === "deny") return decided;
  const prefixes = specAllow.map((p) => patternPrefix(p, analyzer));
  const unmatched = commands.length === 0
    ? undefined
    : commands.find((c) => !prefixes.some((prefix) => analyzer.matchesPrefix(c, prefix)));
  if (commands.length > 0 && unmatched === undefined) return decided;
  return {
    decision: "deny",
    ruleId: "spec.allowPatterns",
    source: "spec",
    reason: unmatched === undefined
      ? "an empty command matches none of the spec's allowPatterns"
      : `${JSON.stringify(unmatched.text)} matches none of the spec's allowPatterns`,
  };
}

/** Every simple command must be accepted by some allow rule of the policy. */
function acceptAll(
  policy: CompiledPolicy,
  commands: SimpleCommand[],
  analyzer: ShellAnalyzer,
): { ok: true; decision: EngineDecision } | { ok: false; unmatched?: SimpleCommand } {
  if (commands.length === 0) return { ok: false };
  let first: EngineDecision | undefined;
  for (const command of commands) {
    const rule = policy.rules.allow.find((r) => allowRuleAccepts(r, command, analyzer));
    if (rule === undefined) return { ok: false, unmatched: command };
    first ??= ruleDecision(policy, rule, "allow", "allow");
  }
  return { ok: true, decision: first! };
}

function evaluateFileChange(
  policy: CompiledPolicy,
  paths: readonly string[],
  grantRoot: string | undefined,
  session: SessionFacts,
): EngineDecision {
  if (paths.length === 0) {
    return {
      decision: "deny",
      ruleId: "builtin.files.no-paths",
      source: "builtin",
      reason: "a file change without paths cannot be judged",
    };
  }
  if (session.permissionMode === "plan") {
    return {
      decision: "deny",
      ruleId: "mode.plan",
      source: "mode",
      reason: "permissionMode plan makes no file changes",
    };
  }
  const all = grantRoot === undefined ? paths : [...paths, grantRoot];
  const verdicts = checkPaths(all, {
    // Without a worktree (a dry run that named none) containment is not judged.
    worktree: session.worktree ?? "/",
    allowRoots: policy.merged.files.allowRoots,
    denied: policy.fileDeny,
  });
  for (const v of verdicts) {
    if (v.ok) continue;
    return v.ruleId === "files.deny"
      ? {
        decision: "deny",
        ruleId: `${policy.name}.files.deny`,
        source: `policy:${policy.name}`,
        reason: v.reason,
      }
      : { decision: "deny", ruleId: v.ruleId, source: "builtin", reason: v.reason };
  }
  if (bypassing(policy, session)) return bypassDecision();
  if (session.permissionMode === "acceptEdits") {
    const inWorktree = verdicts.every((v) => v.ok && v.inWorktree);
    if (inWorktree) {
      return {
        decision: "allow",
        ruleId: "mode.acceptEdits",
        source: "mode",
        reason: "permissionMode acceptEdits accepts edits inside the worktree",
      };
    }
  }
  const filesDefault = policy.merged.files.default;
  if (filesDefault !== undefined) {
    return {
      decision: filesDefault,
      ruleId: "files.default",
      source: `policy:${policy.name}`,
      reason: `files.default of policy ${policy.name}`,
    };
  }
  return defaultDecision(policy, session);
}

function evaluateMcp(
  policy: CompiledPolicy,
  server: string,
  tool: string,
  session: SessionFacts,
): EngineDecision {
  if (bypassing(policy, session)) return bypassDecision();
  const hits = (r: { server: string; tool?: string }) =>
    r.server === server && (r.tool === undefined || r.tool === tool);
  const mcp = policy.merged.mcp;
  for (const [list, decision] of [[mcp.deny, "deny"], [mcp.allow, "allow"]] as const) {
    const rule = list.find(hits);
    if (rule !== undefined) {
      return {
        decision,
        ruleId: rule.id,
        source: `policy:${policy.name}`,
        reason: rule.reason ?? `mcp ${decision} rule ${rule.id} of policy ${policy.name}`,
      };
    }
  }
  if (mcp.default !== undefined) {
    return {
      decision: mcp.default,
      ruleId: "mcp.default",
      source: `policy:${policy.name}`,
      reason: `mcp.default of policy ${policy.name}`,
    };
  }
  return defaultDecision(policy, session);
}

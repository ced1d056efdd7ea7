/**
 * The functions behind `codexd policy check|eval|replay`. Each returns its output and exit code
 * instead of printing, so the CLI dispatcher stays thin and tests need no process.
 *
 * Exit codes: check 0 ok / 1 problems; eval 0 allow / 2 deny / 3 ask / 1 error;
 * replay 0 nothing changes / 2 some decisions change / 1 error.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import type { ApprovalRequest } from "../provider/types.ts";
import type { ShellAnalyzer } from "./analyzer.ts";
import { evaluate } from "./engine.ts";
import { formatIssue } from "./policy-errors.ts";
import { loadPolicies, policyFilesIn } from "./policy-loader.ts";
import { PolicyStore } from "./policy-store.ts";
import { defaultShellAnalyzer } from "./shell-analyzer.ts";

export interface CliResult {
  exitCode: number;
  output: string;
}

interface WithAnalyzer {
  /** Defaults to the tree-sitter analyzer with built-in rules. */
  analyzer?: ShellAnalyzer;
}

/** Validates policy files (or every policy file of given directories). */
export async function policyCheck(paths: string[], options: WithAnalyzer = {}): Promise<CliResult> {
  if (paths.length === 0) return { exitCode: 1, output: "usage: codexd policy check FILE|DIR..." };
  const analyzer = options.analyzer ?? await defaultShellAnalyzer();
  const files: string[] = [];
  const lines: string[] = [];
  for (const path of paths) {
    try {
      files.push(...(statSync(path).isDirectory() ? policyFilesIn(path) : [resolve(path)]));
    } catch (error) {
      lines.push(`${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const { policies, issues } = loadPolicies(files, analyzer);
  for (const list of issues.values()) lines.push(...list.map(formatIssue));
  for (const policy of policies.values()) {
    lines.push(`ok ${policy.name} ${policy.version}${policy.file ? ` (${policy.file})` : ""}`);
  }
  return {
    exitCode: issues.size > 0 || lines.some((l) => !l.startsWith("ok ")) ? 1 : 0,
    output: lines.join("\n"),
  };
}

export interface PolicyEvalOptions extends WithAnalyzer {
  policiesDir: string;
  policy: string;
  command?: string;
  /** A file path: judged as a file change. */
  file?: string;
  /** The worktree the request is judged against; the current directory when absent. */
  cwd?: string;
}

/** Judges one command or file change; prints the decision as JSON. */
export async function policyEval(options: PolicyEvalOptions): Promise<CliResult> {
  if ((options.command === undefined) === (options.file === undefined)) {
    return {
      exitCode: 1,
      output: "usage: codexd policy eval --policy NAME (--command CMD | --file PATH)",
    };
  }
  const analyzer = options.analyzer ?? await defaultShellAnalyzer();
  const store = new PolicyStore(options.policiesDir, analyzer);
  let policy;
  try {
    policy = store.get(options.policy);
  } catch (error) {
    const problems = store.issues().map(formatIssue);
    return {
      exitCode: 1,
      output: [error instanceof Error ? error.message : String(error), ...problems].join("\n"),
    };
  }
  const worktree = resolve(options.cwd ?? process.cwd());
  const request: ApprovalRequest = options.command !== undefined
    ? { kind: "command", command: options.command, cwd: worktree }
    : { kind: "fileChange", paths: [resolve(worktree, options.file!)] };
  const decided = evaluate(policy, request, { worktree, permissionMode: "default" }, analyzer);
  const exitCode = { allow: 0, deny: 2, ask: 3 }[decided.decision];
  return {
    exitCode,
    output: JSON.stringify({ ...decided, policy: policy.name, policyVersion: policy.version }),
  };
}

/** One recorded approval request, as the daemon stores `approval` events. */
export const ReplayRecord = z.object({
  requestId: z.string().optional(),
  sessionId: z.string(),
  kind: z.enum(["command", "writeStdin", "fileChange", "mcpTool", "permissions"]),
  command: z.string().optional(),
  paths: z.array(z.string()).optional(),
  tool: z.object({ server: z.string(), name: z.string() }).optional(),
  cwd: z.string().optional(),
  worktree: z.string().optional(),
  decision: z.enum(["allow", "deny"]),
  ruleId: z.string().optional(),
});
export type ReplayRecord = z.infer<typeof ReplayRecord>;

export interface PolicyReplayOptions extends WithAnalyzer {
  policiesDir: string;
  policy: string;
  records: unknown[];
}

/** Re-judges recorded requests under `policy` and prints the ones whose decision changes. */
export async function policyReplay(options: PolicyReplayOptions): Promise<CliResult> {
  const analyzer = options.analyzer ?? await defaultShellAnalyzer();
  const store = new PolicyStore(options.policiesDir, analyzer);
  let policy;
  try {
    policy = store.get(options.policy);
  } catch (error) {
    return { exitCode: 1, output: error instanceof Error ? error.message : String(error) };
  }
  const lines: string[] = [];
  let changed = 0;
  let skipped = 0;
  options.records.forEach((raw, index) => {
    const parsed = ReplayRecord.safeParse(raw);
    if (!parsed.success) {
      skipped++;
      lines.push(
        `record ${index}: skipped: ${z.prettifyError(parsed.error).replaceAll("\n", " ")}`,
      );
      return;
    }
    const record = parsed.data;
    const request = requestOf(record);
    const worktree = record.worktree ?? record.cwd;
    if (request === undefined || worktree === undefined) {
      skipped++;
      lines.push(
        `record ${index}: skipped: not enough fields to rebuild the ${record.kind} request`,
      );
      return;
    }
    const now = evaluate(policy, request, { worktree, permissionMode: "default" }, analyzer);
    if (now.decision === record.decision) return;
    changed++;
    const what = record.command ?? record.paths?.join(" ") ??
      (record.tool ? `${record.tool.server}/${record.tool.name}` : record.kind);
    lines.push(
      `${record.sessionId} ${record.kind} ${JSON.stringify(what)}: ${record.decision}` +
        `${record.ruleId ? ` (${record.ruleId})` : ""} → ${now.decision} (${
          now.ruleId ?? now.source
        }: ${now.reason})`,
    );
  });
  lines.push(
    `${options.records.length} records, ${changed} would change under ${policy.name} ${policy.version}` +
      (skipped > 0 ? `, ${skipped} skipped` : ""),
  );
  return { exitCode: changed > 0 ? 2 : 0, output: lines.join("\n") };
}

function requestOf(record: ReplayRecord): ApprovalRequest | undefined {
  switch (record.kind) {
    case "command":
    case "writeStdin":
      return record.command === undefined
        ? undefined
        : { kind: record.kind, command: record.command, cwd: record.cwd ?? record.worktree ?? "/" };
    case "fileChange":
      return record.paths === undefined ? undefined : { kind: "fileChange", paths: record.paths };
    case "mcpTool":
      return record.tool === undefined
        ? undefined
        : { kind: "mcpTool", server: record.tool.server, tool: record.tool.name };
    case "permissions":
      return { kind: "permissions", permissions: {} };
  }
}

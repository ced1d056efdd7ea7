/**
 * Reads policy files: YAML with source locations, zod validation, `extends`, and the checks a
 * policy must pass before it may decide anything (regexes compile, examples hold, no broad
 * allow, built-in rules untouched). Every problem is reported as `file:line:col: key: message`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { z } from "zod";
import type { ShellAnalyzer } from "./analyzer.ts";
import { type CompiledPolicy, compilePolicy } from "./compiled-policy.ts";
import type { PolicyIssue } from "./policy-errors.ts";
import {
  type MergedBudgets,
  type MergedPolicy,
  POLICY_DEFAULTS,
  PolicyFile,
  type RuleKind,
} from "./policy-schema.ts";
import { checkRule, reservedId, reservedMessage, type RulePath } from "./rule-checks.ts";

type Path = RulePath;

/** One file, parsed and validated on its own. */
interface ParsedFile {
  file: string;
  policy: PolicyFile;
  locate: (path: Path, atKey?: boolean) => { line: number; col: number };
}

export interface LoadResult {
  policies: Map<string, CompiledPolicy>;
  /** Problems, by the policy name (file base name) they belong to. */
  issues: Map<string, PolicyIssue[]>;
}

/** The `*.yaml` / `*.yml` files of a directory, sorted. */
export function policyFilesIn(dir: string): string[] {
  return readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => join(dir, f));
}

export function policyNameOf(file: string): string {
  return basename(file).replace(/\.ya?ml$/, "");
}

/**
 * Loads policy files. `extends` targets are looked up among `files` first, then as
 * `<name>.yaml` beside the file that names them.
 */
export function loadPolicies(files: string[], analyzer: ShellAnalyzer): LoadResult {
  const parsed = new Map<string, ParsedFile>();
  const issues = new Map<string, PolicyIssue[]>();
  const report = (name: string, issue: PolicyIssue) => {
    const list = issues.get(name) ?? [];
    list.push(issue);
    issues.set(name, list);
  };
  const parseOnce = (file: string): ParsedFile | undefined => {
    const name = policyNameOf(file);
    if (parsed.has(name)) return parsed.get(name);
    if (issues.has(name)) return undefined;
    const result = parsePolicyFile(file, analyzer);
    if ("issues" in result) {
      for (const issue of result.issues) report(name, issue);
      return undefined;
    }
    parsed.set(name, result);
    return result;
  };
  const byName = new Map(files.map((f) => [policyNameOf(f), f]));
  for (const file of files) parseOnce(file);

  const policies = new Map<string, CompiledPolicy>();
  for (const file of files) {
    const name = policyNameOf(file);
    const own = parsed.get(name);
    if (own === undefined || own.file !== file) continue;
    const chain = resolveExtends(own, (base, from) => {
      const candidates = [
        ...(byName.has(base) ? [byName.get(base)!] : []),
        join(dirname(from.file), `${base}.yaml`),
        join(dirname(from.file), `${base}.yml`),
      ];
      const found = candidates.find((f) => existsSync(f));
      return found === undefined ? "missing" : (parseOnce(found) ?? "broken");
    });
    if ("issues" in chain) {
      for (const issue of chain.issues) report(name, issue);
      continue;
    }
    const merged = mergePolicies(chain.files);
    const duplicate = duplicateRuleId(merged);
    if (duplicate !== undefined) {
      report(name, {
        file,
        ...own.locate(["extends"]),
        key: "extends",
        message: `rule id ${duplicate} is defined twice after merging extends`,
      });
      continue;
    }
    policies.set(name, compilePolicy(merged, file));
  }
  return { policies, issues };
}

function parsePolicyFile(
  file: string,
  analyzer: ShellAnalyzer,
): ParsedFile | { issues: PolicyIssue[] } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { issues: [{ file, line: 1, col: 1, key: "", message: `cannot read: ${message}` }] };
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      issues: doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { file, line: pos.line, col: pos.col, key: "", message: e.message };
      }),
    };
  }
  const locate = (path: Path, atKey = false) => locateIn(doc.contents, lineCounter, path, atKey);
  const issue = (path: Path, message: string, atKey = false): PolicyIssue => ({
    file,
    ...locate(path, atKey),
    key: keyPath(path),
    message,
  });
  const result = PolicyFile.safeParse(doc.toJS());
  if (!result.success) return { issues: result.error.issues.flatMap((i) => zodIssue(i, issue)) };
  const policy = result.data;
  const issues: PolicyIssue[] = [];
  const expected = policyNameOf(file);
  if (policy.name !== expected) {
    issues.push(issue(["name"], `name ${policy.name} must equal the file name ${expected}`));
  }
  for (const kind of ["deny", "allow", "ask"] as const) {
    (policy.commands?.[kind] ?? []).forEach((rule, index) => {
      issues.push(...checkRule(rule, kind, ["commands", kind, index], analyzer, issue));
    });
  }
  for (const kind of ["deny", "allow"] as const) {
    (policy.mcp?.[kind] ?? []).forEach((rule, index) => {
      if (rule.id !== undefined && reservedId(rule.id, analyzer)) {
        issues.push(issue(["mcp", kind, index, "id"], reservedMessage(rule.id)));
      }
    });
  }
  return issues.length > 0 ? { issues } : { file, policy, locate };
}

/** The policies to merge, bases first, each once; or the missing/cyclic/broken `extends`. */
function resolveExtends(
  root: ParsedFile,
  lookup: (name: string, from: ParsedFile) => ParsedFile | "missing" | "broken",
): { files: ParsedFile[] } | { issues: PolicyIssue[] } {
  const order: ParsedFile[] = [];
  const done = new Set<string>();
  // Problems deeper in the chain are reported at the root's entry that leads to them.
  const visit = (node: ParsedFile, stack: string[], entry?: number): PolicyIssue | undefined => {
    const bases = node.policy.extends ?? [];
    for (let i = 0; i < bases.length; i++) {
      const base = bases[i];
      const at = (message: string): PolicyIssue => ({
        file: root.file,
        ...root.locate(["extends", entry ?? i]),
        key: `extends[${entry ?? i}]`,
        message,
      });
      if (stack.includes(base)) {
        return at(`extends cycle: ${[...stack, base].join(" → ")}`);
      }
      if (done.has(base)) continue;
      const found = lookup(base, node);
      if (found === "missing") return at(`extends ${base}, but there is no policy ${base}`);
      if (found === "broken") return at(`extends ${base}, which has errors`);
      const failure = visit(found, [...stack, base], entry ?? i);
      if (failure !== undefined) return failure;
    }
    done.add(node.policy.name);
    order.push(node);
    return undefined;
  };
  const failure = visit(root, [root.policy.name]);
  return failure === undefined ? { files: order } : { issues: [failure] };
}

/** Later files override scalars; rule lists are concatenated, bases first. */
function mergePolicies(files: ParsedFile[]): MergedPolicy {
  const own = files[files.length - 1].policy;
  const last = <T>(pick: (p: PolicyFile) => T | undefined): T | undefined => {
    let value: T | undefined;
    for (const f of files) value = pick(f.policy) ?? value;
    return value;
  };
  const rules = (kind: RuleKind) =>
    files.flatMap((f) =>
      (f.policy.commands?.[kind] ?? []).map((r, i) => ({
        ...r,
        id: r.id ?? `${f.policy.name}.${kind}.${i}`,
        from: f.policy.name,
      }))
    );
  const mcpRules = (kind: "allow" | "deny") =>
    files.flatMap((f) =>
      (f.policy.mcp?.[kind] ?? []).map((r, i) => ({
        ...r,
        id: r.id ?? `${f.policy.name}.mcp.${kind}.${i}`,
        from: f.policy.name,
      }))
    );
  return {
    name: own.name,
    description: own.description,
    default: last((p) => p.default) ?? POLICY_DEFAULTS.default,
    allowBypass: last((p) => p.allowBypass) ?? POLICY_DEFAULTS.allowBypass,
    askTimeoutMs: last((p) => p.askTimeout) ?? POLICY_DEFAULTS.askTimeoutMs,
    unanalyzable: last((p) => p.unanalyzable) ?? POLICY_DEFAULTS.unanalyzable,
    maxCommandLength: last((p) => p.maxCommandLength) ?? POLICY_DEFAULTS.maxCommandLength,
    interactive: last((p) => p.interactive) ?? POLICY_DEFAULTS.interactive,
    commands: { deny: rules("deny"), allow: rules("allow"), ask: rules("ask") },
    files: {
      default: last((p) => p.files?.default),
      deny: files.flatMap((f) => f.policy.files?.deny ?? []),
      allowRoots: files.flatMap((f) => f.policy.files?.allowRoots ?? []),
    },
    mcp: {
      default: last((p) => p.mcp?.default),
      allow: mcpRules("allow"),
      deny: mcpRules("deny"),
    },
    permissions: last((p) => p.permissions) ?? POLICY_DEFAULTS.permissions,
    spec: {
      envAllow: files.flatMap((f) => f.policy.spec?.env?.allow ?? []),
      mcpServers: last((p) => p.spec?.mcpServers) ?? POLICY_DEFAULTS.specMcpServers,
      maxSandbox: last((p) => p.spec?.maxSandbox) ?? POLICY_DEFAULTS.specMaxSandbox,
      maxWebSearch: last((p) => p.spec?.maxWebSearch) ?? POLICY_DEFAULTS.specMaxWebSearch,
    },
    budgets: mergeBudgets(files.map((f) => f.policy.budgets)),
    // Shadowing is a property of one file, never inherited.
    mode: own.mode ?? "enforce",
    shadows: own.shadows,
  };
}

/** Each cap from the last file that sets it; `unlimited` (null) is a setting, not a gap. */
function mergeBudgets(layers: Array<PolicyFile["budgets"]>): MergedBudgets {
  const merged: MergedBudgets = { ...POLICY_DEFAULTS.budgets };
  for (const layer of layers) {
    if (layer === undefined) continue;
    if (layer.sessionTokens !== undefined) merged.sessionTokens = layer.sessionTokens;
    if (layer.fleetTokensPerHour !== undefined) {
      merged.fleetTokensPerHour = layer.fleetTokensPerHour;
    }
    if (layer.fleetTokensPerDay !== undefined) merged.fleetTokensPerDay = layer.fleetTokensPerDay;
    if (layer.countCachedInput !== undefined) merged.countCachedInput = layer.countCachedInput;
  }
  return merged;
}

function duplicateRuleId(merged: MergedPolicy): string | undefined {
  const seen = new Set<string>();
  const all = [
    ...merged.commands.deny,
    ...merged.commands.allow,
    ...merged.commands.ask,
    ...merged.mcp.allow,
    ...merged.mcp.deny,
  ];
  for (const rule of all) {
    if (seen.has(rule.id)) return rule.id;
    seen.add(rule.id);
  }
  return undefined;
}

function zodIssue(
  i: z.core.$ZodIssue,
  issue: (path: Path, message: string, atKey?: boolean) => PolicyIssue,
): PolicyIssue[] {
  const path = i.path.filter((p): p is string | number => typeof p !== "symbol");
  if (i.code === "unrecognized_keys") {
    return i.keys.map((k) => issue([...path, k], `unknown key ${k}`, true));
  }
  return [issue(path, i.message)];
}

export function keyPath(path: Path): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? p : `.${p}`;
  return out;
}

/** The line and column of the deepest node on `path` (a key itself for unknown keys). */
function locateIn(
  root: unknown,
  lineCounter: LineCounter,
  path: Path,
  atKey: boolean,
): { line: number; col: number } {
  let node = root as Node | null | undefined;
  let offset = (node as Node | undefined)?.range?.[0] ?? 0;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === segment);
      if (pair === undefined) break;
      const key = pair.key as Node;
      const value = pair.value as Node | null;
      offset = value?.range?.[0] ?? key.range?.[0] ?? offset;
      // Unknown keys are reported at the key itself, values where they start.
      if (atKey && segment === path[path.length - 1] && key.range) offset = key.range[0];
      node = value;
    } else if (isSeq(node) && typeof segment === "number") {
      const item = node.items[segment] as Node | undefined;
      if (item === undefined) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return lineCounter.linePos(offset);
}

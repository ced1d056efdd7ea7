/**
 * The policies of one directory, swapped in as a whole on reload. A file that fails to load
 * keeps its previous version (and the reload reports why), so a typo never leaves a running
 * fleet without a policy.
 */
import type { ShellAnalyzer } from "./analyzer.ts";
import type { CompiledPolicy } from "./compiled-policy.ts";
import {
  type PolicyIssue,
  PolicyLoadError,
  ShadowPolicyNotUsable,
  UnknownPolicy,
} from "./policy-errors.ts";
import { loadPolicies, policyFilesIn } from "./policy-loader.ts";
import { defaultShellAnalyzer } from "./shell-analyzer.ts";

export interface OpenPolicyStoreOptions {
  /** Defaults to the tree-sitter analyzer with the built-in rules. */
  analyzer?: ShellAnalyzer;
  /** Throw {@link PolicyLoadError} when any file fails to load (daemon start-up). */
  requireAll?: boolean;
}

export interface PolicySummary {
  name: string;
  version: string;
  file?: string;
  mode: "enforce" | "shadow";
  shadows?: string;
  default: "allow" | "deny" | "ask";
  allowBypass: boolean;
  /** Set when the file currently on disk failed to load and this is the previous version. */
  stale?: boolean;
}

export interface ReloadResult {
  /** Problems of files that did not load; each such policy keeps its previous version. */
  issues: PolicyIssue[];
  /** Policy names whose version changed, appeared or disappeared. */
  changed: string[];
}

interface Snapshot {
  policies: ReadonlyMap<string, CompiledPolicy>;
  stale: ReadonlySet<string>;
  /** Shadow policies by the fleet they shadow. */
  shadows: ReadonlyMap<string, readonly CompiledPolicy[]>;
  issues: readonly PolicyIssue[];
}

export class PolicyStore {
  readonly dir: string;
  readonly analyzer: ShellAnalyzer;
  #snapshot: Snapshot = { policies: new Map(), stale: new Set(), shadows: new Map(), issues: [] };

  /** Loads `dir` at once; see {@link reload} for the problems of the first load. */
  constructor(dir: string, analyzer: ShellAnalyzer) {
    this.dir = dir;
    this.analyzer = analyzer;
    this.reload();
  }

  static async open(dir: string, options: OpenPolicyStoreOptions = {}): Promise<PolicyStore> {
    const store = new PolicyStore(dir, options.analyzer ?? await defaultShellAnalyzer());
    if (options.requireAll && store.issues().length > 0) {
      throw new PolicyLoadError([...store.issues()]);
    }
    return store;
  }

  /** Re-reads the directory and swaps the new set in with one assignment. */
  reload(): ReloadResult {
    const previous = this.#snapshot;
    let files: string[];
    try {
      files = policyFilesIn(this.dir);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const issue = {
        file: this.dir,
        line: 1,
        col: 1,
        key: "",
        message: `cannot list: ${message}`,
      };
      this.#snapshot = { ...previous, issues: [issue] };
      return { issues: [issue], changed: [] };
    }
    const { policies, issues } = loadPolicies(files, this.analyzer);
    const next = new Map(policies);
    const stale = new Set<string>();
    for (const name of issues.keys()) {
      const old = previous.policies.get(name);
      if (old !== undefined && !next.has(name)) {
        next.set(name, old);
        stale.add(name);
      }
    }
    const shadows = new Map<string, CompiledPolicy[]>();
    for (const policy of next.values()) {
      const target = policy.merged.shadows;
      if (policy.merged.mode !== "shadow" || target === undefined) continue;
      shadows.set(target, [...(shadows.get(target) ?? []), policy]);
    }
    const allIssues = [...issues.values()].flat();
    const changed = [...new Set([...previous.policies.keys(), ...next.keys()])]
      .filter((n) => previous.policies.get(n)?.version !== next.get(n)?.version).sort();
    this.#snapshot = { policies: next, stale, shadows, issues: allIssues };
    return { issues: allIssues, changed };
  }

  /** The problems of the last reload. */
  issues(): readonly PolicyIssue[] {
    return this.#snapshot.issues;
  }

  /** A policy sessions can run under; throws {@link UnknownPolicy} or {@link ShadowPolicyNotUsable}. */
  get(name: string): CompiledPolicy {
    const policy = this.#snapshot.policies.get(name);
    if (policy === undefined) throw new UnknownPolicy(name, [...this.#snapshot.policies.keys()]);
    if (policy.merged.mode === "shadow") {
      throw new ShadowPolicyNotUsable(name, policy.merged.shadows ?? "");
    }
    return policy;
  }

  has(name: string): boolean {
    return this.#snapshot.policies.has(name);
  }

  /** Shadow policies evaluated beside `fleet`'s. */
  shadowsOf(name: string): readonly CompiledPolicy[] {
    return this.#snapshot.shadows.get(name) ?? [];
  }

  list(): PolicySummary[] {
    const { policies, stale } = this.#snapshot;
    return [...policies.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((p) => ({
      name: p.name,
      version: p.version,
      file: p.file,
      mode: p.merged.mode,
      shadows: p.merged.shadows,
      default: p.merged.default,
      allowBypass: p.merged.allowBypass,
      ...(stale.has(p.name) ? { stale: true } : {}),
    }));
  }
}

/**
 * The policy half of the SessionService: listing, reloading and dry-running fleet policies.
 * Nothing here touches a session, so it lives apart from the session manager.
 */
import { evaluate } from "../approval/engine.ts";
import type { PolicyStore } from "../approval/policy-store.ts";
import type { ApprovalRequest } from "../provider/types.ts";
import type {
  EvaluateRequest,
  EvaluateResult,
  PolicySummary,
  ReloadReport,
} from "../api/schemas.ts";

export class PolicyRoutes {
  readonly #policies: PolicyStore;

  constructor(policies: PolicyStore) {
    this.#policies = policies;
  }

  list(): PolicySummary[] {
    return this.#policies.list();
  }

  /** Problems of files that failed to load are reported, not thrown; they keep their version. */
  reload(): ReloadReport {
    const result = this.#policies.reload();
    return {
      ok: result.issues.length === 0,
      issues: result.issues,
      changed: result.changed,
      policies: this.#policies.list(),
    };
  }

  /** A command or file change judged as if codex had asked, without running anything. */
  evaluate(body: EvaluateRequest): EvaluateResult {
    const policy = this.#policies.get(body.policy);
    // Without a cwd, a command is judged as run in a worktree nobody knows: `..` leaves it.
    const worktree = body.cwd;
    const request: ApprovalRequest = body.command !== undefined
      ? { kind: "command", command: body.command, cwd: worktree ?? "" }
      : { kind: "fileChange", paths: body.paths ?? [] };
    const decided = evaluate(
      policy,
      request,
      {
        ...(worktree !== undefined && { worktree }),
        permissionMode: body.permissionMode ?? "default",
      },
      this.#policies.analyzer,
    );
    return {
      decision: decided.decision,
      ...(decided.ruleId && { ruleId: decided.ruleId }),
      source: decided.source,
      reason: decided.reason,
      policyVersion: policy.version,
    };
  }
}

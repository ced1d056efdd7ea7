/** Errors of policy loading and lookup. */
import { CodexdError } from "../errors.ts";

/** One problem in a policy file, located for `file:line:col: key: message`. */
export interface PolicyIssue {
  file: string;
  line: number;
  col: number;
  /** Key path such as `commands.deny[0].regex`; empty for the whole file. */
  key: string;
  message: string;
}

export function formatIssue(issue: PolicyIssue): string {
  const key = issue.key === "" ? "" : `${issue.key}: `;
  return `${issue.file}:${issue.line}:${issue.col}: ${key}${issue.message}`;
}

/** A policy name no loaded policy has; spawn refuses the session. */
export class UnknownPolicy extends CodexdError {
  constructor(readonly policy: string, known: readonly string[]) {
    super(
      "unknown_policy",
      `Unknown policy ${policy}: loaded policies are ${known.length ? known.join(", ") : "none"}`,
    );
  }
}

/** A shadow policy decides nothing, so no session can run under it. */
export class ShadowPolicyNotUsable extends CodexdError {
  constructor(readonly policy: string, shadows: string) {
    super(
      "shadow_policy",
      `Cannot use policy ${policy}: it is a shadow of ${shadows} and decides nothing`,
    );
  }
}

/** Policy files failed to load; `issues` says where and why. */
export class PolicyLoadError extends CodexdError {
  constructor(readonly issues: PolicyIssue[]) {
    super("policy_invalid", `Cannot load policies:\n${issues.map(formatIssue).join("\n")}`);
  }
}

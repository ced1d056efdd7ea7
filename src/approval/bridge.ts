/**
 * The Approver codex's tool calls pass through. Each request is judged by the engine under the
 * session's fleet policy (read from the store on every call, so a reload applies at once);
 * `ask` decisions are held until a person answers, the policy's askTimeout runs out, or the
 * request's signal aborts. Shadow policies are evaluated beside and only reported.
 */
import type {
  ApprovalContext,
  ApprovalRequest,
  ApprovalVerdict,
  Approver,
} from "../provider/types.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { CompiledPolicy } from "./compiled-policy.ts";
import { type EngineDecision, evaluate } from "./engine.ts";
import type { PolicyStore } from "./policy-store.ts";
import { existingRealpath } from "./realpath.ts";
import { configuredHooksDir } from "./hook-files.ts";

export interface RequestSummary {
  kind: ApprovalRequest["kind"];
  command?: string;
  paths?: string[];
  server?: string;
  tool?: string;
}

export interface PendingAsk {
  requestId: string;
  sessionId: string;
  policy: string;
  request: RequestSummary;
  ruleId?: string;
  reason: string;
  /** ISO timestamps. */
  since: string;
  deadline: string;
}

interface Held {
  info: PendingAsk;
  settle: (decision: "allow" | "deny", source: string, reason: string) => void;
}

export interface ApprovalBridgeOptions {
  clock?: Clock;
}

export class ApprovalBridge implements Approver {
  readonly #store: PolicyStore;
  readonly #clock: Clock;
  readonly #held = new Map<string, Held>();
  /**
   * Per session, the files a downloader wrote in an allowed command: running one later is
   * declined. Bounded: the oldest sessions are forgotten first.
   */
  readonly #tainted = new Map<string, Set<string>>();

  constructor(store: PolicyStore, options: ApprovalBridgeOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
  }

  decide(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalVerdict> {
    let policy: CompiledPolicy;
    try {
      policy = this.#store.get(context.policy);
    } catch (error) {
      return Promise.resolve({
        decision: "deny",
        ruleId: "unknown-policy",
        source: "default",
        reason: error instanceof Error ? error.message : String(error),
      });
    }
    const tainted = this.#tainted.get(context.sessionId);
    const facts = {
      worktree: context.worktree,
      permissionMode: context.permissionMode,
      permissionConfig: context.permissionConfig,
      ...(tainted !== undefined && { tainted }),
      realpath: existingRealpath,
      hooksDir: once(() => configuredHooksDir(context.worktree)),
    };
    let decided: EngineDecision;
    let extraEvents: ApprovalVerdict["extraEvents"];
    try {
      decided = evaluate(policy, request, facts, this.#store.analyzer);
      extraEvents = this.#shadowEvents(policy, decided, request, facts);
    } catch (error) {
      // Fail closed: a request the engine could not judge is declined, never allowed.
      return Promise.resolve({
        decision: "deny",
        ruleId: "engine-error",
        source: "default",
        reason: `Cannot judge the request: ${
          error instanceof Error ? error.message : String(error)
        }`,
        policyVersion: policy.version,
      });
    }
    if (decided.decision !== "ask") {
      if (decided.decision === "allow") this.#taint(request, context);
      return Promise.resolve(verdict(decided, decided.decision, policy, extraEvents));
    }
    return this.#hold(policy, decided, request, context, extraEvents).then((v) => {
      if (v.decision === "allow") this.#taint(request, context);
      return v;
    });
  }

  /** Remembers what an allowed command downloads, so that running it later is declined. */
  #taint(request: ApprovalRequest, context: ApprovalContext): void {
    if (request.kind !== "command") return;
    const analyzer = this.#store.analyzer;
    if (analyzer.downloadedFiles === undefined) return;
    const files = analyzer.downloadedFiles(analyzer.analyze(request.command), {
      worktree: context.worktree,
      ...(request.cwd !== "" && { cwd: request.cwd }),
    });
    if (files.length === 0) return;
    let set = this.#tainted.get(context.sessionId);
    if (set === undefined) {
      set = new Set();
      this.#tainted.set(context.sessionId, set);
      if (this.#tainted.size > 10_000) this.#tainted.delete(this.#tainted.keys().next().value!);
    }
    for (const file of files) if (set.size < 4096) set.add(file);
  }

  /** Requests waiting for a person, oldest first. */
  pending(sessionId?: string): PendingAsk[] {
    return [...this.#held.values()].map((h) => h.info)
      .filter((p) => sessionId === undefined || p.sessionId === sessionId);
  }

  /** Answers a held request; false when it is not (or no longer) waiting. */
  answer(requestId: string, decision: "allow" | "deny", options: { by?: string } = {}): boolean {
    const held = this.#held.get(requestId);
    if (held === undefined) return false;
    const who = options.by ?? "a person";
    held.settle(decision, "person", `${decision === "allow" ? "allowed" : "denied"} by ${who}`);
    return true;
  }

  #hold(
    policy: CompiledPolicy,
    decided: EngineDecision,
    request: ApprovalRequest,
    context: ApprovalContext,
    extraEvents: ApprovalVerdict["extraEvents"],
  ): Promise<ApprovalVerdict> {
    const timeoutMs = policy.merged.askTimeoutMs;
    const now = this.#clock.now();
    const info: PendingAsk = {
      requestId: context.requestId,
      sessionId: context.sessionId,
      policy: policy.name,
      request: summarize(request),
      ruleId: decided.ruleId,
      reason: decided.reason,
      since: new Date(now).toISOString(),
      deadline: new Date(now + timeoutMs).toISOString(),
    };
    return new Promise((resolve) => {
      let cancelTimer = () => {};
      const onAbort = () =>
        settle("deny", "cancelled", "the request was cancelled before anyone answered");
      const settle = (decision: "allow" | "deny", source: string, why: string) => {
        if (this.#held.get(context.requestId)?.settle !== settle) return;
        this.#held.delete(context.requestId);
        cancelTimer();
        context.signal?.removeEventListener("abort", onAbort);
        resolve({
          decision,
          ruleId: decided.ruleId,
          source,
          reason: `${why} (asked because: ${decided.reason})`,
          policyVersion: policy.version,
          ...(extraEvents ? { extraEvents } : {}),
        });
      };
      // A second ask with the same id replaces nothing: the first keeps its slot.
      if (this.#held.has(context.requestId)) {
        resolve({
          decision: "deny",
          ruleId: decided.ruleId,
          source: "default",
          reason: `request id ${context.requestId} is already waiting for an answer`,
          policyVersion: policy.version,
        });
        return;
      }
      if (context.signal?.aborted) {
        this.#held.set(context.requestId, { info, settle });
        onAbort();
        return;
      }
      this.#held.set(context.requestId, { info, settle });
      context.signal?.addEventListener("abort", onAbort, { once: true });
      cancelTimer = this.#clock.setTimer(
        () => settle("deny", "timeout", `nobody answered within ${timeoutMs} ms`),
        timeoutMs,
      );
    });
  }

  #shadowEvents(
    policy: CompiledPolicy,
    actual: EngineDecision,
    request: ApprovalRequest,
    facts: Parameters<typeof evaluate>[2],
  ): ApprovalVerdict["extraEvents"] {
    const shadows = this.#store.shadowsOf(policy.name);
    if (shadows.length === 0) return undefined;
    const events: NonNullable<ApprovalVerdict["extraEvents"]> = [];
    for (const shadow of shadows) {
      const would = evaluate(shadow, request, facts, this.#store.analyzer);
      if (would.decision === actual.decision) continue;
      events.push({
        type: "policy.shadow",
        policy: shadow.name,
        policyVersion: shadow.version,
        request: summarize(request),
        shadow: {
          decision: would.decision,
          ruleId: would.ruleId,
          source: would.source,
          reason: would.reason,
        },
        actual: {
          policy: policy.name,
          policyVersion: policy.version,
          decision: actual.decision,
          ruleId: actual.ruleId,
          source: actual.source,
          reason: actual.reason,
        },
      });
    }
    return events.length > 0 ? events : undefined;
  }
}

function verdict(
  decided: EngineDecision,
  decision: "allow" | "deny",
  policy: CompiledPolicy,
  extraEvents: ApprovalVerdict["extraEvents"],
): ApprovalVerdict {
  return {
    decision,
    ruleId: decided.ruleId,
    source: decided.source,
    reason: decided.reason,
    policyVersion: policy.version,
    ...(extraEvents ? { extraEvents } : {}),
  };
}

export function summarize(request: ApprovalRequest): RequestSummary {
  switch (request.kind) {
    case "command":
    case "writeStdin":
      return { kind: request.kind, command: request.command };
    case "fileChange":
      return { kind: request.kind, paths: [...request.paths] };
    case "mcpTool":
      return { kind: request.kind, server: request.server, tool: request.tool };
    case "permissions":
      return { kind: request.kind };
  }
}

/** `f`'s value, computed on the first call only. */
function once<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) [value, done] = [f(), true];
    return value;
  };
}

/**
 * Token budgets: what sessions and fleets spent, against the caps of their policy (`budgets:` in
 * a fleet policy, `budget: {tokens}` in a spec).
 *
 * - **What counts**: each model response's usage as codex reports it (`thread/tokenUsage/updated`,
 *   journaled as a `usage` event): input + output tokens (reasoning tokens are part of output);
 *   cached input is part of input and counts unless the policy says `countCachedInput: false`.
 * - **Session cap**: over the session's whole life, across turns, resumes and restarts; the spec's
 *   `budget.tokens` if given (never above the policy's `sessionTokens`), else the policy's.
 * - **Fleet caps**: over *rolling* windows, the last 60 minutes and the last 24 hours, so a window
 *   never resets all at once: spend leaves it an hour (a day) after it was spent, and a refused
 *   request is told the exact time enough of it has left for the fleet to be under its cap.
 * - **Thresholds**: a spend at or over a cap is exhausted (a spawn, resume or turn is refused, a
 *   running turn stopped); crossing 80 % of a cap is reported once per crossing (a window that
 *   drops below 80 % and climbs again reports again).
 *
 * Every response's spend is a row of `token_spend` (fleet, session, time, tokens) and is added to
 * the session's row of `session_spend` (store.ts), in the same grouped transaction as the event
 * that reported it; the windows are rebuilt from the last 24 hours of rows at start-up.
 */
import { CodexdError } from "../errors.ts";
import { SpecRefused } from "../approval/spec-guard.ts";
import type { MergedBudgets } from "../approval/policy-schema.ts";
import type { BudgetReport, Usage } from "../provider/events.ts";
import type { Spec } from "../provider/spec.ts";
import type { Store } from "./store.ts";

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** The share of a cap at which a `budget_warning` is reported. */
export const WARNING_RATIO = 0.8;

export type BudgetScope = BudgetReport["scope"];
export type BudgetLimits = MergedBudgets;

/** A usage report: one response's usage and, where codex gave it, the thread's running total. */
export type UsageReport = Usage & { total?: Usage };

/** The tokens a response's usage counts for against the budgets. */
export function countedTokens(usage: Usage, countCachedInput: boolean): number {
  const input = countCachedInput
    ? usage.inputTokens
    : Math.max(0, usage.inputTokens - usage.cachedInputTokens);
  return Math.max(0, input + usage.outputTokens);
}

/** The session's cap: the spec's budget, else the policy's (null: none). */
export function sessionCap(limits: BudgetLimits, specTokens: number | undefined): number | null {
  if (specTokens === undefined) return limits.sessionTokens;
  return limits.sessionTokens === null ? specTokens : Math.min(specTokens, limits.sessionTokens);
}

/** A spec's `budget.tokens` above its policy's `budgets.sessionTokens` → 400 naming the field. */
export function checkSpecBudget(action: string, spec: Spec, limits: BudgetLimits): void {
  const asked = spec.budget?.tokens;
  const most = limits.sessionTokens;
  if (asked === undefined || most === null || asked <= most) return;
  throw new SpecRefused(action, [{
    path: "budget.tokens",
    rule: "budget.max",
    message: `${asked} is more than policy ${spec.policy} allows a session ` +
      `(budgets.sessionTokens: ${most})`,
  }]);
}

/**
 * The tokens spent in the last `spanMs` milliseconds: entries at times in `(now - span, now]`.
 * Entries are added in time order (an earlier time is taken as the latest one: a clock that went
 * back keeps spend in the window longer, never shorter); reads evict what left the window.
 */
export class RollingWindow {
  readonly spanMs: number;
  #entries: Array<{ at: number; tokens: number }> = [];
  #head = 0;
  #sum = 0;

  constructor(spanMs: number) {
    this.spanMs = spanMs;
  }

  add(at: number, tokens: number): void {
    if (tokens <= 0) return;
    const last = this.#entries.at(-1);
    const time = last !== undefined && last.at > at ? last.at : at;
    if (last !== undefined && last.at === time && this.#head < this.#entries.length) {
      last.tokens += tokens;
    } else {
      this.#entries.push({ at: time, tokens });
    }
    this.#sum += tokens;
  }

  /** Tokens spent in the window ending at `now`. */
  total(now: number): number {
    this.#evict(now);
    return this.#sum;
  }

  /**
   * The earliest time at or after `now` at which the window's spend is below `budget`, were
   * nothing more spent: `now` itself when it already is.
   */
  reopensAt(budget: number, now: number): number {
    this.#evict(now);
    let remaining = this.#sum;
    if (remaining < budget) return now;
    for (let i = this.#head; i < this.#entries.length; i++) {
      const entry = this.#entries[i];
      remaining -= entry.tokens;
      if (remaining < budget) return entry.at + this.spanMs;
    }
    return now; // unreachable for a positive budget: an empty window is below it
  }

  #evict(now: number): void {
    const edge = now - this.spanMs;
    while (this.#head < this.#entries.length && this.#entries[this.#head].at <= edge) {
      this.#sum -= this.#entries[this.#head].tokens;
      this.#head++;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
    if (this.#head === this.#entries.length) this.#sum = 0; // no drift from float sums
  }
}

/** A spawn, resume or turn refused by a budget: 429 with the budget, the spend, the reopening. */
export class BudgetExceeded extends CodexdError {
  readonly report: BudgetReport;
  /** Seconds until the window reopens; null for a session's cap (no time reopens it). */
  readonly retryAfter: number | null;

  constructor(action: string, report: BudgetReport, now: number, sessionId?: string) {
    super("budget_exceeded", `Cannot ${action}: ${describeExhausted(report, sessionId)}`);
    this.report = report;
    this.retryAfter = report.reopensAt === null
      ? null
      : Math.max(1, Math.ceil((Date.parse(report.reopensAt) - now) / 1000));
  }

  /** The 429 answer's `details`. */
  get details(): BudgetReport & { retryAfter: number | null } {
    return { ...this.report, retryAfter: this.retryAfter };
  }
}

/** What a stopped turn's `error.message` and a refusal say about the budget. */
export function describeExhausted(report: BudgetReport, sessionId?: string): string {
  if (report.scope === "session") {
    return `${sessionId ? `session ${sessionId}` : "the session"} spent ${report.spend} tokens ` +
      `of its budget of ${report.budget}; resume it with a larger budget.tokens (at most policy ` +
      `${report.fleet}'s budgets.sessionTokens) to go on`;
  }
  const window = report.scope === "hour" ? "hour" : "24 hours";
  return `fleet ${report.fleet} spent ${report.spend} tokens in the last ${window}, its budget ` +
    `is ${report.budget}` + (report.reopensAt ? `; it has room again at ${report.reopensAt}` : "");
}

export interface BudgetsOptions {
  store: Store;
  /** Milliseconds since the epoch; injectable so tests never wait on the wall clock. */
  now?: () => number;
}

export interface SpendOutcome {
  /** Caps whose 80 % this spend crossed. */
  warnings: BudgetReport[];
  /** Caps this spend crossed (for the metrics: each crossing once). */
  crossed: BudgetReport[];
  /** Caps now exhausted (spend at or over them), crossed now or before. */
  exhausted: BudgetReport[];
}

export interface WindowUsage {
  tokens: number;
  budget: number | null;
  /** When the window has room again, while it is exhausted; else null. */
  reopensAt: string | null;
}

/** The spend of every fleet over the rolling windows, and of every session over its life. */
export class Budgets {
  readonly #store: Store;
  readonly #now: () => number;
  readonly #fleets = new Map<string, { hour: RollingWindow; day: RollingWindow }>();
  /** Lifetime spend of the sessions seen since start (the rest is read from the store). */
  readonly #sessions = new Map<string, number>();
  /** The last total codex reported for each session's thread (null: none yet). */
  readonly #threadTotals = new Map<string, { threadId: string; total: Usage } | null>();
  #lastPrune: number;

  constructor(options: BudgetsOptions) {
    this.#store = options.store;
    this.#now = options.now ?? (() => Date.now());
    const now = this.#now();
    this.#store.pruneSpend(now - DAY_MS);
    this.#lastPrune = now;
    for (const row of this.#store.spendSince(now - DAY_MS)) {
      this.#windows(row.fleet).hour.add(row.at, row.tokens);
      this.#windows(row.fleet).day.add(row.at, row.tokens);
    }
  }

  now(): number {
    return this.#now();
  }

  /** Fleets that spent anything in the last 24 hours. */
  fleetsWithSpend(): string[] {
    const now = this.#now();
    return [...this.#fleets].filter(([, w]) => w.day.total(now) > 0).map(([name]) => name);
  }

  /**
   * The new tokens a usage report stands for: how far the thread's total grew since the last
   * report of the same thread. codex repeats a report when only its rate limits changed, and
   * reports a resumed thread's last usage again (with the old turn's id), neither of which is new
   * spend: both count 0. A thread's first report (or one without a total) counts its response.
   */
  newTokens(
    sessionId: string,
    threadId: string,
    report: UsageReport,
    countCachedInput: boolean,
  ): number {
    const response = countedTokens(report, countCachedInput);
    if (report.total === undefined) return response;
    let previous = this.#threadTotals.get(sessionId);
    if (previous === undefined) {
      previous = this.#store.threadUsage(sessionId) ?? null;
      this.#threadTotals.set(sessionId, previous);
    }
    const total = {
      inputTokens: report.total.inputTokens,
      cachedInputTokens: report.total.cachedInputTokens,
      outputTokens: report.total.outputTokens,
      reasoningTokens: report.total.reasoningTokens,
    };
    this.#threadTotals.set(sessionId, { threadId, total });
    this.#store.setThreadUsage(sessionId, threadId, total);
    if (previous === null || previous.threadId !== threadId) return response;
    const grown = countedTokens(total, countCachedInput) -
      countedTokens(previous.total, countCachedInput);
    // A total below the last one: codex counts afresh; this response is what is known.
    return grown < 0 ? response : grown;
  }

  sessionSpend(sessionId: string): number {
    let spent = this.#sessions.get(sessionId);
    if (spent === undefined) {
      spent = this.#store.sessionSpend(sessionId);
      this.#sessions.set(sessionId, spent);
    }
    return spent;
  }

  /** Counts `tokens` a session of `fleet` spent now; reports the thresholds reached. */
  record(
    fleet: string,
    sessionId: string,
    tokens: number,
    limits: BudgetLimits,
    specTokens?: number,
  ): SpendOutcome {
    const outcome: SpendOutcome = { warnings: [], crossed: [], exhausted: [] };
    if (tokens <= 0) return outcome;
    const now = this.#now();
    const before = this.#reports(fleet, sessionId, limits, specTokens, now);
    this.#store.recordSpend({ fleet, sessionId, at: now, tokens });
    this.#sessions.set(sessionId, this.sessionSpend(sessionId) + tokens);
    const windows = this.#windows(fleet);
    windows.hour.add(now, tokens);
    windows.day.add(now, tokens);
    const after = this.#reports(fleet, sessionId, limits, specTokens, now);
    for (const report of after) {
      const spentBefore = before.find((b) => b.scope === report.scope)?.spend ?? 0;
      const warnAt = report.budget * WARNING_RATIO;
      if (spentBefore < warnAt && report.spend >= warnAt) outcome.warnings.push(report);
      if (spentBefore < report.budget && report.spend >= report.budget) {
        outcome.crossed.push(report);
      }
      if (report.spend >= report.budget) outcome.exhausted.push(report);
    }
    if (now - this.#lastPrune > HOUR_MS) {
      this.#store.pruneSpend(now - DAY_MS);
      this.#lastPrune = now;
    }
    return outcome;
  }

  /**
   * The caps a new turn of this session (or a new session: no id) cannot start under, the one
   * that stays longest first: a session's own cap (no time reopens it), then the window that
   * reopens last. Empty when every cap has room.
   */
  exhausted(
    fleet: string,
    sessionId: string | undefined,
    limits: BudgetLimits,
    specTokens?: number,
  ): BudgetReport[] {
    return this.#reports(fleet, sessionId, limits, specTokens, this.#now())
      .filter((r) => r.spend >= r.budget)
      .sort((a, b) =>
        a.reopensAt === null
          ? -1
          : b.reopensAt === null
          ? 1
          : b.reopensAt.localeCompare(a.reopensAt)
      );
  }

  /** A fleet's spend over the last hour and the last 24 hours, with its caps. */
  usage(fleet: string, limits: BudgetLimits | undefined): {
    lastHour: WindowUsage;
    lastDay: WindowUsage;
  } {
    const now = this.#now();
    const windows = this.#windows(fleet);
    const of = (window: RollingWindow, budget: number | null): WindowUsage => {
      const tokens = window.total(now);
      const exhausted = budget !== null && tokens >= budget;
      return {
        tokens,
        budget,
        reopensAt: exhausted ? new Date(window.reopensAt(budget, now)).toISOString() : null,
      };
    };
    return {
      lastHour: of(windows.hour, limits?.fleetTokensPerHour ?? null),
      lastDay: of(windows.day, limits?.fleetTokensPerDay ?? null),
    };
  }

  /** Every capped scope with its spend now. */
  #reports(
    fleet: string,
    sessionId: string | undefined,
    limits: BudgetLimits,
    specTokens: number | undefined,
    now: number,
  ): BudgetReport[] {
    const reports: BudgetReport[] = [];
    const cap = sessionCap(limits, specTokens);
    if (cap !== null) {
      reports.push({
        scope: "session",
        fleet,
        budget: cap,
        spend: sessionId === undefined ? 0 : this.sessionSpend(sessionId),
        reopensAt: null,
      });
    }
    const windows = this.#windows(fleet);
    for (
      const [scope, window, budget] of [
        ["hour", windows.hour, limits.fleetTokensPerHour],
        ["day", windows.day, limits.fleetTokensPerDay],
      ] as const
    ) {
      if (budget === null) continue;
      const spend = window.total(now);
      reports.push({
        scope,
        fleet,
        budget,
        spend,
        reopensAt: spend >= budget ? new Date(window.reopensAt(budget, now)).toISOString() : null,
      });
    }
    return reports;
  }

  #windows(fleet: string): { hour: RollingWindow; day: RollingWindow } {
    let windows = this.#fleets.get(fleet);
    if (!windows) {
      windows = { hour: new RollingWindow(HOUR_MS), day: new RollingWindow(DAY_MS) };
      this.#fleets.set(fleet, windows);
    }
    return windows;
  }
}

/**
 * A small Prometheus registry (text exposition format 0.0.4): counters, gauges and histograms
 * with labels, plus the daemon's own metric set. Small enough not to need a dependency.
 */

type Labels = Record<string, string>;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function labelText(names: readonly string[], values: readonly string[], extra = ""): string {
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i] ?? "")}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(",")}}` : "";
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

abstract class Metric {
  protected readonly series = new Map<string, { values: string[]; state: number[] }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`Invalid metric name ${name}`);
  }
  abstract readonly type: string;
  protected entry(labels: Labels, size: number): number[] {
    const values = this.labelNames.map((n) => labels[n] ?? "");
    const key = JSON.stringify(values);
    let found = this.series.get(key);
    if (!found) {
      found = { values, state: new Array<number>(size).fill(0) };
      this.series.set(key, found);
    }
    return found.state;
  }
  reset(): void {
    this.series.clear();
  }
  abstract renderSamples(): string[];
  render(): string {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`]
      .concat(this.renderSamples()).join("\n");
  }
}

export class Counter extends Metric {
  readonly type = "counter";
  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new Error(`Counter ${this.name} cannot decrease`);
    this.entry(labels, 1)[0] += by;
  }
  get(labels: Labels = {}): number {
    return this.entry(labels, 1)[0];
  }
  renderSamples(): string[] {
    return [...this.series.values()].map(({ values, state }) =>
      `${this.name}${labelText(this.labelNames, values)} ${formatNumber(state[0])}`
    );
  }
}

export class Gauge extends Metric {
  readonly type = "gauge";
  set(labels: Labels, value: number): void {
    this.entry(labels, 1)[0] = value;
  }
  inc(labels: Labels = {}, by = 1): void {
    this.entry(labels, 1)[0] += by;
  }
  get(labels: Labels = {}): number {
    return this.entry(labels, 1)[0];
  }
  renderSamples(): string[] {
    return [...this.series.values()].map(({ values, state }) =>
      `${this.name}${labelText(this.labelNames, values)} ${formatNumber(state[0])}`
    );
  }
}

export class Histogram extends Metric {
  readonly type = "histogram";
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: number[],
  ) {
    super(name, help, labelNames);
  }
  /** state: one count per bucket, then sum, then count. */
  observe(labels: Labels, value: number): void {
    const state = this.entry(labels, this.buckets.length + 2);
    this.buckets.forEach((bound, i) => {
      if (value <= bound) state[i]++;
    });
    state[this.buckets.length] += value;
    state[this.buckets.length + 1]++;
  }
  count(labels: Labels = {}): number {
    return this.entry(labels, this.buckets.length + 2)[this.buckets.length + 1];
  }
  renderSamples(): string[] {
    const lines: string[] = [];
    for (const { values, state } of this.series.values()) {
      const n = this.buckets.length;
      this.buckets.forEach((bound, i) => {
        const le = `le="${formatNumber(bound)}"`;
        lines.push(`${this.name}_bucket${labelText(this.labelNames, values, le)} ${state[i]}`);
      });
      lines.push(
        `${this.name}_bucket${labelText(this.labelNames, values, 'le="+Inf"')} ${state[n + 1]}`,
      );
      lines.push(`${this.name}_sum${labelText(this.labelNames, values)} ${formatNumber(state[n])}`);
      lines.push(`${this.name}_count${labelText(this.labelNames, values)} ${state[n + 1]}`);
    }
    return lines;
  }
}

export class MetricsRegistry {
  readonly #metrics = new Map<string, Metric>();
  readonly #collectors: Array<() => void> = [];
  /** Runs before each render: copies values kept elsewhere into their metrics. */
  collect(collector: () => void): void {
    this.#collectors.push(collector);
  }
  #register<M extends Metric>(metric: M): M {
    if (this.#metrics.has(metric.name)) throw new Error(`Metric ${metric.name} already exists`);
    this.#metrics.set(metric.name, metric);
    return metric;
  }
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#register(new Counter(name, help, labelNames));
  }
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#register(new Gauge(name, help, labelNames));
  }
  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: number[],
  ): Histogram {
    return this.#register(
      new Histogram(name, help, labelNames, [...buckets].sort((a, b) => a - b)),
    );
  }
  render(): string {
    for (const collector of this.#collectors) collector();
    return [...this.#metrics.values()].map((m) => m.render()).join("\n") + "\n";
  }
}

/** The daemon's metrics. The app feeds `requestSeconds` and `sessions`; the service the rest. */
export interface DaemonMetrics {
  registry: MetricsRegistry;
  /** Set at each scrape from the service's session list. Labels: status. */
  sessions: Gauge;
  /** Turns ended. Labels: kind (`completed`, or the error code that ended it). */
  turns: Counter;
  /** Set at each scrape: `ask` approvals waiting for a person. */
  pendingApprovals: Gauge;
  /** Events journaled. Labels: type. */
  events: Counter;
  /** Approval decisions. Labels: decision, source. */
  approvals: Counter;
  codexRestarts: Counter;
  /**
   * Notifications codex sent a session that codexd did not journal, read from the provider's
   * tally at each scrape. Labels: method, reason (`unknown` method, `invalid` params,
   * `no_session`: for no session's thread).
   */
  codexNotificationsUnhandled: Counter;
  /** Requests to codex sent again after codex refused them as transient. Labels: method. */
  rpcRetries: Counter;
  /** Labels: method, route, status. */
  requestSeconds: Histogram;
  /** Set at each scrape: tokens each fleet spent. Labels: fleet, window (`hour`, `day`). */
  fleetTokens: Gauge;
  /** Set at each scrape: each fleet's caps (capped windows only). Labels: fleet, window. */
  fleetTokenBudget: Gauge;
  /** Caps crossed (a turn or session stopped). Labels: fleet, scope (`session`, `hour`, `day`). */
  budgetExceeded: Counter;
  /** Spawns, resumes and turns refused with 429 by a spent cap. Labels: fleet, scope. */
  budgetRefusals: Counter;
}

/** What the metrics read at each scrape from below the daemon. */
export interface MetricSources {
  /** The provider's tally of notifications it did not journal (codex/event-map.ts). */
  unhandledNotifications?: () => Iterable<{ method: string; reason: string; count: number }>;
}

export function createDaemonMetrics(sources: MetricSources = {}): DaemonMetrics {
  const registry = new MetricsRegistry();
  const codexNotificationsUnhandled = registry.counter(
    "codexd_codex_notifications_unhandled_total",
    "codex notifications to sessions that codexd did not journal, by method and reason",
    ["method", "reason"],
  );
  registry.collect(() => {
    codexNotificationsUnhandled.reset();
    for (const { method, reason, count } of sources.unhandledNotifications?.() ?? []) {
      codexNotificationsUnhandled.inc({ method, reason }, count);
    }
  });
  return {
    codexNotificationsUnhandled,
    registry,
    sessions: registry.gauge("codexd_sessions", "Sessions by status", ["status"]),
    turns: registry.counter("codexd_turns_total", "Turns ended, by outcome", ["kind"]),
    pendingApprovals: registry.gauge(
      "codexd_pending_approvals",
      "Approvals held for a person (ask rules)",
    ),
    events: registry.counter("codexd_events_total", "Session events journaled", ["type"]),
    approvals: registry.counter(
      "codexd_approvals_total",
      "Approval decisions by decision and source",
      ["decision", "source"],
    ),
    codexRestarts: registry.counter("codexd_codex_restarts_total", "codex app-server restarts"),
    rpcRetries: registry.counter(
      "codexd_rpc_retries_total",
      "JSON-RPC requests to codex retried after a transient refusal (-32001), by method",
      ["method"],
    ),
    fleetTokens: registry.gauge(
      "codexd_fleet_tokens",
      "Tokens a fleet spent over a rolling window (hour: last 60 minutes, day: last 24 hours)",
      ["fleet", "window"],
    ),
    fleetTokenBudget: registry.gauge(
      "codexd_fleet_token_budget",
      "A fleet's token cap over a rolling window (only capped windows)",
      ["fleet", "window"],
    ),
    budgetExceeded: registry.counter(
      "codexd_budget_exceeded_total",
      "Token budgets crossed, by fleet and scope (session, hour, day)",
      ["fleet", "scope"],
    ),
    budgetRefusals: registry.counter(
      "codexd_budget_refusals_total",
      "Spawns, resumes and turns refused (429) because a token budget was spent",
      ["fleet", "scope"],
    ),
    requestSeconds: registry.histogram(
      "codexd_http_request_duration_seconds",
      "HTTP request latency by route",
      ["method", "route", "status"],
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
  };
}

/** The targets of issue 6, checked against the figures, and the markdown printed on stdout. */
import type { ConcurrencyResult } from "./concurrency.ts";
import type { MachineInfo } from "./machine.ts";
import { findNumber, type PolicyResult } from "./policy.ts";
import type { StartupResult } from "./startup.ts";
import type { ThroughputFigures, ThroughputResult } from "./throughput.ts";
import type { TurnOverheadResult } from "./turn-overhead.ts";
import type { TurnProfile } from "./profile.ts";
import { scaleMarkdown, type ScaleResults, scaleTargets } from "./report-scale.ts";

export interface BenchResults extends ScaleResults {
  date: string;
  quick: boolean;
  machine: MachineInfo;
  codexVersion: string;
  daemon: { mode: string; how: string };
  /** Where the scripted model ran: its own process, or the bench's. */
  model: string;
  /** How the direct clients start their threads (like with like, or bare). */
  directThreads?: string;
  turnOverhead?: TurnOverheadResult;
  /** Run when daemon/direct misses its target: where a turn's time goes. */
  turnProfile?: TurnProfile;
  throughput?: ThroughputResult;
  concurrency?: ConcurrencyResult;
  policy?: PolicyResult;
  startup?: StartupResult;
  /** The 1-, 5- and 15-minute load averages at the start and at the end of the run. */
  loadAverage?: { start: number[]; end?: number[] };
  /** Scenario name → why it failed to run. */
  errors: Record<string, string>;
  targets: Target[];
  notes: string[];
}

export interface Target {
  name: string;
  target: string;
  measured: string;
  /** null: not measured in this run. */
  pass: boolean | null;
}

// The keys scripts/bench-policy.ts prints (its PolicyBenchResult), then looser fallbacks.
const COLD_KEYS = ["coldDecisionsPerSecond", "decisionsPerSecond"];
const WARM_KEYS = ["warmDecisionsPerSecond", "decisionsPerSecond"];
const ADVERSARIAL_KEYS = ["adversarialDefaultLimitWorstMs", "adversarialWorstMs", "worstMs"];

function fmt(value: number | null | undefined, unit = "", digits = 1): string {
  if (value == null || !Number.isFinite(value)) return "–";
  return `${value.toLocaleString("en-US", { maximumFractionDigits: digits })}${unit}`;
}

function target(
  name: string,
  goal: string,
  value: number | null | undefined,
  ok: (v: number) => boolean,
  unit = "",
): Target {
  if (value == null) return { name, target: goal, measured: "not measured", pass: null };
  return { name, target: goal, measured: fmt(value, unit, 3), pass: ok(value) };
}

export function checkTargets(r: Omit<BenchResults, "targets">): Target[] {
  const t = r.turnOverhead;
  const level200 = r.concurrency?.levels.find((l) => l.sessions === 200);
  const policy = r.policy?.available ? r.policy.figures : undefined;
  const startup = r.startup?.available ? r.startup.medianMs : undefined;
  return [
    target(
      "daemon/direct per turn (p50)",
      "≤ 1.05",
      t?.ratios.daemonOverDirectP50,
      (v) => v <= 1.05,
      "×",
    ),
    target("exec-per-turn/daemon (p50)", "≥ 2", t?.ratios.execOverDaemonP50, (v) => v >= 2, "×"),
    target("SSE events/s vs direct", "≥ 0.95", r.throughput?.ratio, (v) => v >= 0.95, "×"),
    target(
      "SSE events/s vs direct, codex on a CPU of its own",
      "≥ 0.95",
      pinnedRatio(r.throughput),
      (v) => v >= 0.95,
      "×",
    ),
    level200
      ? {
        name: "200 concurrent sessions complete",
        target: "all 200",
        measured: `${level200.completed}/200`,
        pass: level200.completed === 200 && level200.failures.length === 0,
      }
      : {
        name: "200 concurrent sessions complete",
        target: "all 200",
        measured: r.quick ? "not run (--quick)" : "not measured",
        pass: null,
      },
    target(
      "policy decisions/s, cold (each command parsed)",
      "≥ 100,000",
      policy && findNumber(policy, COLD_KEYS),
      (v) => v >= 100_000,
      "/s",
    ),
    target(
      "policy decisions/s, warm (analyses cached)",
      "≥ 100,000",
      policy && findNumber(policy, WARM_KEYS),
      (v) => v >= 100_000,
      "/s",
    ),
    target(
      "policy adversarial worst case (default limits)",
      "< 10 ms",
      policy && findNumber(policy, ADVERSARIAL_KEYS),
      (v) => v < 10,
      " ms",
    ),
    target("start-up to listening (median)", "< 200 ms", startup, (v) => v < 200, " ms"),
    ...scaleTargets(r),
  ];
}

export function markdown(r: BenchResults): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`## codexd benchmarks${r.quick ? " (--quick)" : ""}`, "");
  out.push(
    `${r.date} · ${m.cpuModel}, ${m.cores} cores, ${fmt(m.memTotalMiB / 1024, " GiB")} · ` +
      `${r.codexVersion} · ${m.runtime} · daemon: ${r.daemon.mode}`,
    "",
  );
  if (r.directThreads) out.push(`Direct clients start threads with ${r.directThreads}.`, "");
  const t = r.turnOverhead;
  if (t) {
    out.push(`### 1. Turn overhead (${t.turns} sequential follow-up turns, one session)`, "");
    out.push("| path | p50 | p95 | vs daemon (p50) |", "| --- | ---: | ---: | ---: |");
    out.push(
      `| a. daemon, HTTP + SSE | ${fmt(t.daemon.p50Ms, " ms")} | ${
        fmt(t.daemon.p95Ms, " ms")
      } | 1 |`,
    );
    out.push(
      `| b. direct stdio JSON-RPC (floor) | ${fmt(t.direct.p50Ms, " ms")} | ${
        fmt(t.direct.p95Ms, " ms")
      } | ${fmt(t.ratios.daemonOverDirectP50 && 1 / t.ratios.daemonOverDirectP50, "×", 2)} |`,
    );
    out.push(
      `| c. \`codex exec\` per turn (${t.exec.n} turns) | ${fmt(t.exec.p50Ms, " ms")} | ${
        fmt(t.exec.p95Ms, " ms")
      } | ${fmt(t.ratios.execOverDaemonP50, "×", 2)} |`,
    );
    out.push("| d. @openai/codex-sdk | not measured | | |", "");
    out.push(
      `a/b = ${fmt(t.ratios.daemonOverDirectP50, "", 3)} at p50 (${
        fmt(t.daemonAddsP50Ms, " ms", 2)
      } per turn), ` +
        `${fmt(t.ratios.daemonOverDirectP95, "", 3)} at p95; c/a = ${
          fmt(t.ratios.execOverDaemonP50, "", 2)
        }. ` +
        `d: ${t.sdk.reason}`,
      "",
    );
  }
  const p = r.turnProfile;
  if (p) {
    out.push(`Where a turn's time goes (median of ${p.turns}, ms):`, "");
    out.push(
      "| | ack | sent → model got request | model → terminal event read | total | events/turn |",
      "| --- | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const [name, v] of [["daemon", p.daemon], ["direct", p.direct]] as const) {
      out.push(
        `| ${name} | ${fmt(v.ackMs, "", 2)} | ${fmt(v.toModelMs, "", 2)} | ${
          fmt(v.modelToEndMs, "", 2)
        } | ${fmt(v.totalMs, "", 2)} | ${fmt(v.eventsPerTurn, "", 0)} |`,
      );
    }
    out.push(
      `| daemon adds | | ${fmt(p.daemonAdds.toModelMs, "", 2)} | ${
        fmt(p.daemonAdds.modelToEndMs, "", 2)
      } | ${fmt(p.daemonAdds.totalMs, "", 2)} | |`,
      "",
    );
  }
  const th = r.throughput;
  if (th) {
    out.push(
      `### 2. Event throughput (${fmt(th.answerChars / 1e6, " MB")} answer in ${
        fmt(th.answerDeltas, "", 0)
      } deltas)`,
      "",
    );
    out.push(...throughputRows(th, "every process on every CPU"));
    if (th.pinned && "skipped" in th.pinned) {
      out.push(`Codex on a CPU of its own: not measured (${th.pinned.skipped}).`, "");
    } else if (th.pinned) {
      out.push(
        ...throughputRows(
          th.pinned,
          `codex (both paths) on CPU ${th.pinned.codexCpus}, every other process on CPU ` +
            th.pinned.otherCpus,
        ),
      );
    }
  }
  const c = r.concurrency;
  if (c) {
    out.push(`### 3. Concurrency (each session: spawn + ${c.followUpTurns} follow-up turns)`, "");
    out.push(
      "| sessions | completed | wall | turn p50 | turn p99 | daemon RSS (peak) | codex RSS (peak) | direct wall | direct turn p50 |",
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const l of c.levels) {
      out.push(
        `| ${l.sessions} | ${l.completed} | ${fmt(l.wallMs, " ms", 0)} | ${
          fmt(l.turnP50Ms, " ms")
        } | ${fmt(l.turnP99Ms, " ms")} | ${fmt(l.daemonPeakRssMiB, " MiB")} | ${
          fmt(l.codexPeakRssMiB, " MiB")
        } | ${fmt(l.directWallMs, " ms", 0)} | ${fmt(l.directTurnP50Ms, " ms")} |`,
      );
    }
    out.push("");
  }
  out.push("### 4. Policy engine", "");
  if (!r.policy) out.push("not run", "");
  else if (!r.policy.available) out.push(r.policy.reason, "");
  else {
    out.push("| figure | value |", "| --- | ---: |");
    for (const [key, value] of flatten(r.policy.figures)) out.push(`| ${key} | ${value} |`);
    out.push("");
  }
  out.push("### 5. Start-up (dist/codexd)", "");
  const s = r.startup;
  if (!s) out.push("not run", "");
  else if (!s.available) out.push(`${s.reason}; binary size ${fmt(s.sizeMiB, " MiB")}`, "");
  else {
    out.push(
      `exec → \`listening\`: median ${fmt(s.medianMs, " ms")} of ${s.startsMs.length} (${
        s.startsMs.map((v) => fmt(v)).join(", ")
      } ms), ` +
        `including codex app-server start and initialize; binary ${fmt(s.sizeMiB, " MiB")}`,
      "",
    );
  }
  out.push(...scaleMarkdown(r));
  if (r.loadAverage) {
    out.push(
      `Load average (1, 5, 15 min) at start ${r.loadAverage.start.join(" ")}, at end ${
        r.loadAverage.end?.join(" ") ?? "–"
      }: the machine is shared, so figures of a busy run are noisier.`,
      "",
    );
  }
  out.push("### Targets", "", "| target | goal | measured | |", "| --- | --- | ---: | --- |");
  for (const x of r.targets) {
    out.push(
      `| ${x.name} | ${x.target} | ${x.measured} | ${
        x.pass === null ? "–" : x.pass ? "pass" : "MISS"
      } |`,
    );
  }
  for (const [name, message] of Object.entries(r.errors)) {
    out.push("", `**${name} failed:** ${message}`);
  }
  for (const note of r.notes) out.push("", note);
  return out.join("\n");
}

function flatten(value: Record<string, unknown>, prefix = ""): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const [key, child] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (typeof child === "object" && child !== null && !Array.isArray(child)) {
      rows.push(...flatten(child as Record<string, unknown>, name));
    } else rows.push([name, typeof child === "number" ? fmt(child, "", 3) : JSON.stringify(child)]);
  }
  return rows;
}

/** The figures of one set of throughput runs: a table, then the ratio. */
function throughputRows(th: ThroughputFigures, placement: string): string[] {
  const cpu = (path: { codexCpuMsPerRun: number | null }) =>
    `codex ${fmt(path.codexCpuMsPerRun, " ms", 0)}`;
  return [
    `${placement[0]!.toUpperCase()}${placement.slice(1)}:`,
    "",
    "| reader | delta events/s | deltas received | CPU per run (median) |",
    "| --- | ---: | ---: | ---: |",
    `| daemon SSE client | ${fmt(th.daemon.eventsPerSecond, "", 0)} | ${
      th.daemon.deltasReceived.join(", ")
    } | daemon ${fmt(th.daemon.cpuMsPerRun, " ms", 0)}, its SSE client ${
      fmt(th.daemon.clientCpuMsPerRun ?? null, " ms", 0)
    }, ${cpu(th.daemon)} |`,
    `| direct stdio client | ${fmt(th.direct.eventsPerSecond, "", 0)} | ${
      th.direct.deltasReceived.join(", ")
    } | client ${fmt(th.direct.cpuMsPerRun, " ms", 0)}, ${cpu(th.direct)} |`,
    "",
    `daemon/direct = ${fmt(th.ratio, "", 3)}`,
    "",
  ];
}

function pinnedRatio(th: ThroughputResult | undefined): number | null | undefined {
  return th?.pinned && !("skipped" in th.pinned) ? th.pinned.ratio : undefined;
}

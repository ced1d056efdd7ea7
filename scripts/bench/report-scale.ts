/** The must-shows of issue 14 (scale): their targets and their markdown section. */
import type { ChurnResult } from "./churn.ts";
import type { ConcurrentVsDirectResult } from "./concurrent-vs-direct.ts";
import type { KillChildResult } from "./kill-child.ts";
import type { ManySessionsResult } from "./many-sessions.ts";
import type { RollingRestartResult } from "./rolling-restart.ts";

export interface ScaleResults {
  concurrentVsDirect?: ConcurrentVsDirectResult;
  manySessions?: ManySessionsResult;
  churn?: ChurnResult;
  rollingRestart?: RollingRestartResult;
  killChild?: KillChildResult;
}

export interface ScaleTarget {
  name: string;
  target: string;
  measured: string;
  pass: boolean | null;
}

const n = (value: number | null | undefined, digits = 0) =>
  value == null || !Number.isFinite(value)
    ? "–"
    : value.toLocaleString("en-US", { maximumFractionDigits: digits });

function notRun(name: string, target: string): ScaleTarget {
  return { name, target, measured: "not measured", pass: null };
}

export function scaleTargets(r: ScaleResults): ScaleTarget[] {
  const c = r.concurrentVsDirect;
  const m = r.manySessions;
  const ch = r.churn;
  const rr = r.rollingRestart;
  const k = r.killChild;
  return [
    c
      ? {
        name:
          `${c.sessions} concurrent sessions (spawn + ${c.followUps} turns), daemon/direct wall`,
        target: "≤ 1.25",
        measured: `${n(c.ratio, 3)}× (pool ${c.pool} vs ${c.pool} direct app-server(s))`,
        pass: c.ratio !== null && c.ratio <= 1.25 && c.failures.length === 0,
      }
      : notRun("100 concurrent sessions, daemon/direct wall", "≤ 1.25"),
    m
      ? {
        name: `${m.sessions} concurrent sessions, each its own correct result`,
        target: `all ${m.sessions}`,
        measured: `${m.correct}/${m.sessions}`,
        pass: m.correct === m.sessions,
      }
      : notRun("500 concurrent sessions, each its own correct result", "all 500"),
    m
      ? {
        name: `daemon RSS at ${m.sessions} sessions (peak)`,
        target: "< 300 MiB",
        measured: `${n(m.daemonPeakRssMiB, 1)} MiB`,
        pass: m.daemonPeakRssMiB !== null && m.daemonPeakRssMiB < 300,
      }
      : notRun("daemon RSS at 500 sessions (peak)", "< 300 MiB"),
    ch
      ? {
        name: `churn of ${n(ch.sessions)} sessions: codex RSS end/steady`,
        target: "≤ 1.5, no failed turn",
        measured: `${n(ch.ratio, 2)}× (${n(ch.codexEndMiB)}/${
          n(ch.codexSteadyMiB)
        } MiB), ${ch.failedSessions} failed`,
        pass: ch.ratio !== null && ch.ratio <= 1.5 && ch.failedSessions === 0,
      }
      : notRun("churn of 1,000 sessions: codex RSS end/steady", "≤ 1.5, no failed turn"),
    rr
      ? {
        name: `rolling restart under ${rr.sessions} sessions`,
        target: "0 failed turns",
        measured: `${rr.failedTurns} failed of ${rr.turns + rr.failedTurns}, ${
          rr.everyChildReplaced ? "every child replaced" : "children NOT all replaced"
        }`,
        pass: rr.failedTurns === 0 && rr.everyChildReplaced,
      }
      : notRun("rolling restart under 50 sessions", "0 failed turns"),
    k
      ? {
        name: `kill -9 of one child (pool ${k.pool}, ${k.sessions} sessions)`,
        target: "only its sessions crash",
        measured: `${k.crashed} crashed (${n(k.sessionsOnKilled)} on it), ${k.finishedNormally} ` +
          `finished, ${k.otherFailures.length} other`,
        pass: k.pass,
      }
      : notRun("kill -9 of one child in a pool of 4", "only its sessions crash"),
  ];
}

export function scaleMarkdown(r: ScaleResults): string[] {
  const out: string[] = [];
  const c = r.concurrentVsDirect;
  if (c) {
    out.push(
      `### 6. ${c.sessions} concurrent sessions (spawn + ${c.followUps} turns), daemon vs direct`,
      "",
      `Daemon: \`codex.pool\` ${c.pool}. Direct: ${c.direct}. Runs alternate, ratio per pair.`,
      "",
      "| pair | daemon wall | direct wall | daemon/direct |",
      "| ---: | ---: | ---: | ---: |",
    );
    c.pairs.forEach((p, i) =>
      out.push(
        `| ${i + 1} | ${n(p.daemonWallMs)} ms | ${n(p.directWallMs)} ms | ${n(p.ratio, 3)} |`,
      )
    );
    out.push(
      `| median | ${n(c.daemonWallMs)} ms | ${n(c.directWallMs)} ms | ${n(c.ratio, 3)} |`,
      "",
      `Direct with threads started bare (approval policy and sandbox only, as issue 14's 1.67× ` +
        `was measured): ${n(c.bareDirectWallMs)} ms. ` +
        `daemon RSS peak ${n(c.daemonPeakRssMiB, 1)} MiB; load average ${
          c.loadAverage.before.join(" ")
        } → ${c.loadAverage.after.join(" ")}${
          c.failures.length ? `; failures: ${c.failures.join("; ")}` : ""
        }`,
      "",
    );
  }
  const rows: string[] = [];
  const m = r.manySessions;
  if (m) {
    rows.push(
      `| ${m.sessions} sessions at once (spawn + 1 turn) | ${m.correct}/${m.sessions} correct in ${
        n(m.wallMs)
      } ms; daemon RSS peak ${n(m.daemonPeakRssMiB, 1)} MiB, codex ${
        n(m.codexPeakRssMiB, 1)
      } MiB | ${m.loadAverage.before[0]} |`,
    );
  }
  const ch = r.churn;
  if (ch) {
    rows.push(
      `| churn: ${n(ch.sessions)} sessions (spawn + stop), ${ch.concurrency} at a time, ` +
        `recycle at ${ch.recycle.maxStoppedThreads} stopped threads | codex RSS steady ${
          n(ch.codexSteadyMiB)
        } MiB, peak ${n(ch.codexPeakMiB)} MiB, end ${n(ch.codexEndMiB)} MiB (${
          n(ch.ratio, 2)
        }×); ${ch.failedSessions} failed; ${n(ch.wallMs)} ms | ${ch.loadAverage.before[0]} |`,
    );
  }
  const rr = r.rollingRestart;
  if (rr) {
    rows.push(
      `| rolling restart after ${rr.restartAfterTurns} of ${
        rr.sessions * rr.turnsPerSession
      } turns (${rr.sessions} sessions, pool ${rr.pool}) | ${rr.failedTurns} failed turns; ` +
        `children ${rr.pidsBefore.join(",")} → ${rr.pidsAfter.join(",")} in ${
          n(rr.restartMs)
        } ms | ${rr.loadAverage.before[0]} |`,
    );
  }
  const k = r.killChild;
  if (k) {
    rows.push(
      `| kill -9 of child ${k.killedPid} (pool ${k.pool}, ${k.sessions} sessions in slow turns) | ` +
        `${k.crashed} sessions \`app_server_crashed\` (${
          n(k.sessionsOnKilled)
        } were on it), ${k.finishedNormally} finished normally${
          k.otherFailures.length ? `, other: ${k.otherFailures.join("; ")}` : ""
        } | ${k.loadAverage.before[0]} |`,
    );
  }
  if (rows.length > 0) {
    out.push(
      "### 7. Scale and resilience",
      "",
      "| scenario | outcome | load avg (1 min) |",
      "| --- | --- | ---: |",
      ...rows,
      "",
    );
  }
  return out;
}

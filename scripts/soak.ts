// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * The long version of the load test: N sessions each running turns of M (then starting a new
 * session) against a real `codexd serve` and the scripted model, for K minutes. Prints the
 * daemon's and codex's RSS (total and per live session) every interval, and at the end any gap or
 * duplicate in a session's seqs and any turn without exactly one terminal event. Exits 1 on any.
 *
 *   bun scripts/soak.ts [--sessions 100] [--turns 3] [--minutes 5] [--interval 10]
 */
import process from "node:process";
import { parseArgs } from "node:util";
import type { CodexdClient } from "../src/client.ts";
import { startScriptedModel } from "../src/devtools/scripted-model.ts";
import { makeTempWorktree } from "../test/support/codex-harness.ts";
import { startDaemonProcess } from "../test/support/daemon-process.ts";
import { codexProcessesOf, rssMiB, sequenceProblems } from "./faults/support.ts";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "100" },
    turns: { type: "string", default: "3" },
    minutes: { type: "string", default: "5" },
    interval: { type: "string", default: "10" },
  },
});
const sessions = Number(values.sessions);
const turns = Number(values.turns);
const untilMs = Date.now() + Number(values.minutes) * 60_000;

const model = await startScriptedModel({
  fallback: [{ type: "message", text: "soak answer", deltas: 4 }],
});
const worktree = await makeTempWorktree();
const daemon = await startDaemonProcess({ model });
const { client } = daemon;
const problems: string[] = [];
const counts = { sessions: 0, turns: 0, live: 0 };

async function untilTerminal(c: CodexdClient, id: string, after: number) {
  for await (const event of c.events(id, { after })) {
    if (event.type === "result" || event.type === "error") return event;
  }
  throw new Error(`stream of ${id} ended without a terminal event`);
}

/** One worker: sessions of `turns` turns, one after another, until time is up. */
async function worker(n: number): Promise<void> {
  while (Date.now() < untilMs) {
    const { sessionId } = await client.spawn({ prompt: `soak ${n} turn 0`, cwd: worktree.path });
    counts.sessions++;
    counts.live++;
    try {
      let last = await untilTerminal(client, sessionId, 0);
      for (let t = 1; t < turns; t++) {
        await client.send(sessionId, `soak ${n} turn ${t}`);
        last = await untilTerminal(client, sessionId, last.seq);
        counts.turns++;
      }
      counts.turns++;
      const events = await client.storedEvents(sessionId, { after: 0, limit: 10_000 });
      for (const p of sequenceProblems(events)) problems.push(`${sessionId}: ${p}`);
      const terminals = events.filter((e) => e.type === "result" || e.type === "error").length;
      if (terminals !== turns) problems.push(`${sessionId}: ${terminals} terminal events`);
      await client.stop(sessionId);
    } catch (error) {
      problems.push(`${sessionId}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      counts.live--;
    }
  }
}

function sample(): void {
  const codex = codexProcessesOf(daemon.stateDir);
  const daemonRss = rssMiB(daemon.pid);
  const codexRss = codex.reduce((sum, pid) => sum + rssMiB(pid), 0);
  const per = counts.live > 0 ? (daemonRss + codexRss) / counts.live : Number.NaN;
  console.log(
    [
      new Date().toISOString().slice(11, 19),
      `sessions ${counts.sessions}`,
      `turns ${counts.turns}`,
      `live ${counts.live}`,
      `daemon ${daemonRss.toFixed(0)} MiB`,
      `codex ${codexRss.toFixed(0)} MiB`,
      `per live session ${per.toFixed(2)} MiB`,
      `problems ${problems.length}`,
    ].join("  "),
  );
}

const timer = setInterval(sample, Number(values.interval) * 1000);
sample();
try {
  await Promise.all(Array.from({ length: sessions }, (_, n) => worker(n)));
} finally {
  clearInterval(timer);
  sample();
  await daemon.stop();
  await worktree.remove();
  await model.close();
}
const left = codexProcessesOf(daemon.stateDir).length;
if (left > 0) problems.push(`${left} codex process(es) left after stop`);
console.log(problems.length === 0 ? "soak: no gap, duplicate or lost turn" : problems.join("\n"));
process.exit(problems.length === 0 ? 0 : 1);

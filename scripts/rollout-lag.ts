// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * How long before (or after) its approval request codex writes a tool call to the thread's
 * rollout, for a thread resumed on a fresh app-server (no raw items there): the margin the
 * rollout reader (src/provider/codex/rollout-calls.ts) relies on, and which its wait bounds.
 *
 * Run: `bun scripts/rollout-lag.ts [turns]` (default 30). Starts the real codex against the
 * scripted model, runs one turn, kills it, resumes the thread on a second codex, and plays
 * `turns` turns whose command asks to leave the sandbox (declined; nothing runs). The file is
 * watched and polled every millisecond; each margin is the approval's arrival minus the moment
 * the call's line was first seen (negative: the line came after the request).
 */
import { fstatSync, openSync, readSync, watch } from "node:fs";
import { startScriptedModel, step } from "../src/devtools/scripted-model.ts";
import {
  asRecord,
  LineClient,
  makeTempWorktree,
  startCodex,
} from "../test/support/codex-harness.ts";

const turns = Number(process.argv[2] ?? 30);
const model = await startScriptedModel({
  rules: [
    { marker: "GREET", rounds: [[step.message("hello")]] },
    ...Array.from({ length: turns }, (_, i) => ({
      marker: `LAG${i}_`,
      rounds: [
        [step.exec(`touch lag-${i}`, {
          extra: { sandbox_permissions: "require_escalated" },
          callId: `call_lag_${i}`,
        })],
        [step.message("done")],
      ],
    })),
  ],
});
const worktree = await makeTempWorktree();
const thread = { cwd: worktree.path, approvalPolicy: "untrusted", sandbox: "workspace-write" };

async function playTurn(client: LineClient, threadId: string, text: string): Promise<void> {
  const started = asRecord(
    await client.request("turn/start", {
      threadId,
      input: [{ type: "text", text, text_elements: [] }],
    }),
  );
  const turnId = asRecord(started.turn).id;
  await client.waitForNotification("turn/completed", (p) => asRecord(p.turn).id === turnId, 30_000);
}

const first = await startCodex({ model });
const firstClient = new LineClient(first);
await firstClient.initialize();
const threadId = String(
  asRecord(asRecord(await firstClient.request("thread/start", thread)).thread).id,
);
await playTurn(firstClient, threadId, "GREET");
first.kill();
await first.exited;

const second = await startCodex({ model, codexHome: first.codexHome });
const client = new LineClient(second);
await client.initialize();
const resumed = asRecord(await client.request("thread/resume", { threadId, ...thread }));
const rollout = String(asRecord(resumed.thread).path);

const fd = openSync(rollout, "r");
let offset = fstatSync(fd).size;
let partial = "";
const firstSeen = new Map<string, number>();
let rawItems = 0;
function scan(): void {
  const size = fstatSync(fd).size;
  if (size <= offset) return;
  const bytes = Buffer.alloc(size - offset);
  readSync(fd, bytes, 0, bytes.length, offset);
  offset = size;
  const lines = (partial + bytes.toString("utf8")).split("\n");
  partial = lines.pop() ?? "";
  for (const line of lines) {
    const item = asRecord(asRecord(JSON.parse(line)).payload);
    if (item.type === "function_call" && typeof item.call_id === "string") {
      if (!firstSeen.has(item.call_id)) firstSeen.set(item.call_id, performance.now());
    }
  }
}
const watcher = watch(rollout, scan);
const poll = setInterval(scan, 1);
const margins: number[] = [];
client.onServerRequest((request) => {
  const arrived = performance.now();
  scan();
  const seen = firstSeen.get(String(asRecord(request.params).itemId));
  margins.push(seen === undefined ? Number.NEGATIVE_INFINITY : arrived - seen);
  return { decision: "decline" };
});
for (let i = 0; i < turns; i++) {
  const before = client.messages.length;
  await playTurn(client, threadId, `LAG${i}_ go`);
  rawItems += client.messages.slice(before)
    .filter((m) => m.method === "rawResponseItem/completed").length;
}
clearInterval(poll);
watcher.close();

const sorted = [...margins].sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
console.log(`codex ${second.binary}`);
console.log(`approvals: ${margins.length}, raw items after the resume: ${rawItems}`);
console.log(
  `margin (approval arrival - call line first seen), ms: min ${at(0).toFixed(2)}, ` +
    `median ${at(0.5).toFixed(2)}, max ${at(1).toFixed(2)}; ` +
    `line after the request: ${margins.filter((m) => m < 0).length}`,
);
await second.close();
await first.close();
await worktree.remove();
await model.close();

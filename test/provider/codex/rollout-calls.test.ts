/**
 * The rollout reader (rollout-calls.ts): a resumed thread's tool calls as codex writes them to its
 * rollout file, judged for an approval. Lines as codex 0.169 writes them (trimmed of metadata);
 * the clock and the pause between reads are fake, so a wait costs no time.
 */
import { afterAll, describe, expect, test } from "bun:test";
import {
  appendFileSync,
  mkdtempSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { RolloutCalls } from "../../../src/provider/codex/rollout-calls.ts";
import { functionCallItem } from "../../support/tool-call-item.ts";

const dir = mkdtempSync(path.join(tmpdir(), "codexd-rollout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const ESCALATED = 'sandbox_permissions: "require_escalated"';

/** One rollout line: a response item (a call by default) or an event. */
function line(payload: Record<string, unknown>, type = "response_item"): string {
  return `${
    JSON.stringify({ timestamp: "2026-11-23T18:57:21.169Z", ordinal: 1, type, payload })
  }\n`;
}

function call(callId: string, args: Record<string, unknown> = { cmd: "ls" }): string {
  return line(functionCallItem(args, callId));
}

const escalated = (callId: string) =>
  call(callId, { cmd: "touch x", sandbox_permissions: "require_escalated" });

/**
 * A rollout file with `history` in it, and a reader opened on it whose waits run on a fake
 * clock: each pause advances it and runs `onPause` (what codex writes meanwhile).
 */
async function rollout(history = "", options: { waitMs?: number; maxLineBytes?: number } = {}) {
  const file = path.join(dir, `rollout-${++files}.jsonl`);
  writeFileSync(file, history);
  let time = 0;
  const pauses: Array<() => void> = [];
  const reader = await RolloutCalls.open(file, {
    waitMs: options.waitMs ?? 100,
    pollMs: 10,
    ...(options.maxLineBytes && { maxLineBytes: options.maxLineBytes }),
    now: () => time,
    sleep: (ms) => {
      time += ms;
      pauses.shift()?.();
      return Promise.resolve();
    },
  });
  return {
    file,
    reader,
    append: (text: string) => appendFileSync(file, text),
    /** Runs `write` at the n-th pause of the next wait. */
    duringWait: (n: number, write: () => void) => {
      pauses.length = 0;
      for (let i = 1; i < n; i++) pauses.push(() => {});
      pauses.push(write);
    },
    elapsed: () => time,
  };
}

describe("RolloutCalls", () => {
  test("a call in the rollout: plain, or the escalation its arguments ask for", async () => {
    const r = await rollout();
    r.append(call("c1") + escalated("c2") + call("c3", { cmd: "ls", additional_permissions: {} }));
    expect(await r.reader.judge("c1")).toEqual({ callId: "c1" });
    expect(await r.reader.judge("c2")).toEqual({ callId: "c2", escalation: ESCALATED });
    expect(await r.reader.judge("c3")).toEqual({
      callId: "c3",
      escalation: "additional_permissions: {}",
    });
    expect(r.elapsed()).toBe(0);
  });

  test("not there within the wait: an escalation, after waiting exactly that long", async () => {
    const r = await rollout();
    expect(await r.reader.judge("c1")).toEqual({
      callId: "c1",
      escalation: "tool call c1 not found in codex's rollout within 100 ms",
    });
    expect(r.elapsed()).toBe(100);
  });

  test("a call codex writes while the approval waits is found", async () => {
    const r = await rollout();
    r.duringWait(3, () => r.append(escalated("c1")));
    expect(await r.reader.judge("c1")).toEqual({ callId: "c1", escalation: ESCALATED });
    expect(r.elapsed()).toBe(30);
  });

  test("what the rollout held when the thread was resumed is history, not the calls to come", async () => {
    const r = await rollout(call("c1"));
    expect(await r.reader.judge("c1")).toMatchObject({ escalation: expect.any(String) });
  });

  test("a reused call id keeps any escalation, whichever of its lines came first", async () => {
    const r = await rollout();
    r.append(escalated("c1") + call("c1"));
    expect(await r.reader.judge("c1")).toEqual({ callId: "c1", escalation: ESCALATED });
    // A line written later (by codex, or by a command that can write codex's home) adds to it.
    r.append(call("c1"));
    expect(await r.reader.judge("c1")).toEqual({ callId: "c1", escalation: ESCALATED });
  });

  test("the k-th approval of a call id waits for its k-th line", async () => {
    const r = await rollout();
    r.append(call("c1"));
    expect(await r.reader.judge("c1")).toEqual({ callId: "c1" });
    // The model named two calls alike; the escalated one's line is late: its approval waits.
    r.duringWait(2, () => r.append(escalated("c1")));
    expect(await r.reader.judge("c1")).toEqual({ callId: "c1", escalation: ESCALATED });
    expect(r.elapsed()).toBe(20);
    // A third approval with no third line is not judged on the first two.
    expect(await r.reader.judge("c1")).toMatchObject({
      escalation: "tool call c1 not found in codex's rollout within 100 ms",
    });
  });

  test("callbacks within one call (their own approval ids) share its judgement", async () => {
    const r = await rollout();
    r.append(escalated("c1") + call("c2"));
    expect(await r.reader.judge("c1")).toEqual({ callId: "c1", escalation: ESCALATED });
    expect(await r.reader.judge("c1", { callback: true })).toEqual({
      callId: "c1",
      escalation: ESCALATED,
    });
    expect(await r.reader.judge("c2", { callback: true })).toEqual({ callId: "c2" });
    expect(await r.reader.judge("c2")).toEqual({ callId: "c2" });
    expect(r.elapsed()).toBe(0);
    // A callback of a call not in the rollout is not judged on nothing.
    expect(await r.reader.judge("c3", { callback: true })).toMatchObject({
      escalation: "tool call c3 not found in codex's rollout within 100 ms",
    });
  });

  test("a partial last line is read once complete", async () => {
    const r = await rollout();
    const text = escalated("c1");
    r.append(text.slice(0, 40));
    r.duringWait(2, () => r.append(text.slice(40)));
    expect(await r.reader.judge("c1")).toEqual({ callId: "c1", escalation: ESCALATED });
  });

  test("a line that only quotes a call (a command's output) is no call", async () => {
    const r = await rollout();
    r.append(line({ type: "function_call_output", call_id: "c0", output: call("c1") }));
    r.append(line({ type: "exec_command_begin", call_id: "c1" }, "event_msg"));
    r.append('not json, "response_item" "function_call"\n');
    expect(await r.reader.judge("c1")).toMatchObject({
      escalation: expect.stringMatching(/^tool call c1 not found/),
    });
  });

  test("a call line too long to keep is an escalation of its call id; other long lines are not", async () => {
    const r = await rollout("", { maxLineBytes: 1000 });
    r.append(line({ type: "function_call_output", call_id: "c2", output: "x".repeat(10_000) }));
    r.append(call("c1", { cmd: "echo " + "y".repeat(20_000) }));
    r.append(call("c2"));
    expect(await r.reader.judge("c1")).toEqual({
      callId: "c1",
      escalation: "a tool call too long to read in codex's rollout",
    });
    expect(await r.reader.judge("c2")).toEqual({ callId: "c2" });
  });

  test("a rollout replaced after the resume: every call is an escalation from then on", async () => {
    const r = await rollout();
    const other = `${r.file}.new`;
    writeFileSync(other, call("c1"));
    renameSync(other, r.file);
    const replaced = { escalation: expect.stringContaining("was replaced") };
    expect(await r.reader.judge("c1")).toMatchObject(replaced);
    r.append(call("c2"));
    expect(await r.reader.judge("c2")).toMatchObject(replaced);
  });

  test("a rollout that shrank, or went missing, is no record of the calls", async () => {
    const shrunk = await rollout(call("c0") + call("c0"));
    truncateSync(shrunk.file, 0);
    shrunk.append(call("c1"));
    expect(await shrunk.reader.judge("c1")).toMatchObject({
      escalation: expect.stringContaining("shrank"),
    });
    const gone = await rollout();
    rmSync(gone.file);
    expect(await gone.reader.judge("c1")).toMatchObject({
      escalation: expect.stringContaining("cannot be read"),
    });
  });

  test("a resumed thread with no rollout, or one not there: every call is an escalation", async () => {
    const none = await RolloutCalls.open(null);
    expect(await none.judge("c1")).toEqual({
      callId: "c1",
      escalation: "codex named no rollout for this resumed thread",
    });
    const missing = await RolloutCalls.open(path.join(dir, "missing.jsonl"));
    expect(await missing.judge("c1")).toMatchObject({
      escalation: expect.stringContaining("cannot be read"),
    });
  });

  test("lines across the reader's chunks (and multi-byte text split there) are read whole", async () => {
    const r = await rollout();
    const calls = Array.from({ length: 120 }, (_, i) => `c${i}`);
    r.append(
      calls.map((id, i) =>
        i % 7 === 3 ? escalated(id) : call(id, { cmd: `echo ${"é✓".repeat(400 + i)}` })
      ).join(""),
    );
    const judged = await Promise.all(calls.map((id) => r.reader.judge(id)));
    expect(judged.filter((j) => j.escalation !== undefined).map((j) => j.callId)).toEqual(
      calls.filter((_, i) => i % 7 === 3),
    );
    expect(judged.every((j) => j.escalation === undefined || j.escalation === ESCALATED)).toBe(
      true,
    );
  });

  test("a started thread's reader reads from the start, once codex wrote the file", async () => {
    const file = path.join(dir, `rollout-${++files}.jsonl`);
    let time = 0;
    const reader = RolloutCalls.fresh(file, {
      waitMs: 30,
      pollMs: 10,
      now: () => time,
      sleep: (ms) => Promise.resolve(void (time += ms)),
    });
    expect(await reader.judge("c0")).toMatchObject({
      escalation: expect.stringContaining("cannot be read"),
    });
    writeFileSync(file, escalated("c1") + call("c2"));
    expect(await reader.judge("c1")).toEqual({ callId: "c1", escalation: ESCALATED });
    expect(await reader.judge("c2")).toEqual({ callId: "c2" });
    // Once read, the file is the thread's: replaced, it is no record of the calls.
    writeFileSync(`${file}.new`, escalated("c1") + call("c2") + call("c3"));
    renameSync(`${file}.new`, file);
    expect(await reader.judge("c3")).toMatchObject({
      escalation: expect.stringContaining("was replaced"),
    });
  });

  test("approvals asked at once share the reads", async () => {
    const r = await rollout();
    r.append(escalated("c1") + call("c2"));
    expect(await Promise.all([r.reader.judge("c1"), r.reader.judge("c2")])).toEqual([
      { callId: "c1", escalation: ESCALATED },
      { callId: "c2" },
    ]);
  });
});

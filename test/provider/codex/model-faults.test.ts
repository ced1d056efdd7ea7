/**
 * Faults on the model side, against the real codex and the scripted model: HTTP errors, a stream
 * cut mid-way, a stalled stream. codex's retries must show as events, a turn that finally fails
 * must end with exactly one `error{turn_failed}` with a readable message, and the session must
 * take its next turn normally.
 *
 * codex retries on two levels: the HTTP request (`request_max_retries`, silent: nothing reaches
 * the protocol) and the stream (`stream_max_retries`, each attempt announced with an `error`
 * notification carrying `willRetry: true`, which codexd maps to `system{codex_retry}`). The
 * provider here turns request retries off so that every retry is a stream retry and shows.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type RecordedRequest,
  type Round,
  type ScriptedModel,
  startScriptedModel,
  step,
} from "../../../src/devtools/scripted-model.ts";
import { isTerminal, type SessionEvent } from "../../../src/provider/events.ts";
import { Spec } from "../../../src/provider/spec.ts";
import { makeTempWorktree, type TempWorktree } from "../../support/codex-harness.ts";
import {
  EventRecorder,
  startTestProvider,
  type TestProvider,
} from "../../support/provider-fixture.ts";

const STREAM_RETRIES = 2;
/** Short, so a stall costs about a second per attempt; the scripted model never pauses. */
const IDLE_TIMEOUT_MS = 1000;

let model: ScriptedModel;
let worktree: TempWorktree;
let codex: TestProvider;

beforeAll(async () => {
  model = await startScriptedModel({ rules: [] });
  worktree = await makeTempWorktree();
  codex = await startTestProvider({
    model,
    modelArgs: {
      requestMaxRetries: 0,
      streamMaxRetries: STREAM_RETRIES,
      streamIdleTimeoutMs: IDLE_TIMEOUT_MS,
    },
  });
});

afterAll(async () => {
  await codex?.close();
  await worktree?.remove();
  await model?.close();
});

interface FaultRun {
  /** Every event of the session, the follow-up turn included. */
  events: SessionEvent[];
  /** The faulty (first) turn's events, up to and including its terminal event. */
  turn: SessionEvent[];
  terminal: SessionEvent;
  /** The model requests the faulty turn made (its attempts). */
  attempts: RecordedRequest[];
}

let markerCounter = 0;

/**
 * Runs one session whose first turn meets `rounds` (one round per attempt), then a follow-up turn
 * that must get its result: the fault must leave the session usable.
 */
async function runFault(rounds: Round[]): Promise<FaultRun> {
  const marker = `FAULT-${++markerCounter}-`;
  model.addRule({ marker, rounds });
  const handle = await codex.provider.spawn(Spec.parse({ prompt: marker, cwd: worktree.path }));
  const recorder = new EventRecorder(handle);
  const terminal = await recorder.waitFor(isTerminal, 30_000, "the first terminal event");
  const attempts = model.requests.filter((r) =>
    r.conversation === handle.threadId && r.facts?.latestUserText.includes(marker)
  );
  const next = await handle.send("NEXT-TURN follow-up");
  const nextResult = await recorder.waitFor(
    (e) => isTerminal(e) && e.turnId === next.turnId,
    30_000,
    "the follow-up's terminal event",
  );
  expect(nextResult).toMatchObject({ type: "result", text: "echo: NEXT-TURN follow-up" });
  await handle.stop();
  await recorder.done;
  const events = recorder.events;
  const turn = events.slice(0, events.indexOf(terminal) + 1);
  // Exactly one terminal event per turn, and nothing of the first turn after its terminal.
  expect(events.filter(isTerminal).map((e) => e.turnId)).toEqual([terminal.turnId, next.turnId]);
  expect(events.slice(events.indexOf(terminal) + 1).some((e) => e.turnId === terminal.turnId))
    .toBe(false);
  return { events, turn, terminal, attempts };
}

const retries = (events: SessionEvent[]) =>
  events.filter((e) => e.type === "system" && e.subtype === "codex_retry");

const always = (fault: Round): Round[] => Array.from({ length: STREAM_RETRIES + 2 }, () => fault);

describe("model faults that codex recovers from", () => {
  test("a 500 is retried, the retry shows as a codex_retry event, and the turn completes", async () => {
    const run = await runFault([[step.httpError(500)], [step.message("recovered from 500")]]);
    expect(run.attempts).toHaveLength(2);
    expect(retries(run.turn)).toEqual([
      expect.objectContaining({
        turnId: run.terminal.turnId,
        message: `Reconnecting... 1/${STREAM_RETRIES}`,
        willRetry: true,
      }),
    ]);
    expect(run.terminal).toMatchObject({ type: "result", text: "recovered from 500" });
  });

  test("a 429 with retry-after is retried with a codex_retry event, and the turn completes", async () => {
    const run = await runFault([
      [step.httpError(429, { retryAfter: 0 })],
      [step.message("recovered from 429")],
    ]);
    expect(run.attempts).toHaveLength(2);
    expect(retries(run.turn)).toHaveLength(1);
    expect(run.terminal).toMatchObject({ type: "result", text: "recovered from 429" });
  });

  test("a stream cut mid-message is retried; the result is the retry's text, not the fragment", async () => {
    const run = await runFault([
      [step.message("fragment that never completes", { deltas: 3, done: false }), step.cut()],
      [step.message("recovered from cut")],
    ]);
    expect(run.attempts).toHaveLength(2);
    expect(retries(run.turn)).toHaveLength(1);
    expect(run.terminal).toMatchObject({ type: "result", text: "recovered from cut" });
    expect(run.turn.filter((e) => e.type === "message").map((e) => e.type === "message" && e.text))
      .toEqual(["recovered from cut"]);
  });

  test("a stalled stream hits codex's idle timeout, is retried, and the turn completes", async () => {
    const run = await runFault([[step.stall()], [step.message("recovered from stall")]]);
    expect(run.attempts).toHaveLength(2);
    expect(retries(run.turn)).toHaveLength(1);
    expect(run.terminal).toMatchObject({ type: "result", text: "recovered from stall" });
  });
});

describe("model faults that end the turn", () => {
  /** The failed turn's checks shared by every fault: retries shown, one readable turn_failed. */
  function expectFailedAfterRetries(run: FaultRun, expectedRetries: number) {
    expect(run.terminal).toMatchObject({ type: "error", code: "turn_failed" });
    const message = run.terminal.type === "error" ? run.terminal.message : "";
    // Readable: a sentence from codex, not an empty string or a JSON dump.
    expect(message.length).toBeGreaterThan(10);
    expect(message).not.toMatch(/^[{[]/);
    expect(retries(run.turn)).toHaveLength(expectedRetries);
    expect(run.attempts).toHaveLength(expectedRetries + 1);
    // codex's last word before giving up is reported too, with willRetry false.
    expect(run.turn.filter((e) => e.type === "system" && e.subtype === "codex_error"))
      .toEqual([expect.objectContaining({ message, willRetry: false })]);
    return message;
  }

  test("a 500 on every attempt: each retry shown, then one turn_failed", async () => {
    const run = await runFault(always([step.httpError(500)]));
    // codex 0.169 words a 5xx as "We're currently experiencing high demand, ...".
    expectFailedAfterRetries(run, STREAM_RETRIES);
  });

  test("a stream cut on every attempt: each retry shown, then one turn_failed", async () => {
    const run = await runFault(always([step.message("half", { done: false }), step.cut()]));
    const message = expectFailedAfterRetries(run, STREAM_RETRIES);
    expect(message).toMatch(/stream disconnected/i);
  });

  test("a stall on every attempt: each retry shown, then one turn_failed naming the idle timeout", async () => {
    const run = await runFault(always([step.stall()]));
    const message = expectFailedAfterRetries(run, STREAM_RETRIES);
    expect(message).toMatch(/idle|timeout|timed out/i);
  });

  test("a 429 without retry-after is not retried by codex: one turn_failed naming the 429", async () => {
    const run = await runFault([[step.httpError(429)], [step.message("never served")]]);
    const message = expectFailedAfterRetries(run, 0);
    expect(message).toContain("429");
  });
});

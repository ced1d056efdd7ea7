/**
 * Sub-agents the model spawns are interrupted as they start (foreign-turns.ts), against the real
 * codex. codex 0.169 offers the models it runs in code mode (gpt-5.6, gpt-6, gpt-6.1, daybreak)
 * `collaboration.spawn_agent` whatever the
 * `multi_agent` features say (measured: neither those pins nor `agents.max_depth` take it away).
 * A sub-agent is a thread of codex's own: its approvals name no session, its tokens reach no budget
 * and it works on after the session's turn ended. Positive control: on a bare codex the spawned
 * sub-agent asks the model (the script's fallback answers only it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { Spec } from "../../../src/provider/spec.ts";
import {
  makeTempWorktree,
  startBareClient,
  type TempWorktree,
} from "../../support/codex-harness.ts";
import { EventRecorder, startTestProvider } from "../../support/provider-fixture.ts";

/** A model codex 0.169 runs with sub-agents on (and its tools in code mode). */
const MODEL = "gpt-6-sol";

let model: ScriptedModel;
let worktree: TempWorktree;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      {
        marker: "SPAWN",
        rounds: [
          [step.functionCall(
            "spawn_agent",
            { task_name: "helper", message: "count the files" },
            "call_spawn",
            {
              namespace: "collaboration",
            },
          )],
          [step.message("spawned")],
        ],
      },
      { marker: "NEXT", rounds: [[step.message("next done")]] },
    ],
    // Only the sub-agent's own conversation matches no rule (its task arrives encrypted). It
    // runs a command each time it asks: a sub-agent left running asks again and again (its
    // commands are declined, and it tries the next).
    fallback: [step.exec("true")],
  });
  worktree = await makeTempWorktree();
});

afterAll(async () => {
  await worktree?.remove();
  await model?.close();
});

const fallbackSince = (from: number) =>
  model.requests.slice(from).filter((r) => r.answeredBy === "fallback");

describe(`sub-agents of ${MODEL} (real codex)`, () => {
  test(
    "positive control: on a bare codex the spawned sub-agent runs and asks the model",
    async () => {
      const from = model.requests.length;
      await using bare = await startBareClient({ model, decision: "decline" });
      const client = bare.client;
      const threadId = await client.startThread({
        cwd: worktree.path,
        sandbox: "workspace-write",
        model: MODEL,
      });
      await client.runTurn(threadId, "SPAWN bare");
      // The sub-agent's turn: another thread, descending from the turn that spawned it.
      await client.waitForNotification("turn/started", (p) => p.threadId !== threadId, 10_000);
      await model.waitForRequest((r) => r.answeredBy === "fallback", { from });
    },
    60_000,
  );

  test(
    "through codexd's provider the sub-agent's turn is interrupted before it asks anything",
    async () => {
      const from = model.requests.length;
      await using codex = await startTestProvider({ model });
      const handle = await codex.provider.spawn(
        Spec.parse({ cwd: worktree.path, prompt: "SPAWN provider", model: MODEL }),
      );
      const events = new EventRecorder(handle);
      const refused = await events.waitFor(
        (e) => e.type === "system" && e.subtype === "turn_refused",
        30_000,
        "turn_refused",
      );
      const result = await events.waitFor((e) => e.type === "result", 30_000, "result");
      expect(refused).toMatchObject({ turnId: result.turnId, threadId: expect.any(String) });
      expect(JSON.stringify(refused)).not.toContain(`"threadId":"${handle.threadId}"`);
      // Interrupted as its turn starts, the sub-agent asks the model once at most (the request
      // may race the interrupt); one left running asks again after each declined command.
      const next = await handle.send("NEXT turn");
      await events.waitFor((e) => e.type === "result" && e.turnId === next.turnId, 30_000);
      expect(fallbackSince(from).length).toBeLessThanOrEqual(1);
      await handle.stop();
    },
    60_000,
  );
});

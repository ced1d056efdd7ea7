/**
 * The fuzz corpus of fuzz.test.ts, sent over real HTTP to the assembled daemon (real service,
 * real codex, scripted model): no 5xx, well-formed errors, no secret echoed, healthy after.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { checkFuzzResponse, CWD, fuzzRequest, Gen, prng } from "../support/fuzz-requests.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = 2000;

let model: ScriptedModel;
beforeAll(async () => {
  model = await startScriptedModel({
    fallback: [step.message("ok")],
  });
});
afterAll(async () => {
  await model?.close();
});

test(`${RUNS} random and mutated requests against the real daemon (seed ${SEED})`, async () => {
  await using started = await startDaemonInProcess({ model });
  const { daemon, client, token } = started;
  const { sessionId } = await client.spawn({ prompt: "a session to aim at", cwd: CWD });
  const g = new Gen(prng(SEED));
  const statuses = new Map<number, number>();
  for (let i = 0; i < RUNS; i++) {
    const { url, init, label } = fuzzRequest(g, {
      base: daemon.url,
      token,
      sessionId,
      requestId: "r-1",
      skipShutdown: true,
    });
    const res = await fetch(url, init);
    await checkFuzzResponse(res, statuses, i, label);
  }
  for (const status of [200, 201, 202, 400, 401, 404, 409]) {
    expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
  }
  expect((await client.health()).status).toBe("ok");
  const after = await client.spawn({ prompt: "after the storm", cwd: CWD });
  const events = [];
  for await (const event of client.events(after.sessionId)) {
    events.push(event);
    if (event.type === "result" || event.type === "error") break;
  }
  expect(events.at(-1)).toMatchObject({ type: "result", text: "ok" });
});

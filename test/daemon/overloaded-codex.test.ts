/**
 * The real codex behind test/fixtures/overloaded-proxy.mjs, which answers codex's own
 * "Server overloaded; retry later." (-32001) to the first request of one method and forwards
 * everything else. The daemon retries the refused request (retry.ts), the spawn succeeds, the
 * turn completes against the scripted model, and /metrics counts the retry by method. The
 * retry waits are made short through DaemonDeps.rpcRetry; production waits 1 s, 2 s, 4 s.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import path from "node:path";
import { CodexdClient } from "../../src/client.ts";
import { loadConfig } from "../../src/daemon/config.ts";
import { startDaemon } from "../../src/daemon/daemon.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { resolveCodexBinary } from "../../src/provider/codex/binary.ts";
import { DEFAULT_RETRY } from "../../src/provider/codex/retry.ts";
import { fakeAnalyzer } from "../approval/support/fake-analyzer.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";
import { untilTerminal } from "../support/session-events.ts";

const PROXY = path.join(REPO_ROOT, "test", "fixtures", "overloaded-proxy.mjs");

let model: ScriptedModel;
let worktree: TempWorktree;
let realCodex: string;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      { marker: "FIRST", rounds: [[step.message("first answer")]] },
      { marker: "SECOND", rounds: [[step.message("second answer")]] },
      { marker: "THIRD", rounds: [[step.message("third answer")]] },
    ],
  });
  worktree = await makeTempWorktree();
  realCodex = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
});
afterAll(async () => {
  await worktree?.remove();
  await model?.close();
});

/** The daemon in this process with codex.bin pointing at the proxy. */
async function startBehindProxy(refuse: { method: string; count: number }) {
  const stateDir = makeStateDir();
  const config = loadConfig({
    args: ["--port", "0", "--state-dir", stateDir],
    cwd: REPO_ROOT,
    env: {},
  });
  config.codex.bin = PROXY;
  config.codex.args = model.codexArgs({ requestMaxRetries: 0 });
  config.codex.env = {
    ...config.codex.env,
    CODEX_PROXY_TARGET: realCodex,
    CODEX_PROXY_METHOD: refuse.method,
    CODEX_PROXY_REFUSE: String(refuse.count),
  };
  config.policies.dir = path.join(REPO_ROOT, "policies");
  const daemon = await startDaemon(config, {
    analyzer: fakeAnalyzer,
    rpcRetry: { ...DEFAULT_RETRY, delaysMs: [5, 10, 20] },
  });
  const token = readFileSync(path.join(stateDir, "token"), "utf8").trim();
  const client = new CodexdClient({ baseUrl: daemon.url, token });
  return { client, [Symbol.asyncDispose]: () => daemon.stop() };
}

function retriesOf(metrics: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const match of metrics.matchAll(/^codexd_rpc_retries_total\{method="([^"]+)"\} (\d+)$/gm)) {
    found[match[1]!] = Number(match[2]);
  }
  return found;
}

describe("codex refusing a request as overloaded (-32001)", () => {
  test("the first thread/start refused: the spawn succeeds, its turn completes, 1 retry counted", async () => {
    await using d = await startBehindProxy({ method: "thread/start", count: 1 });
    const { sessionId, threadId } = await d.client.spawn({
      prompt: "FIRST please",
      cwd: worktree.path,
    });
    expect(threadId).toEqual(expect.any(String));
    const events = await untilTerminal(d.client, sessionId);
    expect(events.at(-1)).toMatchObject({ type: "result", text: "first answer" });
    expect(retriesOf(await d.client.metrics())).toEqual({ "thread/start": 1 });

    // Only the first was refused: the next spawn needs no retry.
    const second = await d.client.spawn({ prompt: "SECOND please", cwd: worktree.path });
    expect((await untilTerminal(d.client, second.sessionId)).at(-1)).toMatchObject({
      type: "result",
      text: "second answer",
    });
    expect(retriesOf(await d.client.metrics())).toEqual({ "thread/start": 1 });
  });

  test("a refused turn/start is sent again and runs once: -32001 means codex never took it", async () => {
    await using d = await startBehindProxy({ method: "turn/start", count: 2 });
    const before = model.requests.length;
    const { sessionId } = await d.client.spawn({ prompt: "THIRD please", cwd: worktree.path });
    const events = await untilTerminal(d.client, sessionId);
    expect(events.at(-1)).toMatchObject({ type: "result", text: "third answer" });
    expect(events.filter((e) => e.type === "turn.started")).toHaveLength(1);
    const prompts = model.requests.slice(before)
      .filter((r) => JSON.stringify(r.body ?? "").includes("THIRD please"));
    expect(prompts).toHaveLength(1);
    expect(retriesOf(await d.client.metrics())).toEqual({ "turn/start": 2 });
  });
});

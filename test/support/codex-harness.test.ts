import { expect, test } from "bun:test";
import { readlink } from "node:fs/promises";
import { startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { isUnderTempDir } from "../../src/provider/codex/codex-home.ts";
import {
  asRecord,
  codexUnderTest,
  LineClient,
  makeTempWorktree,
  startCodex,
} from "./codex-harness.ts";

const SCRIPT = {
  rules: [
    { marker: "GREET", rounds: [[step.message("Hello from the script", { deltas: 3 })]] },
    {
      marker: "RUN",
      rounds: [[step.exec("echo harness-ok")], [step.message("command done")]],
    },
  ],
};

async function startThread(client: LineClient, cwd: string): Promise<string> {
  const started = asRecord(
    await client.request("thread/start", {
      cwd,
      approvalPolicy: "untrusted",
      sandbox: "workspace-write",
    }),
  );
  const id = asRecord(started.thread).id;
  if (typeof id !== "string") throw new Error("thread/start answered without thread.id");
  return id;
}

function turnInput(text: string) {
  return [{ type: "text", text, text_elements: [] }];
}

test("handshake answers userAgent and the fresh codexHome; the pid is the native app-server", async () => {
  await using model = await startScriptedModel(SCRIPT);
  await using codex = await startCodex({ model });
  const client = new LineClient(codex);
  const result = asRecord(await client.initialize());
  expect(result.userAgent).toContain((await codexUnderTest()).version);
  expect(result.codexHome).toBe(codex.codexHome);
  expect(isUnderTempDir(codex.codexHome)).toBe(false);
  // The pid we hold is the native binary, not node running the npm wrapper.
  expect(await readlink(`/proc/${codex.pid}/exe`)).toBe(codex.binary);
  expect(() => process.kill(codex.pid, 0)).not.toThrow();
});

test("a turn is answered by the scripted model through to turn/completed", async () => {
  await using model = await startScriptedModel(SCRIPT);
  await using codex = await startCodex({ model });
  await using worktree = await makeTempWorktree();
  const client = new LineClient(codex);
  await client.initialize();
  const threadId = await startThread(client, worktree.path);
  expect(threadId).toMatch(/^[0-9a-f-]{36}$/);

  await client.request("turn/start", { threadId, input: turnInput("GREET please") });
  const completed = await client.waitForNotification("turn/completed");
  const turn = asRecord(asRecord(completed.params).turn);
  expect(turn.status).toBe("completed");
  const deltas = client.messages
    .filter((m) => m.method === "item/agentMessage/delta")
    .map((m) => asRecord(m.params).delta);
  expect(deltas.join("")).toBe("Hello from the script");
  expect(deltas).toHaveLength(3);
  expect(model.requests[0]?.facts?.latestUserText).toBe("GREET please");
  expect(model.requests[0]?.body?.prompt_cache_key).toBe(threadId);

  // A follow-up turn sends the whole conversation again, including the scripted answer.
  const second = asRecord(
    await client.request("turn/start", { threadId, input: turnInput("and again") }),
  );
  await client.waitForNotification(
    "turn/completed",
    (params) => asRecord(params.turn).id === asRecord(second.turn).id,
  );
  const followUp = model.requests[1];
  expect(followUp?.facts).toMatchObject({ latestUserText: "and again", turn: 1 });
  const history = JSON.stringify(followUp?.body?.input);
  expect(history).toContain("GREET please");
  expect(history).toContain("Hello from the script");
});

test("a command approval request is answered and the command's output reaches the model", async () => {
  await using model = await startScriptedModel(SCRIPT);
  await using codex = await startCodex({ model });
  await using worktree = await makeTempWorktree();
  const client = new LineClient(codex);
  const approvals: string[] = [];
  client.onServerRequest((request) => {
    approvals.push(request.method ?? "");
    return { decision: "accept" };
  });
  await client.initialize();
  const threadId = await startThread(client, worktree.path);
  await client.request("turn/start", { threadId, input: turnInput("RUN it") });
  await client.waitForNotification("turn/completed");

  expect(approvals).toEqual(["item/commandExecution/requestApproval"]);
  const output = model.requests[1]?.body?.input.at(-1);
  expect(output?.type).toBe("function_call_output");
  expect(JSON.stringify(output)).toContain("harness-ok");
  const message = client.messages.find((m) =>
    m.method === "item/completed" && asRecord(asRecord(m.params).item).type === "agentMessage"
  );
  expect(asRecord(asRecord(message?.params).item).text).toBe("command done");
});

test("kill -9 by pid ends app-server: stdout closes", async () => {
  await using model = await startScriptedModel(SCRIPT);
  await using codex = await startCodex({ model });
  const client = new LineClient(codex);
  await client.initialize();
  codex.kill("SIGKILL");
  await client.closed;
  expect((await codex.exited).signal).toBe("SIGKILL");
  expect(() => process.kill(codex.pid, 0)).toThrow();
});

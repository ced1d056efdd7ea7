import { expect, test } from "bun:test";
import { connect } from "node:net";
import { z } from "zod";
import {
  applyPatchCommand,
  type ScriptedModel,
  startScriptedModel,
  step,
} from "../../src/devtools/scripted-model.ts";

const SseData = z.looseObject({ type: z.string() });
type SseData = z.infer<typeof SseData>;

function parseSse(text: string): SseData[] {
  return text.split("\n\n").filter((block) => block.trim() !== "").map((block) => {
    const data = block.split("\n").find((line) => line.startsWith("data: "));
    const type = block.split("\n").find((line) => line.startsWith("event: "));
    const parsed = SseData.parse(JSON.parse(data?.slice("data: ".length) ?? "null"));
    expect(type).toBe(`event: ${parsed.type}`);
    return parsed;
  });
}

interface Turn {
  text: string;
  /** Appended after the user message, e.g. a function call and its output. */
  after?: unknown[];
  /** Earlier user messages of the conversation. */
  before?: string[];
  conversation?: string;
}

function userMessage(text: string) {
  return { type: "message", role: "user", content: [{ type: "input_text", text }] };
}

function body(turn: Turn) {
  return {
    model: "mock-model",
    stream: true,
    prompt_cache_key: turn.conversation ?? "conv-1",
    tools: [{ type: "function", name: "exec_command" }, { type: "web_search" }],
    input: [
      { type: "message", role: "developer", content: [{ type: "input_text", text: "be good" }] },
      userMessage("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"),
      ...(turn.before ?? []).map(userMessage),
      userMessage(turn.text),
      ...(turn.after ?? []),
    ],
  };
}

function post(model: ScriptedModel, payload: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${model.url}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-test": "yes" },
    body: JSON.stringify(payload),
    signal,
  });
}

async function events(model: ScriptedModel, turn: Turn): Promise<SseData[]> {
  const response = await post(model, body(turn));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  return parseSse(await response.text());
}

/** POSTs over a bare socket and returns everything received until the server closes it. */
function rawPost(port: number, payload: unknown): Promise<string> {
  const json = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
    socket.write(
      `POST /v1/responses HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
    );
  });
}

const toolOutput = [
  { type: "function_call", call_id: "call_1", name: "exec_command", arguments: "{}" },
  { type: "function_call_output", call_id: "call_1", output: "ok" },
];

test("a message streams deltas between output_item.added and output_item.done", async () => {
  await using model = await startScriptedModel({
    rules: [{ marker: "hi", rounds: [[step.message("Hello world", { deltas: 4 })]] }],
  });
  const got = await events(model, { text: "say hi" });
  expect(got.map((e) => e.type)).toEqual([
    "response.created",
    "response.output_item.added",
    ...Array(4).fill("response.output_text.delta"),
    "response.output_item.done",
    "response.completed",
  ]);
  expect(got.slice(2, 6).map((e) => e.delta).join("")).toBe("Hello world");
  expect(got[6]?.item).toMatchObject({
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text: "Hello world" }],
  });
  expect(got[7]?.response).toMatchObject({
    id: expect.any(String),
    usage: {
      input_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
    },
  });
});

test("deltaSize splits by characters; a usage step sets the reported usage", async () => {
  await using model = await startScriptedModel({
    rules: [{
      marker: "x",
      rounds: [[
        step.message("abcdefg", { deltaSize: 3 }),
        step.usage(100, 7, { cachedInputTokens: 40 }),
      ]],
    }],
  });
  const got = await events(model, { text: "x" });
  expect(got.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta)).toEqual([
    "abc",
    "def",
    "g",
  ]);
  expect(got.at(-1)?.response).toMatchObject({
    usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 40 }, output_tokens: 7 },
  });
});

test("rounds continue the same turn; then the fallback echoes", async () => {
  await using model = await startScriptedModel({
    rules: [{
      marker: "LIST",
      rounds: [[step.exec("ls -la", { workdir: "/w", callId: "c1" })], [step.message("listed")]],
    }],
  });
  const first = await events(model, { text: "LIST files" });
  const call = first.find((e) => e.type === "response.output_item.done")?.item;
  expect(call).toEqual({
    type: "function_call",
    id: expect.any(String),
    call_id: "c1",
    name: "exec_command",
    arguments: JSON.stringify({ cmd: "ls -la", workdir: "/w" }),
    status: "completed",
  });
  const second = await events(model, { text: "LIST files", after: toolOutput });
  expect(second.find((e) => e.type === "response.output_item.done")?.item).toMatchObject({
    content: [{ text: "listed" }],
  });
  const third = await events(model, { text: "LIST files", after: [...toolOutput, ...toolOutput] });
  expect(third.find((e) => e.type === "response.output_item.done")?.item).toMatchObject({
    content: [{ text: "echo: LIST files" }],
  });
  expect(model.requests.map((r) => [r.answeredBy, r.round])).toEqual([[0, 0], [0, 1], [
    "fallback",
    0,
  ]]);
  expect(model.requests[1]?.facts?.lastItemType).toBe("function_call_output");
});

test("a new turn with the same text starts the rule again; conversations are independent", async () => {
  await using model = await startScriptedModel({
    rules: [{ marker: "go", rounds: [[step.message("one")], [step.message("two")]] }],
  });
  await events(model, { text: "go" });
  await events(model, { text: "go", conversation: "conv-2" });
  await events(model, { text: "go", before: ["go"] });
  expect(model.requests.map((r) => [r.conversation, r.facts?.turn, r.round])).toEqual([
    ["conv-1", 0, 0],
    ["conv-2", 0, 0],
    ["conv-1", 1, 0],
  ]);
});

test("turn rules match the index of the latest user message, ignoring codex's context", async () => {
  await using model = await startScriptedModel({
    rules: [{ turn: 1, rounds: [[step.message("second turn")]] }],
  });
  await events(model, { text: "first" });
  const got = await events(model, { text: "again", before: ["first"] });
  expect(got.find((e) => e.type === "response.output_item.done")?.item).toMatchObject({
    content: [{ text: "second turn" }],
  });
  expect(model.requests.map((r) => r.answeredBy)).toEqual(["fallback", 0]);
});

test("functionCall sends any tool call; apply_patch commands are heredocs", async () => {
  const cmd = applyPatchCommand([
    { op: "add", path: "new.txt", content: "a\nb\n" },
    { op: "update", path: "old.txt", remove: ["x"], add: ["y"] },
    { op: "delete", path: "gone.txt" },
  ]);
  expect(cmd).toBe(
    "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: new.txt\n+a\n+b\n" +
      "*** Update File: old.txt\n@@\n-x\n+y\n*** Delete File: gone.txt\n*** End Patch\nEOF",
  );
  await using model = await startScriptedModel({
    rules: [{
      marker: "m",
      rounds: [[step.functionCall("mcp__echo__echo", { text: "hi" }, "c9"), step.exec(cmd)]],
    }],
  });
  const done = (await events(model, { text: "m" })).filter((e) =>
    e.type === "response.output_item.done"
  );
  expect(done.map((e) => e.item)).toMatchObject([
    { name: "mcp__echo__echo", call_id: "c9", arguments: '{"text":"hi"}' },
    { name: "exec_command", arguments: JSON.stringify({ cmd }) },
  ]);
});

test("customCall sends a freeform tool call (codex's code-mode exec) with its raw input", async () => {
  await using model = await startScriptedModel({
    rules: [{
      marker: "m",
      rounds: [[step.customCall("exec", "text(1)", { callId: "c1", namespace: "functions" })]],
    }],
  });
  const done = (await events(model, { text: "m" })).filter((e) =>
    e.type === "response.output_item.done"
  );
  expect(done.map((e) => e.item)).toEqual([{
    type: "custom_tool_call",
    id: expect.any(String),
    call_id: "c1",
    name: "exec",
    namespace: "functions",
    input: "text(1)",
    status: "completed",
  }]);
});

test("records headers, parsed body, facts and the injected clock's time", async () => {
  let clock = 1000;
  await using model = await startScriptedModel({}, { now: () => clock++ });
  await events(model, { text: "hello there" });
  const [request] = model.requests;
  expect(request).toMatchObject({
    index: 0,
    method: "POST",
    path: "/v1/responses",
    time: 1000,
    conversation: "conv-1",
    facts: { latestUserText: "hello there", turn: 0, toolNames: ["exec_command", "web_search"] },
  });
  expect(request?.headers["x-test"]).toBe("yes");
  expect(request?.body?.stream).toBe(true);
});

test("httpError answers with the status, retry-after and an error body", async () => {
  await using model = await startScriptedModel({
    rules: [{
      marker: "e",
      rounds: [[step.httpError(429, { retryAfter: 2 })], [step.message("ok")]],
    }],
  });
  const response = await post(model, body({ text: "e" }));
  expect(response.status).toBe(429);
  expect(response.headers.get("retry-after")).toBe("2");
  expect(await response.json()).toMatchObject({ error: { type: "rate_limit_exceeded" } });
  // codex's retry repeats the same conversation: the rule continues with its next round.
  const retried = await events(model, { text: "e" });
  expect(retried.some((e) => e.type === "response.completed")).toBe(true);
});

test("cut closes the stream after the events before it, without response.completed", async () => {
  await using model = await startScriptedModel({
    rules: [{
      marker: "c",
      rounds: [[step.message("partial", { deltas: 2, done: false }), step.cut()]],
    }],
  });
  // fetch drops a chunked body that ends in a reset, so read the raw bytes codex would see.
  const raw = await rawPost(model.port, body({ text: "c" }));
  expect(raw.startsWith("HTTP/1.1 200")).toBe(true);
  const text = raw.split("\n").filter((line) => /^(event|data): /.test(line))
    .map((line) => line.startsWith("data: ") ? `${line}\n\n` : `${line}\n`).join("");
  const got = parseSse(text);
  expect(got.map((e) => e.type)).toEqual([
    "response.created",
    "response.output_item.added",
    "response.output_text.delta",
    "response.output_text.delta",
  ]);
});

test("delay and stall hold the stream; close() ends a stall and is idempotent", async () => {
  const model = await startScriptedModel({
    rules: [
      { marker: "slow", rounds: [[step.delay(30), step.message("late")]] },
      { marker: "stall", rounds: [[step.stall()]] },
    ],
  });
  const started = performance.now();
  const slow = await events(model, { text: "slow" });
  expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  expect(slow.at(-1)?.type).toBe("response.completed");

  const stalled = await post(model, body({ text: "stall" }));
  expect(stalled.status).toBe(200);
  const rest = stalled.text().then(() => "ended", () => "ended");
  await model.close();
  await model.close();
  expect(await rest).toBe("ended");
  await expect(post(model, body({ text: "x" }))).rejects.toThrow();
});

test("waitForRequest resolves on a later request; setScript resets; bad scripts are rejected", async () => {
  await using model = await startScriptedModel();
  const waiting = model.waitForRequest((r) => r.facts?.latestUserText === "later");
  await events(model, { text: "now" });
  await events(model, { text: "later" });
  expect((await waiting).index).toBe(1);

  model.setScript({ rules: [{ marker: "now", rounds: [[step.message("scripted")]] }] });
  model.addRule({ turn: 0, rounds: [[step.message("by turn")]] });
  const got = await events(model, { text: "now", before: ["x"] });
  expect(got.find((e) => e.type === "response.output_item.done")?.item).toMatchObject({
    content: [{ text: "scripted" }],
  });
  expect(() => model.setScript({ rules: [{ rounds: [[]] }] })).toThrow(/marker or a turn/);
  expect(() =>
    model.setScript({
      rules: [{ marker: "a", rounds: [[step.message("x"), step.httpError(500)]] }],
    })
  ).toThrow(/httpError must come before/);
  expect(() => model.addRule({ marker: "", rounds: [] })).toThrow(/Cannot add rule/);
});

test("rejects bodies that are not Responses requests and unknown routes", async () => {
  await using model = await startScriptedModel();
  expect((await post(model, { nope: true })).status).toBe(400);
  expect((await fetch(`${model.url}/other`)).status).toBe(404);
  expect(model.requests.map((r) => r.path)).toEqual(["/v1/responses", "/v1/other"]);
});

test("codexArgs points codex at the server with the chosen model and retries", async () => {
  await using model = await startScriptedModel();
  const args = model.codexArgs({ model: "m1", requestMaxRetries: 0, streamMaxRetries: 1 });
  expect(args).toEqual([
    "-c",
    'model_provider="scripted"',
    "-c",
    `model_providers.scripted={name="scripted",base_url="${model.url}",wire_api="responses",` +
    "requires_openai_auth=false,request_max_retries=0,stream_max_retries=1}",
    "-c",
    'model="m1"',
  ]);
  expect(model.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
});

test("streams 1 MB in 10,000 deltas quickly", async () => {
  await using model = await startScriptedModel({
    rules: [{ marker: "big", rounds: [[step.message("x".repeat(1_000_000), { deltas: 10_000 })]] }],
  });
  const started = performance.now();
  const got = await events(model, { text: "big" });
  expect(got.filter((e) => e.type === "response.output_text.delta")).toHaveLength(10_000);
  expect(performance.now() - started).toBeLessThan(2000);
});

test("serves 200 concurrent conversations, each with its own rounds and a unique index", async () => {
  await using model = await startScriptedModel({
    rules: [{ marker: "go", rounds: [[step.message("first")], [step.message("second")]] }],
  });
  const conversations = Array.from({ length: 200 }, (_, i) => `conv-${i}`);
  const texts = async (turn: Turn) =>
    (await events(model, turn)).filter((e) => e.type === "response.output_item.done")
      .map((e) => JSON.stringify(e.item));
  const firsts = await Promise.all(
    conversations.map((conversation) => texts({ text: "go", conversation })),
  );
  const seconds = await Promise.all(
    conversations.map((conversation) => texts({ text: "go", conversation, after: toolOutput })),
  );
  expect(firsts.every((items) => items[0]?.includes('"first"'))).toBe(true);
  expect(seconds.every((items) => items[0]?.includes('"second"'))).toBe(true);
  expect(model.requests.map((r) => r.index)).toEqual([...Array(400).keys()]);
});

/**
 * Text typed into a running terminal, against the real codex (issue 10, finding 14): the model
 * opens an interactive shell, then types a command into it with `write_stdin`. codex reports the
 * typing only as `item/commandExecution/terminalInteraction`; codexd journals it as
 * `system{subtype:"terminal_input"}`. Positive control: the typed command really ran.
 *
 * `write_stdin` needs the session id codex gave the shell, known only from the shell's output,
 * so the model here answers from the conversation instead of from a fixed script.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { scriptedCodexArgs } from "../../../src/devtools/scripted-model.ts";
import {
  functionCallDone,
  messageAdded,
  messageDone,
  responseCompleted,
  responseCreated,
} from "../../../src/devtools/scripted-model/sse.ts";
import { Spec } from "../../../src/provider/spec.ts";
import { makeTempWorktree, type TempWorktree } from "../../support/codex-harness.ts";
import {
  EventRecorder,
  startTestProvider,
  type TestProvider,
} from "../../support/provider-fixture.ts";

const TYPED = "echo typed-by-the-model > typed-marker.txt\n";

let server: Server;
let worktree: TempWorktree;
let codex: TestProvider;

/** Opens a shell, types into it once codex said its session id, then answers. */
function nextResponse(input: Array<Record<string, unknown>>): string {
  const outputs = input.filter((i) => i.type === "function_call_output")
    .map((i) => typeof i.output === "string" ? i.output : JSON.stringify(i.output));
  const id = `resp_${input.length}`;
  const usage = {
    inputTokens: 10,
    cachedInputTokens: 0,
    outputTokens: 1,
    reasoningOutputTokens: 0,
  };
  const call = (name: string, args: Record<string, unknown>) =>
    responseCreated(id) +
    functionCallDone(`fc_${input.length}`, 0, {
      callId: `call_${input.length}`,
      name,
      arguments: JSON.stringify(args),
    }) +
    responseCompleted(id, usage);
  if (outputs.length === 0) {
    return call("exec_command", { cmd: "bash", tty: true, yield_time_ms: 500 });
  }
  const session = /session ID (\d+)/.exec(outputs[0]!)?.[1];
  if (outputs.length === 1 && session) {
    return call("write_stdin", { session_id: Number(session), chars: TYPED, yield_time_ms: 1000 });
  }
  return responseCreated(id) + messageAdded("msg", 0) + messageDone("msg", 0, "typed") +
    responseCompleted(id, usage);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/responses")) {
        res.writeHead(404).end();
        return;
      }
      const input = (JSON.parse(body) as { input: Array<Record<string, unknown>> }).input;
      res.writeHead(200, { "content-type": "text/event-stream" }).end(nextResponse(input));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  worktree = await makeTempWorktree();
  codex = await startTestProvider({
    model: { codexArgs: (o) => scriptedCodexArgs(url, o) } as Parameters<
      typeof startTestProvider
    >[0]["model"],
  });
});

afterAll(async () => {
  await codex?.close();
  await worktree?.remove();
  await new Promise((resolve) => server?.close(resolve));
});

test("what the model types into a running shell is journaled as terminal_input", async () => {
  const handle = await codex.provider.spawn(Spec.parse({ prompt: "type", cwd: worktree.path }));
  const events = new EventRecorder(handle);
  await events.waitFor((e) => e.type === "result" || e.type === "error", 30_000, "the turn's end");
  await handle.stop();
  // Positive control: the typed command really ran in the shell.
  expect(existsSync(path.join(worktree.path, "typed-marker.txt"))).toBe(true);
  const shell = events.events.find((e) => e.type === "tool.use");
  expect(shell).toMatchObject({ name: "command" });
  const typed = events.events.find((e) => e.type === "system" && e.subtype === "terminal_input");
  expect(typed).toMatchObject({
    type: "system",
    subtype: "terminal_input",
    itemId: shell!.type === "tool.use" ? shell!.toolId : "",
    text: TYPED,
  });
  expect(typed).toHaveProperty("processId");
});

/**
 * Redaction without gaps, through the assembled daemon with the real codex and the scripted model
 * (issue 10, finding 9): a secret of the spec's `env` or of an MCP server's `env` is never stored
 * or served, whether the answer streams it in pieces, a command prints it base64-encoded, or a
 * held approval shows it in its command.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { eventually } from "../support/eventually.ts";
import { untilTerminal } from "../support/session-events.ts";

const SECRET = "sk-test-0123456789abcdef";
const MCP_SECRET = "mcp-token-fedcba9876543210";
const BASE64 = Buffer.from(SECRET).toString("base64");

let model: ScriptedModel;
let worktree: TempWorktree;
let policies: string;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{
      marker: "LEAK",
      rounds: [
        // The command line itself holds the secret (so the held approval does), and it prints
        // the secret base64-encoded.
        [step.exec(`echo ${SECRET} | base64`)],
        // The answer streams both secrets in 3-character pieces: no piece holds either whole.
        [step.message(`the key is ${SECRET}, the token ${MCP_SECRET}.`, { deltaSize: 3 })],
      ],
    }],
  });
  worktree = await makeTempWorktree();
  policies = await mkdtemp(path.join(tmpdir(), "codexd-policies-"));
  await copyFile(
    path.join(REPO_ROOT, "policies", "default.yaml"),
    path.join(policies, "default.yaml"),
  );
  await writeFile(
    path.join(policies, "attended.yaml"),
    [
      "version: 1",
      "name: attended",
      "extends: [default]",
      "askTimeout: 5m",
      "commands:",
      "  ask:",
      "    - id: ask-base64",
      "      regex: 'base64'",
      "      reason: a person decides",
      "spec:",
      "  env: { allow: [API_KEY, ECHO_TOKEN] }",
      "  mcpServers: allow",
    ].join("\n"),
  );
});

afterAll(async () => {
  await worktree?.remove();
  await model?.close();
  await rm(policies, { recursive: true, force: true });
});

test("no stored or served event, joined or not, and no listing reveals a secret", async () => {
  await using d = await startDaemonInProcess({ model, policiesDir: policies });
  const { sessionId } = await d.client.spawn({
    prompt: "LEAK please",
    cwd: worktree.path,
    policy: "attended",
    env: { API_KEY: SECRET },
    mcpServers: {
      echo: {
        command: process.execPath,
        args: [path.join(REPO_ROOT, "test/fixtures/mcp-echo-server.mjs")],
        env: { ECHO_TOKEN: MCP_SECRET },
      },
    },
  });
  // The held approval, as a person sees it: its command is scrubbed.
  const pending = await eventually("the held approval", async () => {
    const held = (await d.client.approvals(sessionId)).pending;
    return held.length > 0 ? held : undefined;
  }, { limitMs: 10_000, intervalMs: 10 });
  expect(pending[0]!.request.command).toContain("[redacted]");
  expect(JSON.stringify(pending)).not.toContain(SECRET);
  await d.client.answerApproval(sessionId, pending[0]!.requestId, "allow");
  const events = await untilTerminal(d.client, sessionId);
  expect(events.at(-1)).toMatchObject({ type: "result" });

  // The command really printed the base64 copy; it was stored scrubbed.
  expect(events.find((e) => e.type === "tool.result")?.output).toContain("[redacted]");
  // The streamed pieces, each and joined, hold neither secret; joined they equal the message.
  const deltas = events.filter((e) => e.type === "text.delta");
  expect(deltas.length).toBeGreaterThan(10);
  const joined = deltas.map((e) => String(e.text)).join("");
  expect(joined).toBe("the key is [redacted], the token [redacted].");
  expect(events.find((e) => e.type === "message")?.text).toBe(joined);

  const everything = JSON.stringify([
    await d.client.storedEvents(sessionId, { after: 0 }),
    await d.client.list(),
    await d.client.get(sessionId),
    await d.client.approvals(sessionId),
    joined,
  ]);
  for (const secret of [SECRET, MCP_SECRET, BASE64.slice(4, 28)]) {
    expect(everything).not.toContain(secret);
  }
  // Positive control: the scripted model really sent the secrets, and codex really ran it.
  expect(JSON.stringify(model.requests.map((r) => r.body))).toContain(BASE64.slice(0, 24));
});

/**
 * A per-tool MCP rule through the assembled daemon, the real codex and the MCP fixture (issue 10,
 * finding 12): the policy allows the `echo` server as a whole and denies its `echo_marker` tool;
 * codexd judges the call as the `mcpToolCall` item names it, so the deny holds and the tool never
 * runs. Positive control: under the server-wide allow alone the same call runs.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { untilTerminal } from "../support/session-events.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
let policies: string;

const policy = (name: string, mcp: string[]) =>
  [
    "version: 1",
    `name: ${name}`,
    "default: allow",
    "mcp:",
    ...mcp,
    "spec:",
    "  mcpServers: allow",
  ].join("\n");

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{
      marker: "CALL",
      rounds: [
        [step.functionCall("echo_marker", { text: "ran-marker" }, undefined, {
          namespace: "mcp__echo",
        })],
        [step.message("called")],
      ],
    }],
  });
  worktree = await makeTempWorktree();
  policies = await mkdtemp(path.join(tmpdir(), "codexd-policies-"));
  await writeFile(
    path.join(policies, "per-tool.yaml"),
    policy("per-tool", [
      "  deny: [{ id: no-echo-marker, server: echo, tool: echo_marker }]",
      "  allow: [{ id: echo-server, server: echo }]",
    ]),
  );
  await writeFile(
    path.join(policies, "server-wide.yaml"),
    policy("server-wide", ["  allow: [{ id: echo-server, server: echo }]"]),
  );
});

afterAll(async () => {
  await worktree?.remove();
  await model?.close();
  await rm(policies, { recursive: true, force: true });
});

test("a per-tool MCP deny holds over a server-wide allow; without it the tool runs", async () => {
  await using d = await startDaemonInProcess({ model, policiesDir: policies });
  const run = async (policyName: string) => {
    const { sessionId } = await d.client.spawn({
      prompt: "CALL the tool",
      cwd: worktree.path,
      policy: policyName,
      mcpServers: {
        echo: {
          command: process.execPath,
          args: [path.join(REPO_ROOT, "test/fixtures/mcp-echo-server.mjs")],
          env: {},
        },
      },
    });
    const events = await untilTerminal(d.client, sessionId);
    return {
      approval: events.find((e) => e.type === "approval"),
      output: JSON.stringify(events.find((e) => e.type === "tool.result") ?? null),
    };
  };
  const denied = await run("per-tool");
  expect(denied.approval).toMatchObject({
    kind: "mcpTool",
    tool: { server: "echo", name: "echo_marker" },
    decision: "deny",
    ruleId: "no-echo-marker",
  });
  expect(denied.output).not.toContain("echo: ran-marker");
  const allowed = await run("server-wide");
  expect(allowed.approval).toMatchObject({ decision: "allow", ruleId: "echo-server" });
  expect(allowed.output).toContain("echo: ran-marker");
});

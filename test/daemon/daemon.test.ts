/**
 * The assembled daemon in-process (startDaemon), against the real codex and the scripted model,
 * with the fake command analyzer so these tests do not depend on the tree-sitter one. The
 * subprocess tests (e2e.test.ts) cover the same daemon as a fleet runner sees it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import path from "node:path";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { eventually } from "../support/eventually.ts";
import { apiError, untilTerminal } from "../support/session-events.ts";

const SECRET = "sk-test-0123456789abcdef";
const execFileAsync = promisify(execFile);

let model: ScriptedModel;
let worktree: TempWorktree;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      { marker: "GREET", rounds: [[step.message("hello, runner", { deltas: 2 })]] },
      {
        marker: "SECRET",
        rounds: [[step.exec("printenv API_KEY")], [step.message("printed it")]],
      },
      { marker: "REMEMBER", rounds: [[step.message("noted")]] },
      {
        marker: "ASK",
        rounds: [[step.exec("touch asked-marker.txt")], [step.message("touched")]],
      },
    ],
  });
  worktree = await makeTempWorktree();
});
afterAll(async () => {
  await worktree?.remove();
  await model?.close();
});

function start(stateDir?: string, policiesDir?: string) {
  return startDaemonInProcess({
    model,
    ...(stateDir !== undefined && { stateDir }),
    ...(policiesDir !== undefined && { policiesDir }),
  });
}

describe("the daemon in-process", () => {
  test("secrets in spec.env reach the command but never an event or a listing", async () => {
    await using d = await start();
    const { sessionId } = await d.client.spawn({
      prompt: "SECRET please",
      cwd: worktree.path,
      env: { API_KEY: SECRET },
    });
    const events = await untilTerminal(d.client, sessionId);
    expect(events.at(-1)).toMatchObject({ type: "result", text: "printed it" });
    const output = events.find((e) => e.type === "tool.result");
    // The command really saw the value; the journal stored it scrubbed.
    expect(output).toMatchObject({ output: expect.stringContaining("[redacted]") });
    const everything = JSON.stringify([
      await d.client.storedEvents(sessionId, { after: 0 }),
      await d.client.list(),
      await d.client.get(sessionId),
    ]);
    expect(everything).not.toContain(SECRET);
    expect(await d.client.get(sessionId)).toMatchObject({ envKeys: ["API_KEY"] });
    const approvals = await d.client.approvals(sessionId);
    expect(approvals.pending).toEqual([]);
    expect(approvals.decisions[0]).toMatchObject({ kind: "command", decision: "allow" });
  });

  test("wrong states answer 409 and unknown sessions 404; stop is idempotent", async () => {
    await using d = await start();
    const { sessionId } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
    await untilTerminal(d.client, sessionId);
    expect((await apiError(d.client.inject(sessionId, "steer"))).status).toBe(409);
    expect((await apiError(d.client.get("ses_missing"))).status).toBe(404);
    await d.client.stop(sessionId);
    await d.client.stop(sessionId);
    expect((await d.client.get(sessionId)).status).toBe("stopped");
    expect((await apiError(d.client.send(sessionId, "more"))).status).toBe(409);
    const unknownPolicy = await apiError(
      d.client.spawn({ prompt: "x", cwd: worktree.path, policy: "nope" }),
    );
    // One error for an unknown policy, whichever layer finds it: unknown_policy naming it.
    expect(unknownPolicy.status).toBe(400);
    expect(unknownPolicy.code).toBe("unknown_policy");
    expect(unknownPolicy.message).toStartWith("Unknown policy nope: loaded policies are ");
    expect(unknownPolicy.details).toEqual([{ path: "policy", message: unknownPolicy.message }]);
    const metrics = await d.client.metrics();
    expect(metrics).toMatch(/codexd_turns_total\{kind="completed"\} 1/);
  });

  test("after a restart the session is interrupted, replays, and resumes with its context", async () => {
    const stateDir = makeStateDir();
    let sessionId: string;
    let before: StoredEvent[];
    {
      await using d = await start(stateDir);
      ({ sessionId } = await d.client.spawn({ prompt: "REMEMBER 4242", cwd: worktree.path }));
      before = await untilTerminal(d.client, sessionId);
      await d.client.send(sessionId, "GREET");
      await untilTerminal(d.client, sessionId, before.at(-1)!.seq);
    }
    await using d = await start(stateDir);
    const listed = await d.client.list();
    expect(listed.find((s) => s.sessionId === sessionId)).toMatchObject({
      status: "interrupted",
    });
    const replay = await d.client.storedEvents(sessionId, { after: 0 });
    expect(replay.slice(0, before.length)).toEqual(before);
    const requests = model.requests.length;
    await d.client.resume(sessionId, { prompt: "GREET once more", cwd: worktree.path });
    const resumed = await untilTerminal(d.client, sessionId, replay.at(-1)!.seq);
    expect(resumed.at(-1)).toMatchObject({ type: "result", text: "hello, runner" });
    expect(resumed[0]!.seq).toBe(replay.at(-1)!.seq + 1);
    const body = JSON.stringify(model.requests.slice(requests).map((r) => r.body));
    expect(body).toContain("REMEMBER 4242"); // the thread kept its context
  });

  test("a table of bad requests, one or more per route, each with its 4xx and field", async () => {
    await using d = await start();
    const { sessionId } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
    await untilTerminal(d.client, sessionId);
    const { token } = d;
    const cases: Array<[string, string, unknown, number, string?]> = [
      ["POST", "/v1/sessions", {}, 400, "prompt"],
      ["POST", "/v1/sessions", { prompt: "x" }, 400, "cwd"],
      ["POST", "/v1/sessions", { prompt: "x", cwd: "/no/such/dir" }, 400, "cwd"],
      ["POST", "/v1/sessions", { prompt: "x", cwd: worktree.path, policy: "nope" }, 400, "policy"],
      ["POST", "/v1/sessions", { prompt: "x", cwd: worktree.path, colour: 1 }, 400, "colour"],
      ["POST", "/v1/sessions", "[1,", 400],
      ["GET", "/v1/sessions/ses_nope", undefined, 404],
      ["POST", "/v1/sessions/ses_nope/turns", { prompt: "x" }, 404],
      ["POST", `/v1/sessions/${sessionId}/turns`, { prompt: 7 }, 400, "prompt"],
      ["POST", `/v1/sessions/${sessionId}/resume`, { prompt: "x", cwd: worktree.path }, 409],
      ["POST", `/v1/sessions/${sessionId}/inject`, { text: "steer" }, 409],
      ["POST", `/v1/sessions/${sessionId}/inject`, {}, 400, "text"],
      ["POST", "/v1/sessions/ses_nope/interrupt", undefined, 404],
      ["DELETE", "/v1/sessions/ses_nope", undefined, 404],
      ["GET", "/v1/sessions/ses_nope/events", undefined, 404],
      ["GET", `/v1/sessions/${sessionId}/events?after=-1`, undefined, 400, "after"],
      ["GET", "/v1/sessions/ses_nope/approvals", undefined, 404],
      ["POST", `/v1/sessions/${sessionId}/approvals/r-1`, { decision: "maybe" }, 400, "decision"],
      ["POST", `/v1/sessions/${sessionId}/approvals/r-1`, { decision: "allow" }, 404],
      ["POST", "/v1/policies/evaluate", { policy: "nope", command: "ls" }, 400, "policy"],
      ["POST", "/v1/policies/evaluate", { policy: "default" }, 400],
      ["PUT", "/v1/sessions", {}, 405],
      ["POST", "/v1/sessions", "x".repeat(1024 * 1024 + 1), 413],
    ];
    const failures: string[] = [];
    for (const [method, route, body, status, field] of cases) {
      const res = await fetch(d.daemon.url + route, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body !== undefined && { body: typeof body === "string" ? body : JSON.stringify(body) }),
      });
      const text = await res.text();
      const error = JSON.parse(text).error;
      const fields = JSON.stringify(error?.details ?? []);
      if (res.status !== status || !error?.code || (field && !fields.includes(`"${field}`))) {
        failures.push(`${method} ${route} → ${res.status} ${text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    const anonymous = await fetch(d.daemon.url + "/v1/sessions");
    expect(anonymous.status).toBe(401);
    expect((await fetch(d.daemon.url + "/v1/health")).status).toBe(200);
  });

  test("an ask rule holds the command for a person; the answer through the API lets it run", async () => {
    const policies = await mkdtemp(path.join(tmpdir(), "codexd-policies-"));
    await writeFile(
      path.join(policies, "attended.yaml"),
      [
        "version: 1",
        "name: attended",
        "default: allow",
        "askTimeout: 5m",
        "commands:",
        "  ask:",
        "    - id: ask-touch",
        "      regex: 'touch asked-marker'",
        "      reason: a person decides",
      ].join("\n"),
    );
    await using d = await start(makeStateDir(), policies);
    const { sessionId } = await d.client.spawn({
      prompt: "ASK first",
      cwd: worktree.path,
      policy: "attended",
    });
    // A runner discovers held approvals by asking; the request is registered a moment after
    // codex announces the command, so ask until it shows (no event comes while it is held).
    const pending = await eventually("the held approval", async () => {
      const held = (await d.client.approvals(sessionId)).pending;
      return held.length > 0 ? held : undefined;
    }, { limitMs: 5_000, intervalMs: 10 });
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ ruleId: "ask-touch", request: { kind: "command" } });
    expect(existsSync(path.join(worktree.path, "asked-marker.txt"))).toBe(false);
    // A held approval shows in health and metrics, so a person can find it.
    expect((await d.client.health()).sessions).toMatchObject({
      pendingApprovals: 1,
      oldestPendingApprovalSince: pending[0]!.since,
    });
    expect(await d.client.metrics()).toContain("codexd_pending_approvals 1");
    await d.client.answerApproval(sessionId, pending[0]!.requestId, "allow");
    const events = await untilTerminal(d.client, sessionId);
    expect(events.at(-1)).toMatchObject({ type: "result", text: "touched" });
    expect(existsSync(path.join(worktree.path, "asked-marker.txt"))).toBe(true);
    const decided = (await d.client.approvals(sessionId)).decisions;
    expect(decided).toContainEqual(
      expect.objectContaining({ decision: "allow", ruleId: "ask-touch" }),
    );
    const again = await apiError(
      d.client.answerApproval(sessionId, pending[0]!.requestId, "deny"),
    );
    expect(again.status).toBe(409);
    await rm(policies, { recursive: true, force: true });
  });

  test("codexd sessions list, show and tail talk to the running daemon", async () => {
    await using d = await start();
    const { sessionId } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
    await untilTerminal(d.client, sessionId);
    await d.client.stop(sessionId); // so that tail replays and ends
    const cli = (...args: string[]) =>
      execFileAsync(process.execPath, [
        path.join(REPO_ROOT, "src/main.ts"),
        "sessions",
        ...args,
        "--url",
        d.daemon.url,
        "--state-dir",
        d.stateDir,
      ], { encoding: "utf8" });
    const list = await cli("list");
    expect(list.stdout).toMatch(new RegExp(`^${sessionId}\\s+stopped\\s+default\\s+`, "m"));
    const show = await cli("show", sessionId);
    expect(JSON.parse(show.stdout)).toMatchObject({ sessionId, status: "stopped" });
    const tail = await cli("tail", sessionId);
    expect(tail.stdout).toMatch(/^\s+1 system\s+user_prompt: GREET$/m);
    expect(tail.stdout).toMatch(/^\s+\d+ result\s+hello, runner$/m);
    const missing = await cli("show", "ses_nope").then(() => 0, (e: { code: number }) => e.code);
    expect(missing).toBe(1);
  });
});

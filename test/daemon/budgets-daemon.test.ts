/**
 * Token budgets through the assembled daemon, against the real codex and the scripted model
 * (which reports the usage each response is scripted with): a session capped at N tokens stops
 * with `budget_exceeded` within one model response of crossing it and is resumable with a larger
 * budget; a fleet's hourly cap stops the fleet's running turns and refuses the next spawn with
 * 429 (budget, spend, reopening, Retry-After); spend survives a restart; the window reopens on
 * the daemon's (injected) clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { tempDir } from "../approval/support/policies.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { eventually } from "../support/eventually.ts";
import { apiError, untilTerminal } from "../support/session-events.ts";

const HOUR_MS = 3_600_000;

let model: ScriptedModel;
let worktree: TempWorktree;
const policies = tempDir("codexd-budget-policies-");

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      // First: a resumed thread's re-seeded prompt also holds the earlier prompts.
      { marker: "AGAIN", rounds: [[step.usage(10, 5), step.message("back again")]] },
      { marker: "QUIET", rounds: [[step.usage(0, 0), step.message("quiet")]] },
      {
        // Three responses of 400 tokens each (300 in, 100 out), each calling a tool so the turn
        // goes on; a fourth response would hang, so a turn that outlived the cap would show.
        marker: "SPEND",
        rounds: [
          [step.usage(300, 100), step.exec("echo round-1")],
          [step.usage(300, 100), step.exec("echo round-2")],
          [step.usage(300, 100), step.exec("echo round-3")],
          [step.stall()],
        ],
      },
      { marker: "STALL", rounds: [[step.stall()]] },
      {
        // 1200 tokens, of which 900 cached input: 1200 counted (the policy counts cached input).
        marker: "BURN",
        rounds: [
          [step.usage(1000, 200, { cachedInputTokens: 900 }), step.exec("echo burn")],
          [step.stall()],
        ],
      },
    ],
  });
  worktree = await makeTempWorktree();
  copyFileSync(
    path.join(REPO_ROOT, "policies", "default.yaml"),
    path.join(policies.dir, "default.yaml"),
  );
  writeFileSync(
    path.join(policies.dir, "capped.yaml"),
    "version: 1\nname: capped\nextends: [default]\nbudgets:\n  sessionTokens: 5000\n",
  );
  writeFileSync(
    path.join(policies.dir, "hourly.yaml"),
    "version: 1\nname: hourly\nextends: [default]\nbudgets:\n  sessionTokens: unlimited\n" +
      "  fleetTokensPerHour: 1000\n  fleetTokensPerDay: 100000\n  countCachedInput: true\n",
  );
});
afterAll(async () => {
  await worktree?.remove();
  await model?.close();
  policies[Symbol.dispose]();
});

/** The daemon's clock: the wall clock moved by `offsetMs`. */
const clock = { offsetMs: 0 };
function start(stateDir?: string) {
  return startDaemonInProcess({
    model,
    policiesDir: policies.dir,
    ...(stateDir !== undefined && { stateDir }),
    deps: { now: () => new Date(Date.now() + clock.offsetMs) },
  });
}

const ofType = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type);

describe("token budgets against the real codex", () => {
  test("a session capped at N tokens stops with budget_exceeded within one response", async () => {
    await using d = await start();
    const spawned = model.requests.length;
    const { sessionId } = await d.client.spawn({
      prompt: "SPEND tokens",
      cwd: worktree.path,
      policy: "capped",
      budget: { tokens: 1000 },
    });
    const events = await untilTerminal(d.client, sessionId);
    // 400, 800 (80 %: warned), 1200 (over 1000: stopped) — and no fourth response was used.
    expect(ofType(events, "usage")).toHaveLength(3);
    const warning = events.find((e) => e.type === "system" && e.subtype === "budget_warning");
    expect(warning).toMatchObject({ scope: "session", budget: 1000, spend: 800, threshold: 0.8 });
    expect(events.indexOf(warning!)).toBeGreaterThan(events.indexOf(ofType(events, "usage")[1]!));
    const terminal = events.at(-1)!;
    expect(terminal).toMatchObject({
      type: "error",
      code: "budget_exceeded",
      budget: { scope: "session", fleet: "capped", budget: 1000, spend: 1200, reopensAt: null },
    });
    expect(String(terminal.message)).toContain("spent 1200 tokens of its budget of 1000");
    expect(ofType(events, "result")).toEqual([]);
    // Exactly one terminal event for the turn, then the session is unloaded, resumable.
    const all = await eventually("the session to unload", async () => {
      const stored = await d.client.storedEvents(sessionId, { after: 0 });
      return stored.at(-1)?.subtype === "session_stopped" ? stored : undefined;
    });
    const info = await d.client.get(sessionId);
    expect(info).toMatchObject({
      status: "budget_exceeded",
      currentTurn: null,
      budget: { tokens: 1000, spent: 1200 },
    });
    expect(all.filter((e) => e.type === "error" || e.type === "result")).toHaveLength(1);
    expect(all.at(-1)).toMatchObject({ subtype: "session_stopped", reason: "budget_exceeded" });
    const used = model.requests.slice(spawned).filter((r) => r.answeredBy === 1);
    expect(used.length).toBeLessThanOrEqual(4); // the fourth, if codex got to ask, hung unanswered

    // A turn is refused (not live: resume it); resuming with the same budget is a 429 that no
    // time fixes; above the policy's sessionTokens is a 400; a larger budget resumes it.
    expect((await apiError(d.client.send(sessionId, "more"))).status).toBe(409);
    const spent = await apiError(
      d.client.resume(sessionId, {
        prompt: "AGAIN",
        cwd: worktree.path,
        policy: "capped",
        budget: { tokens: 1000 },
      }),
    );
    expect(spent).toMatchObject({ status: 429, code: "budget_exceeded" });
    expect(spent.details).toEqual({
      scope: "session",
      fleet: "capped",
      budget: 1000,
      spend: 1200,
      reopensAt: null,
      retryAfter: null,
    });
    const tooMuch = await apiError(
      d.client.resume(sessionId, {
        prompt: "AGAIN",
        cwd: worktree.path,
        policy: "capped",
        budget: { tokens: 6000 },
      }),
    );
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.details).toEqual([
      expect.objectContaining({ path: "budget.tokens", rule: "budget.max" }),
    ]);
    await d.client.resume(sessionId, {
      prompt: "AGAIN",
      cwd: worktree.path,
      policy: "capped",
      budget: { tokens: 3000 },
    });
    const resumed = await untilTerminal(d.client, sessionId, all.at(-1)!.seq);
    expect(resumed.at(-1)).toMatchObject({ type: "result", text: "back again" });
    // The resumed turn's 15 tokens, no more: codex's own records of the thread count nothing twice.
    expect(await d.client.get(sessionId)).toMatchObject({
      status: "idle",
      budget: { tokens: 3000, spent: 1215 },
    });

    // The policy's cap lowered under what the live session spent: its next turn is refused and
    // the session unloaded, resumable once the cap is raised again.
    const capped = path.join(policies.dir, "capped.yaml");
    writeFileSync(capped, readFileSync(capped, "utf8").replace("5000", "1200"));
    expect((await d.client.reloadPolicies()).changed).toEqual(["capped"]);
    const lowered = await apiError(d.client.send(sessionId, "AGAIN"));
    expect(lowered).toMatchObject({ status: 429, code: "budget_exceeded" });
    expect(lowered.details).toMatchObject({ scope: "session", budget: 1200, spend: 1215 });
    await eventually("the session to unload", async () => {
      const s = await d.client.get(sessionId);
      return s.status === "budget_exceeded" ? s : undefined;
    });
    writeFileSync(capped, readFileSync(capped, "utf8").replace("1200", "5000"));
    await d.client.reloadPolicies();
    const last = (await d.client.storedEvents(sessionId, { after: 0 })).at(-1)!.seq;
    await d.client.resume(sessionId, {
      prompt: "AGAIN",
      cwd: worktree.path,
      policy: "capped",
      budget: { tokens: 3000 },
    });
    expect((await untilTerminal(d.client, sessionId, last)).at(-1)).toMatchObject({
      type: "result",
    });

    const metrics = await d.client.metrics();
    expect(metrics).toContain('codexd_budget_exceeded_total{fleet="capped",scope="session"} 1');
    expect(metrics).toContain('codexd_turns_total{kind="budget_exceeded"} 1');
  });

  test("a fleet's hourly cap stops its running turns, refuses the next spawn with 429, and survives a restart", async () => {
    const stateDir = makeStateDir();
    clock.offsetMs = 0;
    let burner: string;
    let bystander: string;
    {
      await using d = await start(stateDir);
      // An idle session of the fleet: its next turn will be refused, it stays idle.
      const { sessionId: idle } = await d.client.spawn({
        prompt: "QUIET",
        cwd: worktree.path,
        policy: "hourly",
      });
      expect((await untilTerminal(d.client, idle)).at(-1)).toMatchObject({ type: "result" });
      const before = model.requests.length;
      ({ sessionId: bystander } = await d.client.spawn({
        prompt: "STALL for a while",
        cwd: worktree.path,
        policy: "hourly",
      }));
      await model.waitForRequest((r) => r.facts?.latestUserText.includes("STALL") === true, {
        from: before,
      });
      ({ sessionId: burner } = await d.client.spawn({
        prompt: "BURN tokens",
        cwd: worktree.path,
        policy: "hourly",
      }));
      const burned = await untilTerminal(d.client, burner);
      expect(burned.find((e) => e.subtype === "budget_warning")).toMatchObject({
        scope: "hour",
        fleet: "hourly",
        budget: 1000,
        spend: 1200,
      });
      expect(burned.at(-1)).toMatchObject({
        type: "error",
        code: "budget_exceeded",
        budget: { scope: "hour", fleet: "hourly", budget: 1000, spend: 1200 },
      });
      // The other running turn of the fleet spends the same window: stopped too.
      const waited = await untilTerminal(d.client, bystander);
      expect(waited.at(-1)).toMatchObject({ type: "error", code: "budget_exceeded" });

      // The next spawn: 429 with the budget, the spend, the reopening and Retry-After.
      const response = await fetch(`${d.daemon.url}/v1/sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
        body: JSON.stringify({ prompt: "AGAIN", cwd: worktree.path, policy: "hourly" }),
      });
      expect(response.status).toBe(429);
      const body = await response.json() as {
        error: { code: string; details: Record<string, unknown> };
      };
      expect(body.error.code).toBe("budget_exceeded");
      expect(body.error.details).toMatchObject({
        scope: "hour",
        fleet: "hourly",
        budget: 1000,
        spend: 1200,
      });
      const retryAfter = Number(response.headers.get("retry-after"));
      expect(retryAfter).toBe(body.error.details.retryAfter as number);
      expect(retryAfter).toBeGreaterThan(3500);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      const reopensAt = Date.parse(String(body.error.details.reopensAt));
      expect(reopensAt - (Date.now() + clock.offsetMs)).toBeGreaterThan(3500_000);
      // A new turn of the idle session: 429 too; the session stays live and idle.
      const turnRefused = await apiError(d.client.send(idle, "QUIET again"));
      expect(turnRefused).toMatchObject({ status: 429, code: "budget_exceeded" });
      expect(turnRefused.details).toMatchObject({ scope: "hour", spend: 1200 });
      expect((await d.client.get(idle)).status).toBe("idle");
      // Other fleets are not affected.
      expect(
        (await d.client.spawn({ prompt: "AGAIN", cwd: worktree.path, policy: "default" }))
          .sessionId,
      ).toStartWith("ses_");

      const fleets = await eventually("the stopped sessions to leave", async () => {
        const list = await d.client.fleets();
        return list.find((f) => f.name === "hourly")?.liveSessions === 1 ? list : undefined;
      });
      expect(fleets.find((f) => f.name === "hourly")).toMatchObject({
        policyVersion: expect.stringMatching(/^[0-9a-f]{12}$/),
        budgets: {
          sessionTokens: null,
          fleetTokensPerHour: 1000,
          fleetTokensPerDay: 100000,
          countCachedInput: true,
        },
        usage: {
          lastHour: { tokens: 1200, budget: 1000, reopensAt: new Date(reopensAt).toISOString() },
          lastDay: { tokens: 1200, budget: 100000, reopensAt: null },
        },
      });
      expect(fleets.find((f) => f.name === "default")).toMatchObject({ liveSessions: 1 });
      const metrics = await d.client.metrics();
      expect(metrics).toContain('codexd_fleet_tokens{fleet="hourly",window="hour"} 1200');
      expect(metrics).toContain('codexd_fleet_token_budget{fleet="hourly",window="hour"} 1000');
      expect(metrics).toContain('codexd_budget_exceeded_total{fleet="hourly",scope="hour"} 1');
      expect(metrics).toContain('codexd_budget_refusals_total{fleet="hourly",scope="hour"} 2');
      for (const id of [burner, bystander]) {
        expect((await d.client.get(id)).status).toBe("budget_exceeded");
      }
    }

    // A new daemon on the same state dir: the spend is still there, the spawn still refused.
    {
      await using d = await start(stateDir);
      const hourly = (await d.client.fleets()).find((f) => f.name === "hourly");
      expect(hourly?.usage.lastHour).toMatchObject({ tokens: 1200, budget: 1000 });
      const refused = await apiError(
        d.client.spawn({ prompt: "AGAIN", cwd: worktree.path, policy: "hourly" }),
      );
      expect(refused).toMatchObject({ status: 429, code: "budget_exceeded" });
      expect(
        (await apiError(
          d.client.resume(burner, { prompt: "AGAIN", cwd: worktree.path, policy: "hourly" }),
        )).status,
      ).toBe(429);

      // An hour later (on the daemon's clock) the window has room: spawn and resume work.
      clock.offsetMs += HOUR_MS;
      const { sessionId } = await d.client.spawn({
        prompt: "AGAIN",
        cwd: worktree.path,
        policy: "hourly",
      });
      expect((await untilTerminal(d.client, sessionId)).at(-1)).toMatchObject({
        type: "result",
        text: "back again",
      });
      const last = (await d.client.storedEvents(burner, { after: 0 })).at(-1)!.seq;
      await d.client.resume(burner, { prompt: "AGAIN", cwd: worktree.path, policy: "hourly" });
      expect((await untilTerminal(d.client, burner, last)).at(-1)).toMatchObject({
        type: "result",
        text: "back again",
      });
      expect((await d.client.fleets()).find((f) => f.name === "hourly")?.usage.lastHour)
        .toMatchObject({ tokens: 30, reopensAt: null });
    }
  });
});

/**
 * An approved command stays in the sandbox, against the real codex. Under `untrusted`, codex 0.169
 * reruns an approved command with no sandbox, without asking again, when its sandboxed run fails
 * like a sandbox denial does (a quick non-zero exit saying "Read-only file system"); with the
 * `read-only` sandbox a plain `touch <outside>` is enough, every time tried. codexd gives the
 * sandbox as a permission profile with a deny-read entry instead (plan.ts, sandboxProfileConfig),
 * and codex then keeps the sandboxed result. Each case has its positive control: the thread
 * parameters codexd sent before (thread/start's `sandbox`) do let the same command out.
 *
 * The commands only touch marker files: in the worktree, or in a folder of this repository's
 * .codexd/ (outside the worktree and the temp folder, so no sandbox lets a command write there)
 * that the test removes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { pinnedConfig, planThread } from "../../../src/provider/codex/plan.ts";
import { Spec, type SpecInput } from "../../../src/provider/spec.ts";
import type { ApprovalRequest, Approver } from "../../../src/provider/types.ts";
import {
  asRecord,
  LineClient,
  makeCodexHome,
  makeTempWorktree,
  startCodex,
  type TempWorktree,
} from "../../support/codex-harness.ts";
import {
  EventRecorder,
  startTestProvider,
  type TestProvider,
} from "../../support/provider-fixture.ts";
import { outsideSandboxDir } from "../../support/outside-dir.ts";

/** How many times each escape is tried (codex's denial detection races the command's exit). */
const TRIES = 3;
/** Rounds of TRIES attempts the positive controls may take (see escapesInSomeRound). */
const ROUNDS = 5;

let model: ScriptedModel;
let worktree: TempWorktree;
let codex: TestProvider;
const OUTSIDE = outsideSandboxDir("approved-sandbox-");
const outside = (name: string) => path.join(OUTSIDE, name);

/** Every command the bridge was asked about; commands naming `bridge-denies` are denied. */
const asked: ApprovalRequest[] = [];
const recordingApprover: Approver = {
  decide(request) {
    asked.push(request);
    const deny = request.kind === "command" && request.command.includes("bridge-denies");
    return Promise.resolve({
      decision: deny ? "deny" : "allow",
      source: "test",
      reason: deny ? "the test denies it" : "the test allows it",
    });
  },
};

/** A rule per marker: the model runs `touch <file>` (with more exec_command arguments). */
function touchRule(marker: string, file: string, extra?: Record<string, unknown>) {
  return {
    marker,
    rounds: [[step.exec(`touch ${file}`, extra ? { extra } : {})], [
      step.message(`${marker} done`),
    ]],
  };
}

beforeAll(async () => {
  const rules = [];
  for (let i = 0; i < TRIES; i++) {
    const rounds = Array.from({ length: ROUNDS }, (_, r) => [`bare${r}`, `resumedbare${r}`]).flat();
    for (const mode of ["plan", "default", "resumed", ...rounds]) {
      rules.push(touchRule(`OUT_${mode}_${i}_END`, outside(`${mode}-${i}`)));
    }
  }
  rules.push(
    touchRule("INSIDE_END", "inside.marker"),
    touchRule("BRIDGEDENIES_END", "bridge-denies.marker"),
    touchRule("ESCALATED_END", outside("escalated"), { sandbox_permissions: "require_escalated" }),
  );
  model = await startScriptedModel({ rules });
  worktree = await makeTempWorktree();
  codex = await startTestProvider({ model, approver: recordingApprover });
});

afterAll(async () => {
  await codex?.close();
  await worktree?.remove();
  await model?.close();
  rmSync(OUTSIDE, { recursive: true, force: true });
});

const spec = (input: Partial<SpecInput>) =>
  Spec.parse({ cwd: worktree.path, prompt: "hello", ...input });

/** One session through codexd's provider (its thread params, its answers to codex). */
async function runSession(input: Partial<SpecInput>) {
  const before = asked.length;
  const handle = await codex.provider.spawn(spec(input));
  const events = new EventRecorder(handle);
  const result = await events.waitFor((e) => e.type === "result" || e.type === "error", 30_000);
  await handle.stop();
  return { result, events: events.events, asked: asked.slice(before) };
}

/** A bare codex on `home` (fresh if none), every request accepted; counts the approvals. */
async function bareClient(home?: string) {
  const bare = await startCodex({
    model,
    modelArgs: { requestMaxRetries: 0 },
    ...(home !== undefined && { codexHome: home }),
  });
  const client = new LineClient(bare);
  const counter = { approvals: 0 };
  client.onServerRequest(() => {
    counter.approvals++;
    return { decision: "accept" };
  });
  await client.initialize();
  return { bare, client, counter };
}

async function runTurns(client: LineClient, threadId: string, prompts: string[]): Promise<void> {
  for (const prompt of prompts) {
    const turn = asRecord(
      await client.request("turn/start", {
        threadId,
        input: [{ type: "text", text: prompt, text_elements: [] }],
      }),
    );
    const turnId = String(asRecord(turn.turn).id);
    await client.waitForNotification(
      "turn/completed",
      (p) => asRecord(p.turn).id === turnId,
      30_000,
    );
  }
}

/** Turns on a bare codex with these thread/start params, one per prompt; the approvals asked. */
async function runBare(params: Record<string, unknown>, prompts: string[]): Promise<number> {
  const { bare, client, counter } = await bareClient();
  await using _ = bare;
  const started = asRecord(await client.request("thread/start", params, 30_000));
  await runTurns(client, String(asRecord(started.thread).id), prompts);
  return counter.approvals;
}

/**
 * A thread started bare with one harmless turn, then resumed by a new codex on the same home (as
 * after a daemon restart) with these overrides, and the prompts run there.
 */
async function runResumed(overrides: Record<string, unknown>, prompts: string[]): Promise<void> {
  const home = await makeCodexHome();
  try {
    let threadId: string;
    {
      const { bare, client } = await bareClient(home);
      await using _ = bare;
      const started = asRecord(
        await client.request("thread/start", { cwd: worktree.path, approvalPolicy: "untrusted" }),
      );
      threadId = String(asRecord(started.thread).id);
      await runTurns(client, threadId, ["hello"]);
    }
    const { bare, client } = await bareClient(home);
    await using _ = bare;
    await client.request("thread/resume", { threadId, ...overrides }, 30_000);
    await runTurns(client, threadId, prompts);
  } finally {
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
  }
}

const tries = (mode: string) => Array.from({ length: TRIES }, (_, i) => `OUT_${mode}_${i}_END`);
const written = (mode: string) =>
  Array.from({ length: TRIES }, (_, i) => outside(`${mode}-${i}`)).filter((f) => existsSync(f));

/** What codexd sent before: the sandbox as thread/start's `sandbox`, no permission profile. */
function paramsBefore(input: Partial<SpecInput>) {
  const { config: _config, ...rest } = planThread(spec(input));
  return {
    ...rest,
    sandbox: input.permissionMode === "plan" ? "read-only" : "workspace-write",
    config: pinnedConfig(worktree.path, undefined),
  };
}

/**
 * codex reruns a command unsandboxed only when it sees the sandbox denial while the process is
 * still starting: a race a loaded machine can lose several times in a row. The positive controls
 * therefore try in rounds until one touch gets out, with a bound.
 */
async function escapesInSomeRound(
  prefix: string,
  run: (mode: string) => Promise<void>,
): Promise<number> {
  for (let round = 0; round < ROUNDS; round++) {
    const mode = `${prefix}${round}`;
    await run(mode);
    const out = written(mode).length;
    if (out > 0) return out;
  }
  return 0;
}

describe("an approved command that fails in the sandbox is not rerun without it", () => {
  test("positive control: with thread/start's sandbox (codexd before), an approved touch outside the worktree gets out", async () => {
    const out = await escapesInSomeRound("bare", async (mode) => {
      const approvals = await runBare(paramsBefore({ permissionMode: "plan" }), tries(mode));
      expect(approvals).toBe(TRIES);
    });
    expect(out).toBeGreaterThan(0);
  });

  test("plan mode: every touch outside reaches the bridge, is allowed, and writes nothing", async () => {
    for (const prompt of tries("plan")) {
      const run = await runSession({ prompt, permissionMode: "plan" });
      expect(run.result.type).toBe("result");
      expect(run.asked).toEqual([expect.objectContaining({ kind: "command" })]);
      expect(run.events.find((e) => e.type === "approval")).toMatchObject({ decision: "allow" });
    }
    expect(written("plan")).toEqual([]);
  });

  test("default mode: the same touch outside writes nothing; inside the worktree it works; the bridge's deny holds", async () => {
    for (const prompt of tries("default")) {
      const run = await runSession({ prompt });
      expect(run.asked).toEqual([expect.objectContaining({ kind: "command" })]);
    }
    expect(written("default")).toEqual([]);
    // The workspace sandbox still lets an approved command write in the worktree.
    const inside = await runSession({ prompt: "INSIDE_END" });
    expect(inside.asked.length).toBe(1);
    expect(existsSync(path.join(worktree.path, "inside.marker"))).toBe(true);
    // Every command still reaches the bridge, and what it denies does not run.
    const denied = await runSession({ prompt: "BRIDGEDENIES_END" });
    expect(denied.events.find((e) => e.type === "approval")).toMatchObject({ decision: "deny" });
    expect(existsSync(path.join(worktree.path, "bridge-denies.marker"))).toBe(false);
  });

  test("thread/resume carries the profile too (positive control: resumed with thread/start's sandbox, the touch gets out)", async () => {
    const plan = planThread(spec({ permissionMode: "plan" }));
    const { cwd: _cwd, ...resumeOverrides } = plan;
    await runResumed(resumeOverrides, tries("resumed"));
    expect(written("resumed")).toEqual([]);
    const { cwd: _cwd2, ...before } = paramsBefore({ permissionMode: "plan" });
    const out = await escapesInSomeRound("resumedbare", (mode) => runResumed(before, tries(mode)));
    expect(out).toBeGreaterThan(0);
  });
});

// codex itself still runs an approved escalation unsandboxed and says nothing of it in the
// approval request; codexd reads the tool call's raw item and puts the escalation in the request
// it hands the bridge, which declines it (escalation.test.ts, through the daemon). Here the test
// approver allows it, to show what codex would do with an approval.
describe("an escalation codex does not show in its request", () => {
  test("sandbox_permissions require_escalated reaches the bridge as an escalation; approved, it runs unsandboxed", async () => {
    const run = await runSession({ prompt: "ESCALATED_END" });
    expect(run.asked).toEqual([
      {
        kind: "command",
        command: expect.stringContaining("touch"),
        cwd: worktree.path,
        reason: null,
        escalation: 'sandbox_permissions: "require_escalated"',
      },
    ]);
    expect(existsSync(outside("escalated"))).toBe(true);
  });
});

/**
 * The pool of codex children (`codex.pool`, src/provider/codex/pool.ts), in-process against the real
 * codex and the scripted model: placement on the least-loaded child, a kill -9 of one child that
 * ends only its own sessions, recycling and rolling restarts that move sessions between turns
 * with zero failed turns. Turns that must be running at a given moment are held at a command's
 * approval (the `gated` policy's ask rule) until the test answers it: no timing involved.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { CodexdClient } from "../../../src/client.ts";
import type { StoredEvent } from "../../../src/api/schemas.ts";
import type { ResolvedConfig } from "../../../src/daemon/config.ts";
import type { DaemonDeps } from "../../../src/daemon/daemon.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { resolveCodexBinary } from "../../../src/provider/codex/binary.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../../support/codex-harness.ts";
import { makeStateDir } from "../../support/daemon-process.ts";
import { type InProcessDaemon, startDaemonInProcess } from "../../support/daemon-in-process.ts";
import { eventually } from "../../support/eventually.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
let policies: string;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      // A command the `gated` policy holds for a person: the turn runs until the test answers.
      { marker: "GATE", rounds: [[step.exec("echo pool-gate")], [step.message("gate passed")]] },
    ],
  });
  worktree = await makeTempWorktree();
  policies = await mkdtemp(path.join(tmpdir(), "codexd-pool-policies-"));
  await writeFile(
    path.join(policies, "gated.yaml"),
    [
      "version: 1",
      "name: gated",
      "default: allow",
      "askTimeout: 5m",
      "commands:",
      "  ask:",
      "    - id: gate",
      "      regex: 'echo pool-gate'",
      "      reason: the test opens the gate",
    ].join("\n"),
  );
});
afterAll(async () => {
  await worktree?.remove();
  if (policies) await rm(policies, { recursive: true, force: true });
  await model?.close();
});

const FAST_BACKOFF = { initialMs: 50, maxMs: 200, resetAfterMs: 60_000 };

function start(
  pool: number,
  options: {
    deps?: DaemonDeps;
    configure?: (config: ResolvedConfig) => void;
    policiesDir?: string;
  } = {},
): Promise<InProcessDaemon> {
  return startDaemonInProcess({
    model,
    ...(options.policiesDir && { policiesDir: options.policiesDir }),
    deps: { backoff: FAST_BACKOFF, ...options.deps },
    configure: (config) => {
      config.codex.pool = pool;
      config.codex.recycle = { ...config.codex.recycle, checkIntervalSeconds: 0 };
      options.configure?.(config);
    },
  });
}

async function events(client: CodexdClient, id: string): Promise<StoredEvent[]> {
  return await client.storedEvents(id, { after: 0, limit: 10_000 });
}

/** The session's terminal events, once it has `count` of them. */
function terminals(client: CodexdClient, id: string, count: number): Promise<StoredEvent[]> {
  return eventually(`${count} terminal events of ${id}`, async () => {
    const ends = (await events(client, id)).filter((e) =>
      e.type === "result" || e.type === "error"
    );
    return ends.length >= count ? ends : undefined;
  }, { limitMs: 60_000 });
}

/** The session's one pending approval, once its turn is held at it. */
function heldApproval(client: CodexdClient, id: string) {
  return eventually(`the held approval of ${id}`, async () => {
    const pending = (await client.approvals(id)).pending;
    return pending.length === 1 ? pending[0]! : undefined;
  }, { limitMs: 30_000 });
}

/** Which child (its pid) each live session is on. */
function placement(d: InProcessDaemon): Map<string, number> {
  const where = new Map<string, number>();
  for (const provider of d.daemon.pool.providers) {
    for (const id of provider.handles.keys()) where.set(id, provider.pid!);
  }
  return where;
}

describe("codex pool", () => {
  test(
    "sessions spread over the least-loaded children; kill -9 of one ends only its sessions",
    async () => {
      await using d = await start(3, { policiesDir: policies });
      const health = await d.client.health();
      expect(health.codex.children).toHaveLength(3);
      expect(new Set(health.codex.children!.map((c) => c.pid)).size).toBe(3);

      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        ids.push(
          (await d.client.spawn({ prompt: `GATE crash-${i}`, cwd: worktree.path, policy: "gated" }))
            .sessionId,
        );
      }
      const busy = await d.client.health();
      expect(busy.codex.children!.map((c) => c.sessions)).toEqual([2, 2, 2]);
      expect(busy.capacity).toMatchObject({
        liveSessions: 6,
        freeSlots: busy.capacity!.maxLiveSessions - 6,
      });
      // Every turn runs, held at its command's approval until the test answers it.
      const held = await eventually("six held approvals", async () => {
        const pending = await Promise.all(
          ids.map(async (id) => (await d.client.approvals(id)).pending),
        );
        return pending.every((p) => p.length === 1) ? pending.map((p) => p[0]!) : undefined;
      }, { limitMs: 30_000 });

      const where = placement(d);
      const victim = busy.codex.children![1].pid!;
      const doomed = ids.filter((id) => where.get(id) === victim);
      expect(doomed).toHaveLength(2);
      process.kill(victim, "SIGKILL");
      await terminals(d.client, doomed[0], 1);
      await terminals(d.client, doomed[1], 1);
      for (const [i, id] of ids.entries()) {
        if (!doomed.includes(id)) await d.client.answerApproval(id, held[i].requestId, "allow");
      }

      for (const id of ids) {
        const [end] = await terminals(d.client, id, 1);
        if (doomed.includes(id)) {
          expect(end).toMatchObject({
            type: "error",
            code: "app_server_crashed",
          });
        } else expect(end).toMatchObject({ type: "result", text: "gate passed" });
      }
      // Resumable at once, on a child that still runs.
      const resumed = doomed[0];
      await d.client.resume(resumed, {
        prompt: "after the crash",
        cwd: worktree.path,
        policy: "gated",
      });
      const [, again] = await terminals(d.client, resumed, 2);
      expect(again).toMatchObject({ type: "result", text: "echo: after the crash" });
      const seen = JSON.stringify(model.requests.at(-1)?.body?.input);
      expect(seen).toContain("GATE crash-"); // the thread went on, its first turn included

      const back = await eventually("the killed child replaced", async () => {
        const h = await d.client.health();
        return h.codex.children!.every((c) => c.state === "ready" && c.pid !== victim)
          ? h
          : undefined;
      });
      expect(back.codex.children).toHaveLength(3);
      expect(back.status).toBe("ok");
    },
    90_000,
  );

  test(
    "recycling over the stopped-threads limit moves sessions between turns: no turn fails",
    async () => {
      await using d = await start(1, {
        policiesDir: policies,
        configure: (config) => {
          config.codex.recycle = { ...config.codex.recycle, maxStoppedThreads: 1 };
        },
      });
      const spawn = async (prompt: string) =>
        (await d.client.spawn({ prompt, cwd: worktree.path, policy: "gated" })).sessionId;
      const [stoppedA, stoppedB, idle] = [
        await spawn("one"),
        await spawn("two"),
        await spawn("idle"),
      ];
      for (const id of [stoppedA, stoppedB, idle]) await terminals(d.client, id, 1);
      await d.client.stop(stoppedA);
      await d.client.stop(stoppedB);
      const busy = await spawn("GATE recycle-busy");
      const gate = await heldApproval(d.client, busy);
      const old = (await d.client.health()).codex.children![0];

      expect(await d.daemon.pool.checkRecycle()).toEqual([old.id]);
      // The idle session moves at once; the busy one stays while its turn runs (held).
      await eventually("the old child draining with only the busy session", async () => {
        const children = (await d.client.health()).codex.children!;
        const draining = children.find((c) => c.id === old.id);
        return children.length === 2 && draining?.state === "draining" &&
            draining.sessions === 1 && placement(d).get(idle) !== old.pid
          ? true
          : undefined;
      });
      await d.client.send(busy, "after the busy turn"); // queued behind the running turn
      await d.client.send(idle, "idle again");
      const [, idleAgain] = await terminals(d.client, idle, 2);
      expect(idleAgain).toMatchObject({ type: "result", text: "echo: idle again" });
      expect(placement(d).get(busy)).toBe(old.pid!); // still running where it started
      await d.client.answerApproval(busy, gate.requestId, "allow");

      const ends = [
        ...(await terminals(d.client, busy, 2)),
        ...(await terminals(d.client, idle, 2)),
      ];
      expect(ends[0]).toMatchObject({ type: "result", text: "gate passed" });
      expect(ends.filter((e) => e.type === "error")).toEqual([]);
      const after = await eventually("the old child gone", async () => {
        const h = await d.client.health();
        return h.codex.children!.length === 1 && h.codex.children![0].id !== old.id ? h : undefined;
      });
      expect(after.codex.children![0]).toMatchObject({ state: "ready", sessions: 2 });
      expect(after.codex.children![0].pid).not.toBe(old.pid);
      // The moved threads went on with their history on the new child.
      expect(placement(d).get(busy)).toBe(after.codex.children![0].pid!);
      const request = model.requests.findLast((r) =>
        r.facts?.latestUserText?.includes("after the busy turn")
      );
      expect(JSON.stringify(request?.body?.input)).toContain("GATE recycle-busy");
      // A session stopped on the old child resumes (its thread went free with the old child).
      await d.client.resume(stoppedA, {
        prompt: "back again",
        cwd: worktree.path,
        policy: "gated",
      });
      const [, resumed] = await terminals(d.client, stoppedA, 2);
      expect(resumed).toMatchObject({ type: "result", text: "echo: back again" });
    },
    90_000,
  );

  test(
    "rolling restart (the route, then SIGUSR2) with a new codex.bin: zero failed turns",
    async () => {
      const stateDir = makeStateDir();
      const real = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
      const marker = path.join(stateDir, "wrapper-starts");
      const wrapper = path.join(stateDir, "codex-wrapper");
      writeFileSync(wrapper, `#!/bin/sh\necho start >> '${marker}'\nexec '${real}' "$@"\n`);
      chmodSync(wrapper, 0o755);
      writeFileSync(marker, "");
      let loaded: ResolvedConfig | undefined;
      await using d = await start(2, {
        policiesDir: policies,
        configure: (config) => void (loaded = config),
        deps: {
          reloadConfig: () => ({ ...loaded!, codex: { ...loaded!.codex, bin: wrapper } }),
        },
      });
      const first = (await d.client.health()).codex.children!;
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const spec = { prompt: `GATE roll-${i}`, cwd: worktree.path, policy: "gated" };
        ids.push((await d.client.spawn(spec)).sessionId);
      }
      const gates = await Promise.all(ids.map((id) => heldApproval(d.client, id)));
      await d.client.restartCodex();
      // The first child drains while its turns run (held): nothing is cut short.
      await eventually("a child draining under running turns", async () => {
        const children = (await d.client.health()).codex.children!;
        return children.some((c) => c.state === "draining" && c.sessions === 2) ? true : undefined;
      });
      for (const id of ids) await d.client.send(id, `roll-follow-up ${id}`); // queued
      for (const [i, id] of ids.entries()) {
        await d.client.answerApproval(id, gates[i].requestId, "allow");
      }

      const replaced = await eventually("every child replaced", async () => {
        const h = await d.client.health();
        const children = h.codex.children!;
        return children.length === 2 &&
            children.every((c) => c.state === "ready" && !first.some((f) => f.id === c.id))
          ? children
          : undefined;
      }, { limitMs: 60_000 });
      expect(readFileSync(marker, "utf8").trim().split("\n")).toHaveLength(2);
      for (const id of ids) {
        const ends = await terminals(d.client, id, 2);
        expect(ends.map((e) => e.type)).toEqual(["result", "result"]);
      }

      // SIGUSR2 does the same.
      for (const id of ids) await d.client.send(id, `roll-signal ${id}`);
      process.kill(process.pid, "SIGUSR2");
      await eventually("every child replaced again", async () => {
        const children = (await d.client.health()).codex.children!;
        return children.length === 2 &&
            children.every((c) => c.state === "ready" && !replaced.some((r) => r.id === c.id))
          ? true
          : undefined;
      }, { limitMs: 60_000 });
      for (const id of ids) {
        const ends = await terminals(d.client, id, 3);
        expect(ends.map((e) => e.type)).toEqual(["result", "result", "result"]);
      }
      expect(readFileSync(marker, "utf8").trim().split("\n")).toHaveLength(4);
    },
    120_000,
  );

  test(
    "a stopped session resumes on the child still holding its thread; from a draining one, elsewhere",
    async () => {
      await using d = await start(2, { policiesDir: policies });
      const spawn = async (client: CodexdClient, prompt: string) =>
        (await client.spawn({ prompt, cwd: worktree.path, policy: "gated" })).sessionId;
      const resume = (client: CodexdClient, id: string, prompt: string) =>
        client.resume(id, { prompt, cwd: worktree.path, policy: "gated" });
      const first = await spawn(d.client, "owner one");
      await terminals(d.client, first, 1);
      const owner = placement(d).get(first)!;
      await d.client.stop(first); // codex keeps its thread loaded, and locked, on `owner`
      // The owner gets busier than the other child, so placement alone would pick the other one.
      for (const prompt of ["fill a", "fill b", "fill c"]) {
        await terminals(d.client, await spawn(d.client, prompt), 1);
      }
      const load = (await d.client.health()).codex.children!;
      expect(load.find((c) => c.pid === owner)!.sessions).toBeGreaterThan(
        load.find((c) => c.pid !== owner)!.sessions,
      );
      await resume(d.client, first, "back home");
      const [, home] = await terminals(d.client, first, 2);
      expect(home).toMatchObject({ type: "result", text: "echo: back home" });
      expect(placement(d).get(first)).toBe(owner);

      // One child, draining (a turn held at an approval keeps it so) while a session of it is
      // stopped: its thread is released there and the session resumes on the new child.
      await using one = await start(1, { policiesDir: policies });
      const stopped = await spawn(one.client, "stopped on the old child");
      await terminals(one.client, stopped, 1);
      await one.client.stop(stopped);
      const holder = await spawn(one.client, "GATE hold the drain");
      const gate = await eventually("the held approval", async () => {
        const pending = (await one.client.approvals(holder)).pending;
        return pending.length === 1 ? pending[0]! : undefined;
      }, { limitMs: 30_000 });
      const old = (await one.client.health()).codex.children![0];
      await one.client.restartCodex();
      await eventually("the old child draining", async () => {
        const children = (await one.client.health()).codex.children!;
        return children.some((c) => c.id === old.id && c.state === "draining") ? true : undefined;
      });
      await resume(one.client, stopped, "moved on");
      const [, moved] = await terminals(one.client, stopped, 2);
      expect(moved).toMatchObject({ type: "result", text: "echo: moved on" });
      expect(placement(one).get(stopped)).not.toBe(old.pid);
      await one.client.answerApproval(holder, gate.requestId, "allow");
      const [end] = await terminals(one.client, holder, 1);
      expect(end).toMatchObject({ type: "result", text: "gate passed" });
      await eventually("the old child gone", async () => {
        const children = (await one.client.health()).codex.children!;
        return children.length === 1 && children[0].id !== old.id ? true : undefined;
      });
    },
    90_000,
  );
});

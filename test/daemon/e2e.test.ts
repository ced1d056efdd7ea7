/**
 * The daemon as a fleet runner sees it: a subprocess, the real codex, the scripted model, and
 * nothing but HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { isAlive } from "../../src/daemon/pid-ledger.ts";
import { resolveCodexBinary } from "../../src/provider/codex/binary.ts";
import {
  codexUnderTest,
  makeTempWorktree,
  REPO_ROOT,
  type TempWorktree,
} from "../support/codex-harness.ts";
import { makeStateDir, startDaemonProcess } from "../support/daemon-process.ts";
import { eventually } from "../support/eventually.ts";
import { untilTerminal } from "../support/session-events.ts";

let model: ScriptedModel;
let worktree: TempWorktree;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      { marker: "GREET", rounds: [[step.message("hello, runner", { deltas: 3 })]] },
      { marker: "STALL", rounds: [[step.stall()]] },
    ],
  });
  worktree = await makeTempWorktree();
});
afterAll(async () => {
  await worktree?.remove();
  await model?.close();
});

describe("codexd over HTTP", () => {
  test("spawn, stream to the result, follow up, replay from Last-Event-ID", async () => {
    await using daemon = await startDaemonProcess({ model });
    const health = await daemon.client.health();
    expect(health.codex.version).toBe((await codexUnderTest()).version);
    expect(isAlive(health.codex.pid!)).toBe(true);

    const spawned = await daemon.client.spawn({ prompt: "GREET me", cwd: worktree.path });
    const first = await untilTerminal(daemon.client, spawned.sessionId);
    expect(first.at(-1)).toMatchObject({ type: "result", text: "hello, runner" });
    expect(first.map((e) => e.seq)).toEqual(first.map((_, i) => i + 1)); // contiguous from 1

    const turn = await daemon.client.send(spawned.sessionId, "GREET again");
    expect(turn.queued).toBe(false);
    const lastSeq = first.at(-1)!.seq;
    const second = await untilTerminal(daemon.client, spawned.sessionId, lastSeq);
    expect(second[0]!.seq).toBe(lastSeq + 1);
    expect(second.at(-1)).toMatchObject({ type: "result", turnId: turn.turnId });

    // Replay from Last-Event-ID gives exactly the later events, as stored.
    const stored = await daemon.client.storedEvents(spawned.sessionId, { after: 3 });
    expect(stored.map((e) => e.seq)).toEqual(
      [...first, ...second].filter((e) => e.seq > 3).map((e) => e.seq),
    );
    const session = await daemon.client.get(spawned.sessionId);
    expect(session).toMatchObject({ status: "idle", cwd: worktree.path, policy: "default" });
    expect(await daemon.stop()).toBe(0);
  });

  test("a daemon restart keeps sessions and events, and resume continues the thread", async () => {
    const stateDir = makeStateDir();
    let sessionId: string;
    let before: StoredEvent[];
    {
      await using daemon = await startDaemonProcess({ model, stateDir });
      ({ sessionId } = await daemon.client.spawn({
        prompt: "GREET the-walrus-fact",
        cwd: worktree.path,
      }));
      await untilTerminal(daemon.client, sessionId);
      before = await daemon.client.storedEvents(sessionId, {});
      expect(await daemon.stop()).toBe(0);
    }
    await using again = await startDaemonProcess({ model, stateDir });
    const listed = await again.client.list();
    expect(listed.map((s) => s.sessionId)).toContain(sessionId);
    const replayed = await again.client.storedEvents(sessionId, {});
    expect(replayed.slice(0, before.length)).toEqual(before);
    const requests = model.requests.length;
    await again.client.resume(sessionId, { prompt: "GREET: what fact?", cwd: worktree.path });
    const after = await untilTerminal(again.client, sessionId, replayed.at(-1)!.seq);
    expect(after.at(-1)).toMatchObject({ type: "result" });
    const request = model.requests.slice(requests).find((r) =>
      r.facts?.latestUserText.includes("what fact")
    );
    expect(JSON.stringify(request?.body?.input)).toContain("the-walrus-fact");
  });

  test("SIGKILL of the daemon: the session is interrupted, no codex is left, resume works", async () => {
    const stateDir = makeStateDir();
    const daemon = await startDaemonProcess({ model, stateDir });
    const { sessionId } = await daemon.client.spawn({
      prompt: "STALL forever",
      cwd: worktree.path,
    });
    const health = await daemon.client.health();
    const codexPid = health.codex.pid!;
    daemon.child.kill("SIGKILL");
    await daemon.exited;
    await using again = await startDaemonProcess({ model, stateDir });
    // The orphaned codex (its stdin closed with the daemon) is gone.
    expect(isAlive(codexPid)).toBe(false);
    expect((await again.client.get(sessionId)).status).toBe("interrupted");
    await again.client.resume(sessionId, { prompt: "GREET after the crash", cwd: worktree.path });
    const events = await untilTerminal(again.client, sessionId);
    expect(events.filter((e) => e.type === "result").at(-1)).toMatchObject({
      text: "hello, runner",
    });
  });

  test("requests without the token get 401; health needs none", async () => {
    await using daemon = await startDaemonProcess({ model });
    expect((await fetch(`${daemon.url}/v1/sessions`)).status).toBe(401);
    const wrong = await fetch(`${daemon.url}/v1/sessions`, {
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.status).toBe(401);
    expect((await fetch(`${daemon.url}/v1/health`)).status).toBe(200);
  });

  test("a non-loopback host is refused without --allow-remote", () => {
    const result = spawnSync(process.execPath, [
      path.join(REPO_ROOT, "src/main.ts"),
      "serve",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
      "--state-dir",
      makeStateDir(),
    ], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("--allow-remote");
  });

  test("the compiled binary runs alone: no node_modules, embedded policies, no bunfig from cwd", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "codexd-binary-"));
    const binary = path.join(dir, "codexd");
    const build = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts/build.ts"), binary], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(build.status).toBe(0);
    // A worktree-like folder with a bunfig.toml that would run code if the binary read it.
    const cwd = path.join(dir, "cwd");
    mkdirSync(cwd);
    const marker = path.join(dir, "preload-ran");
    writeFileSync(
      path.join(cwd, "preload.ts"),
      `require("fs").writeFileSync(${JSON.stringify(marker)}, "x");\n`,
    );
    writeFileSync(path.join(cwd, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
    const codex = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
    await using daemon = await startDaemonProcess({
      model,
      command: [binary],
      cwd,
      env: { CODEX_BIN: codex },
      config: { policies: { dir: path.join(dir, "no-policies-here") } },
    });
    expect((await daemon.client.policies()).map((p) => p.name).sort()).toEqual([
      "default",
      "strict",
    ]);
    const { sessionId } = await daemon.client.spawn({ prompt: "GREET binary", cwd: worktree.path });
    const events = await untilTerminal(daemon.client, sessionId);
    expect(events.at(-1)).toMatchObject({ type: "result", text: "hello, runner" });
    expect(await daemon.stop()).toBe(0);
    expect(existsSync(marker)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  test("SIGHUP reloads the policies; a broken file keeps the previous version", async () => {
    const policies = mkdtempSync(path.join(tmpdir(), "codexd-hup-"));
    const fleet = path.join(policies, "fleet-a.yaml");
    const write = (deny: string) =>
      writeFileSync(
        fleet,
        `version: 1\nname: fleet-a\ndefault: allow\ncommands:\n  deny:\n${deny}`,
      );
    write("    - { id: no-publish, prefix: [npm, publish] }\n");
    await using daemon = await startDaemonProcess({
      model,
      config: { policies: { dir: policies } },
    });
    const judge = async () =>
      (await daemon.client.evaluatePolicy({ policy: "fleet-a", command: "make deploy" })).decision;
    const version = async () =>
      (await daemon.client.policies()).find((p) => p.name === "fleet-a")!.version;
    expect(await judge()).toBe("allow");
    const first = await version();

    write("    - { id: no-deploy, prefix: [make, deploy] }\n");
    daemon.child.kill("SIGHUP");
    await eventually("the reloaded version", async () => (await version()) !== first || undefined, {
      limitMs: 5_000,
      intervalMs: 10,
    });
    expect(await judge()).toBe("deny");
    const second = await version();

    writeFileSync(fleet, "version: 1\nname: fleet-a\ndefault: [not, a, decision]\n");
    daemon.child.kill("SIGHUP");
    await eventually(
      "the second reload",
      () => daemon.stderr().split("policies reloaded").length > 2 || undefined,
      { limitMs: 5_000, intervalMs: 10 },
    );
    expect(await version()).toBe(second);
    expect(await judge()).toBe("deny");
    expect(daemon.stderr()).toContain("fleet-a.yaml");
    rmSync(policies, { recursive: true, force: true });
  });

  test("SIGTERM mid-turn: the turn ends with daemon_shutdown, exit 0, and the session resumes", async () => {
    const stateDir = makeStateDir();
    const daemon = await startDaemonProcess({ model, stateDir });
    const { sessionId } = await daemon.client.spawn({ prompt: "STALL here", cwd: worktree.path });
    for await (const event of daemon.client.events(sessionId)) {
      if (event.type === "turn.started") break;
    }
    expect(await daemon.stop()).toBe(0); // SIGTERM
    await using again = await startDaemonProcess({ model, stateDir });
    expect((await again.client.get(sessionId)).status).toBe("interrupted");
    const stored = await again.client.storedEvents(sessionId, {});
    expect(stored.filter((e) => e.type === "result" || e.type === "error")).toEqual([
      expect.objectContaining({ type: "error", code: "daemon_shutdown" }),
    ]);
    await again.client.resume(sessionId, { prompt: "GREET again", cwd: worktree.path });
    const events = await untilTerminal(again.client, sessionId, stored.at(-1)!.seq);
    expect(events.at(-1)).toMatchObject({ type: "result", text: "hello, runner" });
  });
});

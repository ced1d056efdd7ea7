/**
 * The fleet policy governs the spec in the assembled daemon (startDaemon, the real codex, the
 * scripted model): refusals are 400s naming field and rule, the daemon's own state dir and codex
 * home are out of reach as a cwd, and codex runs in the resolved cwd.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { loadConfig } from "../../src/daemon/config.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { untilTerminal } from "../support/session-events.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
let scratch: string;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "LIST", rounds: [[step.exec("ls")], [step.message("listed")]] }],
  });
  worktree = await makeTempWorktree();
  scratch = mkdtempSync(path.join(tmpdir(), "codexd-spec-guard-daemon-"));
});
afterAll(async () => {
  await worktree?.remove();
  await model?.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface ApiFailure {
  status: number;
  body: { error: { code: string; details?: Array<{ path: string; rule?: string }> } };
}

async function post(d: { daemon: { url: string }; token: string }, body: unknown) {
  const res = await fetch(`${d.daemon.url}/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() } as ApiFailure;
}

describe("the assembled daemon judges the spec", () => {
  test("attacks are 400s naming field and rule; the BASH_ENV payload never runs", async () => {
    await using d = await startDaemonInProcess({ model });
    const marker = path.join(scratch, "bash-env-ran");
    const hook = path.join(scratch, "hook.sh");
    writeFileSync(hook, `touch '${marker}'\n`);
    const codexHome = loadConfig({ args: ["--state-dir", d.stateDir], cwd: REPO_ROOT, env: {} })
      .codex.home;
    const cases: Array<[Record<string, unknown>, string, string | RegExp]> = [
      [{ env: { BASH_ENV: hook } }, "env.BASH_ENV", "env.floor"],
      [
        { policy: "strict", mcpServers: { x: { command: "touch", args: [marker] } } },
        "mcpServers.x",
        "mcpServers.not-allowed",
      ],
      [{ sandbox: "danger-full-access" }, "sandbox", "sandbox.max"],
      [
        { policy: "strict", permissionConfig: { defaultDecision: "allow" } },
        "permissionConfig.defaultDecision",
        "permissionConfig.narrow-only",
      ],
      [{ cwd: "/" }, "cwd", "cwd.root"],
      [{ cwd: "/etc" }, "cwd", "cwd.system"],
      [{ cwd: d.stateDir }, "cwd", "cwd.state-dir"],
      // Inside the state dir by default, or under the user's cache (/root: a system folder) when
      // the state dir is in the temp folder: any of these rules names it.
      [{ cwd: codexHome }, "cwd", /^cwd\.(codex-home|state-dir|system)$/],
    ];
    for (const [extra, field, rule] of cases) {
      if (extra.cwd === codexHome && !existsSync(codexHome)) continue;
      const { status, body } = await post(d, { prompt: "LIST", cwd: worktree.path, ...extra });
      expect({ field, status }).toEqual({ field, status: 400 });
      expect(body.error.details).toContainEqual(
        expect.objectContaining({
          path: field,
          rule: typeof rule === "string" ? rule : expect.stringMatching(rule),
        }),
      );
    }
    // A session the policy accepts runs its command, and the refused BASH_ENV did nothing.
    const { sessionId } = await d.client.spawn({ prompt: "LIST", cwd: worktree.path });
    const events = await untilTerminal(d.client, sessionId);
    expect(events.at(-1)?.type).toBe("result");
    expect(existsSync(marker)).toBe(false);
    expect((await d.client.list()).length).toBe(1);
  });

  test("codex runs in the resolved cwd", async () => {
    await using d = await startDaemonInProcess({ model });
    const link = path.join(scratch, "wt-link");
    symlinkSync(worktree.path, link);
    const { sessionId } = await d.client.spawn({
      prompt: "LIST",
      cwd: link,
      env: { API_KEY: "k" },
    });
    const events: StoredEvent[] = await untilTerminal(d.client, sessionId);
    const started = events.find((e) => e.type === "session.started") as { cwd?: string };
    const real = realpathSync(worktree.path);
    expect(started.cwd).toBe(real);
    expect((await d.client.get(sessionId)).cwd).toBe(real);
  });
});

/**
 * A separate identity for agents (issue 10, finding 8), for real: the daemon runs as root (as
 * CI does), `codex.user` is `nobody`, and an approved command that reads the API token gets
 * "Permission denied"; the same command with the daemon's own identity prints the token (the
 * positive control, so the test cannot pass by accident). The payload is a harmless `cat`.
 *
 * Needs root (to spawn codex as another account) and the `nobody` account; both hold in CI
 * (.ci/run runs as root). Elsewhere the tests that need them say so and do nothing.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { CodexdClient } from "../../src/client.ts";
import { loadConfig } from "../../src/daemon/config.ts";
import { type Daemon, startDaemon } from "../../src/daemon/daemon.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import {
  type AgentUser,
  AgentUserError,
  prepareAgentCodexHome,
  resolveAgentUser,
} from "../../src/provider/codex/agent-user.ts";
import { resolveCodexBinary } from "../../src/provider/codex/binary.ts";
import { isUnderTempDir } from "../../src/provider/codex/codex-home.ts";
import { CodexProcess } from "../../src/provider/codex/process.ts";
import { inheritedUmask } from "../../src/file-modes.ts";
import { fakeAnalyzer } from "../approval/support/fake-analyzer.ts";
import { REPO_ROOT } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";
import { untilTerminal } from "../support/session-events.ts";

const isRoot = process.getuid?.() === 0;
let nobody: AgentUser | undefined;
try {
  nobody = resolveAgentUser("nobody");
} catch {
  nobody = undefined;
}
const canRun = isRoot && nobody !== undefined;

/**
 * Where this file's codex homes and worktrees go: reachable by `nobody` and outside the temp
 * folder (codex refuses its helper links there, see codex-home.ts). /var/tmp is both.
 */
const ROOT = existsSync("/var/tmp") && !isUnderTempDir("/var/tmp")
  ? "/var/tmp"
  : path.join(REPO_ROOT, ".codexd");
const cleanup: string[] = [];
const models: ScriptedModel[] = [];

function reachableDir(prefix: string): string {
  mkdirSync(ROOT, { recursive: true });
  const dir = mkdtempSync(path.join(ROOT, `codexd-agent-${prefix}`));
  chmodSync(dir, 0o755);
  cleanup.push(dir);
  return dir;
}

function runsAsNobody(binary: string): boolean {
  const result = spawnSync(binary, ["--version"], {
    uid: nobody!.uid,
    gid: nobody!.gid,
    cwd: "/",
    stdio: "ignore",
  });
  return result.status === 0;
}

/**
 * The pinned codex as `nobody` can run it. A checkout may sit in a folder `nobody` cannot enter
 * (a clone in a 0700 temp folder, or under /root): then its package folder is linked (or, across
 * file systems, copied) into a reachable one, so the real-codex test runs wherever the checkout is.
 */
const codexForNobody = canRun
  ? await (async () => {
    const binary = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
    if (runsAsNobody(binary)) return binary;
    const vendor = path.dirname(path.dirname(binary)); // <package>/vendor/<target>
    const copy = path.join(reachableDir("bin-"), "codex");
    const linked = spawnSync("cp", ["-al", vendor, copy]).status === 0 ||
      (rmSync(copy, { recursive: true, force: true }),
        spawnSync("cp", ["-a", vendor, copy]).status === 0);
    if (!linked) throw new Error(`Cannot copy ${vendor} to ${copy}`);
    const reachable = path.join(copy, path.relative(vendor, binary));
    if (!runsAsNobody(reachable)) throw new Error(`nobody cannot run ${reachable} either`);
    return reachable;
  })()
  : undefined;

/**
 * The repository's policies plus `unsandboxed` (default, with danger-full-access allowed): the
 * sandbox alone already denies every command the token and the state dir (read-denied.ts), so
 * the sessions here run without one, to show what codex.user does by itself.
 */
function unsandboxedPolicies(): string {
  const dir = reachableDir("policies-");
  cpSync(path.join(REPO_ROOT, "policies"), dir, { recursive: true });
  writeFileSync(
    path.join(dir, "unsandboxed.yaml"),
    "version: 1\nname: unsandboxed\nextends: [default]\nspec:\n  maxSandbox: danger-full-access\n",
  );
  return dir;
}

/**
 * The FORKS command: starts up to FORK_TRIES processes that sleep a little, stopping at the first
 * fork the kernel refuses, and says how many it started. Harmless with or without a limit.
 */
const FORK_TRIES = 400;
const FORKS = [
  "import os, time",
  "n = 0",
  `for i in range(${FORK_TRIES}):`,
  "  try:",
  "    pid = os.fork()",
  "  except OSError:",
  "    break",
  "  if pid == 0:",
  // The children let go of the command's output at once: codex waits for it to close.
  "    os.closerange(0, 3)",
  "    time.sleep(2)",
  "    os._exit(0)",
  "  n += 1",
  'print("started", n)',
].join("\n");

/** The spec of a READTOKEN session, outside the sandbox (see unsandboxedPolicies). */
const readToken = (cwd: string) => ({
  prompt: "READTOKEN",
  cwd,
  policy: "unsandboxed",
  sandbox: "danger-full-access" as const,
});

/** A worktree `user` may write in (the deployer's job in production). */
function worktreeFor(user: AgentUser | undefined): string {
  const dir = reachableDir("wt-");
  if (user) chownSync(dir, user.uid, user.gid);
  return dir;
}

/** `/proc/<pid>/status` fields (Uid, Gid, Groups, Umask). */
function procStatus(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/status`, "utf8").split("\n").filter((l) => l.includes(":")).map((
      l,
    ) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]),
  );
}

/**
 * A daemon (in this process, as root) whose scripted model answers READTOKEN with the command
 * `id -u; cat <its token file>; ls <its state dir>; true`, with `codex.user` when given.
 */
async function startAgentDaemon(
  user: string | undefined,
  codexConfig: Record<string, unknown> = {},
): Promise<{
  daemon: Daemon;
  client: CodexdClient;
  stateDir: string;
  tokenFile: string;
  token: string;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const stateDir = makeStateDir();
  const tokenFile = path.join(stateDir, "token");
  const model = await startScriptedModel({
    rules: [{
      marker: "READTOKEN",
      rounds: [
        // `; true`: a command failing with "Permission denied" looks to codex like a sandbox
        // denial, and codex then reports no completion for it; exiting 0 keeps its output.
        [step.exec(`id -u; cat ${tokenFile}; ls ${stateDir}; true`)],
        [step.message("read it")],
      ],
    }, {
      marker: "FORKS",
      rounds: [[step.exec(`python3 -c '${FORKS}'`)], [step.message("forked")]],
    }],
  });
  models.push(model);
  const args = ["--port", "0", "--state-dir", stateDir];
  if (user !== undefined) {
    const file = `${stateDir}.jsonc`;
    const home = path.join(reachableDir("home-"), "codex-home");
    writeFileSync(file, JSON.stringify({ codex: { user, home, ...codexConfig } }));
    args.push("--config", file);
  }
  const config = loadConfig({ args, cwd: REPO_ROOT, env: {} });
  config.codex.args = model.codexArgs({ requestMaxRetries: 0 });
  if (user !== undefined && codexForNobody) config.codex.bin = codexForNobody;
  config.policies.dir = unsandboxedPolicies();
  const daemon = await startDaemon(config, { analyzer: fakeAnalyzer });
  const token = (await readFile(tokenFile, "utf8")).trim();
  return {
    daemon,
    client: new CodexdClient({ baseUrl: daemon.url, token }),
    stateDir,
    tokenFile,
    token,
    [Symbol.asyncDispose]: () => daemon.stop(),
  };
}

afterAll(async () => {
  for (const model of models) await model.close();
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

describe("resolveAgentUser", () => {
  test("a name, a uid or uid:gid; root and unknown accounts are refused", () => {
    if (!nobody) return;
    expect(resolveAgentUser("nobody")).toEqual(nobody);
    expect(resolveAgentUser(String(nobody.uid)).name).toBe("nobody");
    expect(resolveAgentUser(`${nobody.uid}:${nobody.gid}`)).toMatchObject({
      uid: nobody.uid,
      gid: nobody.gid,
    });
    expect(() => resolveAgentUser("root")).toThrow(AgentUserError);
    expect(() => resolveAgentUser("0:0")).toThrow(/is root/);
    expect(() => resolveAgentUser("no-such-account-xyz")).toThrow(/no such account/);
  });
});

describe("prepareAgentCodexHome", () => {
  test.skipIf(!canRun)("creates the home (0700, the user's) and reachable parents (0755)", () => {
    const base = reachableDir("prep-");
    const home = path.join(base, "a", "b", "codex-home");
    prepareAgentCodexHome(home, nobody!);
    expect(ownerAndMode(home)).toEqual({ uid: nobody!.uid, gid: nobody!.gid, mode: 0o700 });
    expect(ownerAndMode(path.join(base, "a"))).toEqual({ uid: 0, gid: 0, mode: 0o755 });
    expect(ownerAndMode(path.join(base, "a", "b"))).toEqual({ uid: 0, gid: 0, mode: 0o755 });
  });

  test.skipIf(!canRun)(
    "hands over a home a root codex used; links are re-owned, never followed",
    () => {
      const base = reachableDir("prep-");
      const home = path.join(base, "codex-home");
      mkdirSync(path.join(home, "sessions"), { recursive: true, mode: 0o755 });
      writeFileSync(path.join(home, "sessions", "s.jsonl"), "{}\n");
      const outside = path.join(base, "outside.txt");
      writeFileSync(outside, "root's\n");
      symlinkSync(outside, path.join(home, "link"));
      prepareAgentCodexHome(home, nobody!);
      for (const file of ["", "sessions", "sessions/s.jsonl"]) {
        expect(statSync(path.join(home, file)).uid).toBe(nobody!.uid);
      }
      expect(lstatSync(path.join(home, "link")).uid).toBe(nobody!.uid);
      expect(statSync(outside).uid).toBe(0);
      expect(statSync(home).mode & 0o777).toBe(0o700);
    },
  );

  test.skipIf(!canRun)(
    "a home the user cannot reach, or a link, is refused with the reason",
    () => {
      const base = reachableDir("prep-");
      const closed = path.join(base, "closed");
      mkdirSync(closed, { mode: 0o700 });
      chmodSync(closed, 0o700);
      expect(() => prepareAgentCodexHome(path.join(closed, "codex-home"), nobody!)).toThrow(
        /cannot reach its codex home .*closed is not searchable/,
      );
      const link = path.join(base, "link-home");
      symlinkSync(closed, link);
      expect(() => prepareAgentCodexHome(link, nobody!)).toThrow(/is not a folder/);
    },
  );
});

describe("codex as a separate account", () => {
  test.skipIf(!canRun)(
    "process layer: the child runs as the account and cannot read a root-only file",
    async () => {
      // A stand-in codex that says who it is and tries to read the secret, on stderr, then
      // exits: CodexProcess quotes its stderr in the start failure.
      const base = reachableDir("proc-");
      const secretDir = mkdtempSync(path.join(ROOT, "codexd-agent-secret-"));
      cleanup.push(secretDir);
      const secret = path.join(secretDir, "token");
      writeFileSync(secret, "s3cret-token-value\n", { mode: 0o600 });
      const bin = path.join(base, "codex");
      writeFileSync(
        bin,
        `#!/bin/sh\necho "uid=$(id -u) groups=$(id -G)" >&2\ncat '${secret}' >&2\nexit 3\n`,
      );
      chmodSync(bin, 0o755);
      const start = (user?: AgentUser) =>
        CodexProcess.start({
          codexHome: path.join(base, user ? "agent-home" : "own-home"),
          binary: bin,
          handshakeTimeoutMs: 10_000,
          ...(user && { user }),
        }).then(() => "started", (e: Error) => e.message);

      const own = await start();
      expect(own).toContain("uid=0");
      expect(own).toContain("s3cret-token-value"); // positive control
      const agent = await start(nobody);
      expect(agent).toContain(`uid=${nobody!.uid} groups=${nobody!.gid}`);
      expect(agent).toContain(`${secret}: Permission denied`);
      expect(agent).not.toContain("s3cret-token-value");
      expect(ownerAndMode(path.join(base, "agent-home"))).toEqual({
        uid: nobody!.uid,
        gid: nobody!.gid,
        mode: 0o700,
      });
    },
  );

  test.skipIf(!canRun)(
    "codex runs as codex.user; an approved `cat <token file>` is denied, as the daemon's user it works",
    async () => {
      // Positive control: without codex.user the very same command reads the token.
      {
        await using d = await startAgentDaemon(undefined);
        const { sessionId } = await d.client.spawn(readToken(worktreeFor(undefined)));
        const result = (await untilTerminal(d.client, sessionId)).find((e) =>
          e.type === "tool.result"
        )!;
        const output = String(result.output);
        expect(output).not.toContain("Permission denied");
        expect(output).toMatch(/^0$/m); // id -u: root
        // The token itself, unless a redaction rule scrubs it from the event.
        expect(output.includes(d.token) || output.includes("[redacted]")).toBe(true);
        expect(output).toContain("codexd.db");
      }

      await using d = await startAgentDaemon("nobody");
      const health = await d.client.health();
      expect(health.status).toBe("ok");
      const codex = procStatus(health.codex.pid!);
      expect(codex.Uid).toBe(Array(4).fill(String(nobody!.uid)).join("\t"));
      expect(codex.Gid).toBe(Array(4).fill(String(nobody!.gid)).join("\t"));
      // None of root's supplementary groups (root's group 0 above all).
      expect(codex.Groups!.split(/\s+/).filter(Boolean).filter((g) => g !== String(nobody!.gid)))
        .toEqual([]);
      // codex gets the umask the daemon was started with, the daemon itself 077.
      expect(Number.parseInt(codex.Umask!, 8)).toBe(inheritedUmask()!);
      expect(procStatus(process.pid).Umask).toBe("0077");

      const { sessionId } = await d.client.spawn(readToken(worktreeFor(nobody)));
      const events = await untilTerminal(d.client, sessionId);
      const approval = events.find((e) => e.type === "approval")!;
      expect(approval).toMatchObject({ decision: "allow" }); // the policy let it run
      const result = events.find((e) => e.type === "tool.result")!;
      const output = String(result.output);
      expect(output).toMatch(new RegExp(`^${nobody!.uid}$`, "m"));
      expect(output).toContain(`cat: ${d.tokenFile}: Permission denied`);
      // "cannot access" when the state dir's parent is closed to the user too (a 0700 checkout).
      expect(output).toContain(`'${d.stateDir}': Permission denied`);
      expect(output).toMatch(/^ls: cannot (open directory|access) '/m);
      expect(output).not.toContain(d.token);
      expect(output).not.toContain("codexd.db");

      // The codex home is the user's and private; the state dir stays root's and private.
      const config = loadConfig({
        args: ["--state-dir", d.stateDir, "--config", `${d.stateDir}.jsonc`],
        cwd: REPO_ROOT,
        env: {},
      });
      expect(ownerAndMode(config.codex.home)).toEqual({
        uid: nobody!.uid,
        gid: nobody!.gid,
        mode: 0o700,
      });
      expect(ownerAndMode(d.stateDir)).toEqual({ uid: 0, gid: 0, mode: 0o700 });
      expect(ownerAndMode(d.tokenFile)).toEqual({ uid: 0, gid: 0, mode: 0o600 });
    },
  );

  test("a codex home inside the state dir is refused at load", () => {
    const stateDir = makeStateDir();
    const file = `${stateDir}.jsonc`;
    writeFileSync(file, JSON.stringify({ codex: { user: "nobody", home: "codex-home" } }));
    // Relative to the file: <dir>/codex-home, beside the state dir: fine.
    expect(
      loadConfig({ args: ["--config", file, "--state-dir", stateDir], cwd: "/", env: {} })
        .codex.home,
    ).toBe(path.join(path.dirname(stateDir), "codex-home"));
    writeFileSync(
      file,
      JSON.stringify({ codex: { user: "nobody", home: path.join(stateDir, "codex-home") } }),
    );
    expect(() =>
      loadConfig({ args: ["--config", file, "--state-dir", stateDir], cwd: "/", env: {} })
    )
      .toThrow(/overlap/);
  });
});

function ownerAndMode(file: string): { uid: number; gid: number; mode: number } {
  const stat = statSync(file);
  return { uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o7777 };
}

describe("codex.maxProcesses", () => {
  /** Processes of `uid` on the machine (the count RLIMIT_NPROC is checked against). */
  function processesOf(uid: number): number {
    let count = 0;
    for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
      try {
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        if (new RegExp(`^Uid:\\s+${uid}\\s`, "m").test(status)) count++;
      } catch {
        // gone meanwhile
      }
    }
    return count;
  }

  /**
   * A FORKS session under `maxProcesses`: codex's limit, and how many processes it started. The
   * count is the account's, machine-wide: an earlier run's sleepers must be gone first.
   */
  async function forks(maxProcesses: number | null) {
    const deadline = Date.now() + 15_000;
    while (processesOf(nobody!.uid) > 0 && Date.now() < deadline) await Bun.sleep(100);
    await using d = await startAgentDaemon("nobody", { maxProcesses });
    const limits = readFileSync(`/proc/${(await d.client.health()).codex.pid}/limits`, "utf8");
    const { sessionId } = await d.client.spawn({
      prompt: "FORKS",
      cwd: worktreeFor(nobody),
      policy: "unsandboxed",
      sandbox: "danger-full-access",
    });
    const events = await untilTerminal(d.client, sessionId);
    const output = String(events.find((e) => e.type === "tool.result")?.output);
    return {
      limits,
      started: Number(/started (\d+)/.exec(output)?.[1]),
      output,
      last: events.at(-1),
    };
  }

  test.skipIf(!canRun)(
    "caps the processes the account's commands start; the session and the daemon go on",
    async () => {
      const capped = await forks(256);
      expect(capped.limits).toMatch(/Max processes\s+256\s+256\s/);
      expect(capped.started, capped.output).toBeGreaterThan(0);
      expect(capped.started, capped.output).toBeLessThan(FORK_TRIES);
      expect(capped.last).toMatchObject({ type: "result", text: "forked" });
      // Positive control: with no limit the same command starts every process it tries.
      const free = await forks(null);
      expect(free.limits).not.toMatch(/Max processes\s+256\s/);
      expect(free.started, free.output).toBe(FORK_TRIES);
    },
  );
});

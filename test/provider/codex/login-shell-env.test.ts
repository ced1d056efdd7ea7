/**
 * Against the real codex: what the commands' home says about the shell does not reach them.
 * The environment allow-list (plan.ts `shell_environment_policy`) filters codex's environment, but
 * the shell codex runs a command in sources `~/.bashrc` (and a login shell `~/.bash_profile`)
 * after that filter, so a token an operator's `.bashrc` exports went to every agent command. codexd
 * denies the sandbox reading the home's shell start-up files, histories and registry tokens
 * (read-denied.ts). Positive control: the same home on a bare codex hands the `.bashrc` export to
 * the command. Payloads are marker strings written to files in the worktree.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { readDeniedPaths } from "../../../src/provider/codex/read-denied.ts";
import { Spec } from "../../../src/provider/spec.ts";
import { bareCodexTurn, makeCodexHome, makeTempWorktree } from "../../support/codex-harness.ts";
import { outsideSandboxDir } from "../../support/outside-dir.ts";
import { EventRecorder, startTestProvider } from "../../support/provider-fixture.ts";

/** What each start-up file exports: `LEAKED_<FILE>=from-<file>`. */
const START_FILES = [".bashrc", ".profile", ".bash_profile"];
const NPMRC_TOKEN = "npm_codexd-test-token-4242";
/** The home's own coding agents' logins: codex's default home and Claude Code's. */
const AGENT_LOGINS: Record<string, string> = {
  ".codex/auth.json": "sk-home-codex-login-4242",
  ".claude.json": "home-claude-account-4242",
};

/** The environment, a login+interactive shell's environment, and a plain read of two files. */
const RUN_COMMAND = [
  "env > plain-env.txt",
  "bash -lic env > login-env.txt 2>&1",
  `cat ~/.bashrc ~/.npmrc ${
    Object.keys(AGENT_LOGINS).map((f) => `~/${f}`).join(" ")
  } > cat.txt 2>&1`,
  "echo ran",
].join("; ");
const OUTPUTS = ["plain-env.txt", "login-env.txt", "cat.txt"];

let model: ScriptedModel;
const cleanup: Array<() => Promise<void>> = [];

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "RUNCMD", rounds: [[step.exec(RUN_COMMAND)], [step.message("ran")]] }],
  });
});

afterAll(async () => {
  for (const clean of cleanup.reverse()) await clean();
  await model?.close();
});

/** A codex home whose `user-home` (the commands' HOME) exports markers and holds a token. */
async function homeWithShellFiles(): Promise<{ codexHome: string; userHome: string }> {
  const codexHome = await makeCodexHome();
  cleanup.push(() => rm(codexHome, { recursive: true, force: true, maxRetries: 3 }));
  const userHome = path.join(codexHome, "user-home");
  await mkdir(userHome, { recursive: true });
  for (const file of START_FILES) {
    await writeFile(path.join(userHome, file), `export ${marker(file)}=from-${file}\n`);
  }
  await writeFile(
    path.join(userHome, ".npmrc"),
    `//registry.npmjs.org/:_authToken=${NPMRC_TOKEN}\n`,
  );
  for (const [file, secret] of Object.entries(AGENT_LOGINS)) {
    await mkdir(path.dirname(path.join(userHome, file)), { recursive: true });
    await writeFile(path.join(userHome, file), `{"token":"${secret}"}\n`);
  }
  return { codexHome, userHome };
}

function marker(file: string): string {
  return `LEAKED_${file.replace(/\W/g, "").toUpperCase()}`;
}

async function worktree(): Promise<string> {
  const tree = await makeTempWorktree();
  cleanup.push(() => tree.remove());
  return tree.path;
}

/** Everything the command wrote, joined. */
async function outputs(cwd: string): Promise<string> {
  const texts = await Promise.all(OUTPUTS.map((f) => readFile(path.join(cwd, f), "utf8")));
  return texts.join("\n");
}

/** Every shell snapshot codex holds under `codexHome`, joined. */
async function snapshots(codexHome: string): Promise<string> {
  const dir = path.join(codexHome, "shell_snapshots");
  const files = await readdir(dir).catch(() => [] as string[]);
  const texts = await Promise.all(files.map((f) => readFile(path.join(dir, f), "utf8")));
  return texts.join("\n");
}

/** RUNCMD on a bare codex with `codexHome` (its `user-home` the command's HOME). */
function runBare(codexHome: string, cwd: string): Promise<unknown> {
  return bareCodexTurn({
    model,
    modelArgs: { requestMaxRetries: 0 },
    codexHome,
    cwd,
    prompt: "RUNCMD",
  });
}

/**
 * RUNCMD through codexd's provider, the home's paths denied as create-pool.ts denies them (the
 * list made at each thread start); the command's output and the shell snapshots codex then holds.
 */
async function runThroughCodexd(codexHome: string, cwd: string) {
  const userHome = path.join(codexHome, "user-home");
  await using codex = await startTestProvider({
    model,
    codexHome,
    provider: {
      readDenied: () => readDeniedPaths({ home: userHome, codexHome, exists: existsSync }),
    },
  });
  const handle = await codex.provider.spawn(Spec.parse({ cwd, prompt: "RUNCMD" }));
  const events = new EventRecorder(handle);
  await events.waitFor((e) => e.type === "result", 30_000, "result");
  const toolOutput = events.events.find((e) => e.type === "tool.result")?.output;
  const snapshotText = await snapshots(codexHome);
  await handle.stop();
  return { toolOutput, snapshotText };
}

describe("the commands' home: shell start-up files and tokens (real codex)", () => {
  test("positive control: on a bare codex the .bashrc export and the .npmrc token reach the command", async () => {
    const { codexHome } = await homeWithShellFiles();
    const cwd = await worktree();
    await runBare(codexHome, cwd);
    const seen = await outputs(cwd);
    expect(seen).toContain(`${marker(".bashrc")}=from-.bashrc`);
    expect(seen).toContain(NPMRC_TOKEN);
    for (const secret of Object.values(AGENT_LOGINS)) expect(seen).toContain(secret);
  });

  test("through codexd's provider none of them does, and commands print no denial noise", async () => {
    const { codexHome, userHome } = await homeWithShellFiles();
    const cwd = await worktree();
    const { toolOutput, snapshotText } = await runThroughCodexd(codexHome, cwd);
    const seen = await outputs(cwd);
    for (const file of START_FILES) {
      expect(seen).not.toContain(marker(file));
      expect(snapshotText).not.toContain(marker(file));
    }
    expect(seen).not.toContain(NPMRC_TOKEN);
    expect(seen).toContain(`${path.join(userHome, ".npmrc")}: Permission denied`);
    for (const [file, secret] of Object.entries(AGENT_LOGINS)) {
      expect(seen).not.toContain(secret);
      expect(seen).toContain(`${path.join(userHome, file)}: Permission denied`);
    }
    // The command itself ran, in a shell that did not go looking for the denied .bashrc.
    expect(seen).toMatch(/^PATH=/m);
    expect(toolOutput).toBe("ran\n");
  });

  test(
    "the home's login profile never runs outside the sandbox: a hook running the worktree's .rvmrc",
    async () => {
      // An rvm-like profile: it runs the project file of the folder the shell starts in. codex's
      // shell snapshot ran it unsandboxed, in the worktree; each hook only appends to a file in a
      // folder no sandboxed command can write.
      const outside = outsideSandboxDir("login-profile-");
      cleanup.push(() => rm(outside, { recursive: true, force: true }));
      const ran = (name: string) => path.join(outside, name);
      const run = async (through: "bare" | "daemon") => {
        const { codexHome, userHome } = await homeWithShellFiles();
        for (const file of START_FILES) {
          await writeFile(
            path.join(userHome, file),
            `echo "${through} $PWD" >> ${ran("profile")}; [ -f .rvmrc ] && . ./.rvmrc\n`,
          );
        }
        const cwd = await worktree();
        await writeFile(path.join(cwd, ".rvmrc"), `echo "${through} $PWD" >> ${ran("rvmrc")}\n`);
        if (through === "bare") await runBare(codexHome, cwd);
        else await runThroughCodexd(codexHome, cwd);
      };
      // Positive control: a bare codex runs the profile, and through it the .rvmrc, outside.
      await run("bare");
      expect(await readFile(ran("rvmrc"), "utf8")).toMatch(/^bare \//m);
      await run("daemon");
      const profile = await readFile(ran("profile"), "utf8");
      const rvmrc = await readFile(ran("rvmrc"), "utf8");
      expect(profile).not.toMatch(/^daemon /m);
      expect(rvmrc).not.toMatch(/^daemon /m);
    },
    60_000,
  );
});

/**
 * Credentials and codexd's own files stay unreadable to sandboxed commands however the command
 * spells them (read-denied.ts), against the real codex through the assembled daemon. The commands
 * are spellings the default policy's regexes do not catch (`~/.aw?/…`), approved as any agent's
 * command would be; the sandbox is what refuses them. Each read has its positive control in the
 * same command: a look-alike folder (`~/.awx`) that is not denied is read.
 *
 * The home is a fake one (codex.env HOME) holding marker files, never a real credential.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../../support/codex-harness.ts";
import { makeStateDir } from "../../support/daemon-process.ts";
import { type InProcessDaemon, startDaemonInProcess } from "../../support/daemon-in-process.ts";
import { spawnUntilTerminal } from "../../support/session-events.ts";

const AWS_MARKER = "aws-marker-5f3a";
const CONTROL_MARKER = "control-marker-9c1e";
const SSH_MARKER = "ssh-marker-77b2";
const ROLLOUT_MARKER = "rollout-marker-3d1f";
const DOTFILE_MARKER = "dotfile-marker-8e4c";

let model: ScriptedModel;
let daemon: InProcessDaemon;
let worktree: TempWorktree;
mkdirSync(path.join(REPO_ROOT, ".codexd"), { recursive: true });
const home = mkdtempSync(path.join(REPO_ROOT, ".codexd", "read-denied-home-"));
const stateDir = makeStateDir();
// Outside the state dir (as with codex.user), so the state dir's own deny does not cover it.
const codexHome = mkdtempSync(path.join(REPO_ROOT, ".codexd", "read-denied-codex-home-"));
/** The daemon's config file, with a secret in `codex.env` as a deployer may keep one there. */
const CONFIG_SECRET = "sk-config-file-secret-6a2b";
const configFile = path.join(home, "..", `${path.basename(home)}.jsonc`);

function writeMarker(relative: string, text: string): void {
  const file = path.join(home, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text + "\n");
}

/** A rule per marker: the model runs `command` once, then answers. */
function execRule(marker: string, command: string) {
  return { marker, rounds: [[step.exec(command)], [step.message(`${marker} done`)]] };
}

beforeAll(async () => {
  writeMarker(".aws/credentials", AWS_MARKER);
  writeMarker(".awx/credentials", CONTROL_MARKER);
  writeMarker(".ssh/id_ed25519", SSH_MARKER);
  // A dotfiles manager's layout: ~/.netrc is a link into a folder of the home.
  writeMarker("dotfiles/netrc", DOTFILE_MARKER);
  symlinkSync(path.join(home, "dotfiles", "netrc"), path.join(home, ".netrc"));
  model = await startScriptedModel({
    rules: [
      // `; true`: codex reports no completion for a command failing like a sandbox denial.
      execRule("GLOB_END", "cat ~/.aw?/credentials; true"),
      execRule("FIND_END", "find ~ -type f -exec cat {} +; true"),
      execRule("TOKEN_END", `cat ${path.join(stateDir, "token")}; ls ${stateDir}; true`),
      execRule("CONFIG_END", `cat ${configFile}; true`),
      execRule("NETRC_END", "cat ~/.netrc; echo still-ran; true"),
    ],
  });
  worktree = await makeTempWorktree();
  writeFileSync(configFile, JSON.stringify({ codex: { env: { OPENAI_API_KEY: CONFIG_SECRET } } }));
  daemon = await startDaemonInProcess({
    model,
    stateDir,
    configure: (config) => {
      config.codex.env = { ...config.codex.env, HOME: home };
      config.codex.home = codexHome;
      config.configFile = configFile;
    },
  });
});

afterAll(async () => {
  await daemon?.daemon.stop();
  await worktree?.remove();
  await model?.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(codexHome, { recursive: true, force: true });
  rmSync(configFile, { force: true });
});

/** The output of the one command a session's prompt makes the model run, and its approval. */
async function runCommand(marker: string) {
  const events = await spawnUntilTerminal(daemon.client, marker, worktree.path);
  const approval = events.find((e) => e.type === "approval");
  const result = events.find((e) => e.type === "tool.result");
  return { approval, output: String(result?.output ?? "") };
}

describe("the sandbox denies reads of credentials and codexd's files", () => {
  test("a glob naming ~/.aws is approved, and the sandbox still refuses the read", async () => {
    const { approval, output } = await runCommand("GLOB_END");
    expect(approval).toMatchObject({ decision: "allow" }); // the policy did not see it
    expect(output).toContain(CONTROL_MARKER); // the command ran, the glob expanded
    expect(output).not.toContain(AWS_MARKER);
  });

  test("find -exec cat over the whole home reads all but the denied folders", async () => {
    const { approval, output } = await runCommand("FIND_END");
    expect(approval).toMatchObject({ decision: "allow" });
    expect(output).toContain(CONTROL_MARKER);
    expect(output).not.toContain(AWS_MARKER);
    expect(output).not.toContain(SSH_MARKER);
  });

  test("the threads' rollouts in codex's home: neither read nor written by a command", async () => {
    // An earlier session's transcript, and the record a resumed thread's approvals are judged on.
    await spawnUntilTerminal(daemon.client, `hello ${ROLLOUT_MARKER}`, worktree.path);
    const rollout = readdirSync(codexHome, { recursive: true, encoding: "utf8" })
      .filter((f) => /rollout-.*\.jsonl$/.test(f)).map((f) => path.join(codexHome, f))
      .find((f) => readFileSync(f, "utf8").includes(ROLLOUT_MARKER))!;
    expect(rollout).toBeDefined();
    model.addRule(execRule(
      "ROLLOUT_END",
      `cat ${rollout}; echo forged >> ${rollout}; echo ran-${CONTROL_MARKER}; true`,
    ));
    const { approval, output } = await runCommand("ROLLOUT_END");
    expect(approval).toMatchObject({ decision: "allow" });
    expect(output).toContain(`ran-${CONTROL_MARKER}`);
    expect(output).not.toContain(ROLLOUT_MARKER);
    expect(output).toContain("Permission denied");
    expect(readFileSync(rollout, "utf8")).not.toContain("forged");
  });

  test("the daemon's token and state dir are unreadable to the daemon's own user's commands", async () => {
    const { output } = await runCommand("TOKEN_END");
    expect(output).not.toContain(daemon.token);
    expect(output).not.toContain("codexd.db");
    expect(output).toContain("Permission denied");
  });

  test("a denied file that is a symlink: its target is denied, and commands still run", async () => {
    const { output } = await runCommand("NETRC_END");
    expect(output).not.toContain(DOTFILE_MARKER);
    expect(output).toContain("Permission denied");
    expect(output).toContain("still-ran");
  });

  test("so is the daemon's config file (its codex.env may hold a key)", async () => {
    expect(readFileSync(configFile, "utf8")).toContain(CONFIG_SECRET); // it is there to read
    const { output } = await runCommand("CONFIG_END");
    expect(output).not.toContain(CONFIG_SECRET);
    expect(output).toContain(`${configFile}: Permission denied`);
  });
});

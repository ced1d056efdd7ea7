/**
 * `codexd demo`: the whole product in one command, with no API key and nothing leaving the
 * machine. It starts the scripted model and the daemon (on a free port, with a temporary state
 * dir), creates a temporary git worktree, and runs one session in which the "model" edits a file,
 * runs a command, tries a command the built-in safety rules deny, and sums up. The session's
 * event stream is printed as it arrives, read through the HTTP API like a fleet runner would.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CodexdClient } from "../client.ts";
import { formatEvent } from "../cli/format-event.ts";
import { loadConfig } from "../daemon/config.ts";
import { startDaemon } from "../daemon/daemon.ts";
import { applyPatchCommand, startScriptedModel, step } from "./scripted-model.ts";
import type { CommandIo } from "../cli/io.ts";

const SCRIPT = {
  rules: [{
    marker: "DEMO",
    rounds: [
      [
        step.message("I'll add a NOTES.md file first.", { deltas: 4 }),
        step.exec(
          applyPatchCommand([{
            op: "add",
            path: "NOTES.md",
            content: "# Notes\n\nWritten by the codexd demo session.\n",
          }]),
        ),
      ],
      [step.exec("git status --short && wc -l NOTES.md")],
      [step.exec("git push --force origin main")],
      [
        step.message(
          "Done: NOTES.md is added and checked. The force-push was declined by the safety " +
            "rules, as it should be.",
          { deltas: 6 },
        ),
        step.usage(1800, 64),
      ],
    ],
  }],
};

export async function demoCommand(args: string[], io: CommandIo): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    io.out("Usage: codexd demo\n\nRuns one session against a scripted model and prints it.");
    return 0;
  }
  // codex refuses its helper links under /tmp, so its home (in the state dir) lives here.
  mkdirSync(".codexd", { recursive: true });
  const stateDir = mkdtempSync(join(process.cwd(), ".codexd", "demo-"));
  const worktree = mkdtempSync(join(tmpdir(), "codexd-demo-worktree-"));
  const codexHome =
    loadConfig({ args: ["--state-dir", stateDir], cwd: process.cwd(), env: process.env })
      .codex.home;
  await using model = await startScriptedModel(SCRIPT);
  try {
    git(worktree, "init", "-q", "-b", "main");
    writeFileSync(join(worktree, "README.md"), "# demo project\n");
    git(worktree, "add", "README.md");
    git(
      worktree,
      "-c",
      "user.name=demo",
      "-c",
      "user.email=demo@localhost",
      "commit",
      "-qm",
      "init",
    );

    const config = loadConfig({
      args: ["--port", "0", "--state-dir", stateDir],
      cwd: process.cwd(),
      env: process.env,
    });
    config.codex.args = model.codexArgs({ requestMaxRetries: 0 });
    const daemon = await startDaemon(config);
    try {
      io.out(`codexd demo: daemon at ${daemon.url}, worktree ${worktree}\n`);
      const client = new CodexdClient({
        baseUrl: daemon.url,
        token: readFileSync(join(stateDir, "token"), "utf8").trim(),
      });
      const { sessionId } = await client.spawn({
        prompt: "DEMO: add a notes file, check it, and publish the branch",
        cwd: worktree,
      });
      let outcome = 1;
      for await (const event of client.events(sessionId)) {
        if (event.type === "text.delta") continue; // the message event follows with the whole text
        io.out(formatEvent(event));
        if (event.type === "result") outcome = 0;
        if (event.type === "result" || event.type === "error") break;
      }
      const notes = readFileSync(join(worktree, "NOTES.md"), "utf8");
      io.out(`\nNOTES.md in the worktree:\n${notes}`);
      await client.stop(sessionId);
      return outcome;
    } finally {
      await daemon.stop();
    }
  } finally {
    rmSync(worktree, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
    // Outside the state dir when that is in the temp folder (see config.ts).
    rmSync(codexHome, { recursive: true, force: true });
  }
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "ignore" });
}

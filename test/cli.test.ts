/** The `codexd` command line as a user runs it: a subprocess, its output and its exit code. */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./support/codex-harness.ts";

function codexd(...args: string[]) {
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, "src/main.ts"), ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    env: { ...process.env, CODEX_BIN: "" },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("codexd CLI", () => {
  test("--help lists every command and exits 0; no command exits 2; an unknown one 2", () => {
    const help = codexd("--help");
    expect(help.code).toBe(0);
    for (const name of ["serve", "policy", "sessions", "demo", "version"]) {
      expect(help.stdout).toContain(`  ${name}`);
    }
    expect(codexd().code).toBe(2);
    const unknown = codexd("launch");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'launch'");
  });

  test("every subcommand has --help", () => {
    for (const name of ["serve", "policy", "sessions", "demo", "version"]) {
      const result = codexd(name, "--help");
      expect({ name, code: result.code }).toEqual({ name, code: 0 });
      expect(result.stdout).toMatch(/^Usage:\s+codexd /);
    }
  });

  test("version names codexd and the pinned codex", () => {
    const result = codexd("version");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^codexd \d+\.\d+\.\d+ \(bun /);
    expect(result.stdout).toContain("codex-cli 0.169.0");
  });

  test("serve refuses a non-loopback host and a bad config before starting anything", () => {
    const remote = codexd("serve", "--host", "0.0.0.0", "--port", "0");
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain("Refusing to listen on 0.0.0.0");
    const dir = mkdtempSync(path.join(tmpdir(), "codexd-cli-"));
    const file = path.join(dir, "codexd.jsonc");
    writeFileSync(file, '{\n  // port as a string\n  "server": { "port": "80" }\n}\n');
    const bad = codexd("serve", "--config", file);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${file}:3:23: server.port:`);
  });
});

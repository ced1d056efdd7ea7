import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { ProviderUnavailable } from "../../../src/errors.ts";
import { resolveCodexBinary } from "../../../src/provider/codex/binary.ts";
import { CodexRouter } from "../../../src/provider/codex/router.ts";
import { CodexProcess, parseVersion } from "../../../src/provider/codex/process.ts";
import { StderrRing, stripAnsi } from "../../../src/provider/codex/stderr-ring.ts";
import { codexUnderTest, LineClient, startCodex } from "../../support/codex-harness.ts";

const REPO = path.resolve(import.meta.dir, "..", "..", "..");
const NATIVE_CODEX = path.join(
  REPO,
  "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
);

let scratch: string; // fake binaries and their homes (may be under /tmp)
let realHomes: string; // CODEX_HOMEs for the real codex (must not be under /tmp)

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "codexd-process-"));
  realHomes = path.join(homedir(), ".cache", "codexd-test", `process-${crypto.randomUUID()}`);
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
  await rm(realHomes, { recursive: true, force: true });
});

/** Writes an executable sh script; returns its path. */
async function script(name: string, body: string): Promise<string> {
  const file = path.join(scratch, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

/** Answers initialize like codex would (any id form), then runs `after`. */
function fakeCodex(after: string): string {
  return `IFS= read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\\([^,}]*\\).*/\\1/p')
printf '{"id":%s,"result":{"userAgent":"codexd/0.169.0 (fake)","codexHome":"%s","platformFamily":"unix","platformOs":"linux"}}\\n' "$id" "$CODEX_HOME"
${after}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // An exited child of someone else's (e.g. reparented to init) is a zombie until reaped.
  try {
    const status = readFileSync(`/proc/${pid}/stat`, "utf8");
    return status.slice(status.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Live (non-zombie) processes whose command line contains `argument`. */
function runningWithArgument(argument: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(argument)) {
        if (alive(Number(entry))) pids.push(Number(entry));
      }
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

async function eventually(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(20);
  }
}

async function readPid(file: string): Promise<number> {
  let text = "";
  await eventually(() => {
    try {
      text = readFileSync(file, "utf8").trim();
    } catch {
      text = "";
    }
    return text !== "";
  });
  return Number(text);
}

function homeFor(name: string): string {
  return path.join(scratch, "homes", `${name}-${crypto.randomUUID()}`);
}

async function startFailure(
  promise: Promise<CodexProcess>,
): Promise<ProviderUnavailable> {
  try {
    const codex = await promise;
    await codex.stop();
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderUnavailable);
    return error as ProviderUnavailable;
  }
  throw new Error("start succeeded but should have failed");
}

describe("CodexProcess against the real codex (the pinned one or $CODEX_BIN)", () => {
  test("start: live pid in its own group, version, validated handshake, private CODEX_HOME", async () => {
    const codexHome = path.join(realHomes, "start");
    const stderr: string[] = [];
    await using codex = await CodexProcess.start({
      codexHome,
      searchFrom: [REPO],
      onStderr: (line) => stderr.push(line),
    });
    expect(alive(codex.pid)).toBe(true);
    process.kill(-codex.pid, 0); // the group exists: codex leads it
    const under = await codexUnderTest();
    expect(codex.version).toBe(under.version);
    expect(codex.initializeResult.codexHome).toBe(codexHome);
    expect(codex.initializeResult.userAgent).toStartWith(`codexd/${under.version}`);
    expect(codex.binary.source).toBe(process.env.CODEX_BIN ? "env" : "node_modules");
    expect(codex.binary.path).toBe(process.env.CODEX_BIN ? under.path : NATIVE_CODEX);
    expect((await stat(codexHome)).mode & 0o777).toBe(0o700);
    expect(stderr.every((line) => !line.includes("\u001b["))).toBe(true);
    // The default connection is live after the handshake (codex took `initialized`).
    expect(codex.rpc).toBeInstanceOf(CodexRouter);
    const config = await codex.rpc.request("config/read", {}, { timeoutMs: 5_000 });
    expect(config).toHaveProperty("config");
  });

  test("plugins stay off, whatever the configured arguments say: no marketplace sync", async () => {
    const stderr: string[] = [];
    await using codex = await CodexProcess.start({
      codexHome: path.join(realHomes, "plugins"),
      searchFrom: [REPO],
      extraArgs: ["-c", "features.plugins=true"],
      onStderr: (line) => stderr.push(line),
    });
    const read = await codex.rpc.request("config/read", {}, { timeoutMs: 5_000 });
    expect(read).toMatchObject({ config: { features: { plugins: false } } });
    // Positive control: the same codex started after it, without codexd's overrides, tries to
    // sync OpenAI's curated marketplace from the network (and says so on stderr).
    await using bare = await startCodex({
      model: { url: "http://127.0.0.1:9/v1", codexArgs: () => [] },
    });
    const client = new LineClient(bare);
    await client.initialize();
    await eventually(() => /curated plugin/.test(bare.stderrText()), 15_000);
    expect(stderr.filter((line) => /plugin/i.test(line))).toEqual([]);
  });

  test("stop closes stdin, codex exits by itself, stop is idempotent and reaps", async () => {
    const codex = await CodexProcess.start({
      codexHome: path.join(realHomes, "stop"),
      searchFrom: [REPO],
      // Verified: app-server exits on stdin EOF; no signal should be needed.
      stdinGraceMs: 3_000,
      killGraceMs: 100,
    });
    const pid = codex.pid;
    const first = codex.stop();
    const second = codex.stop();
    expect(second).toBe(first);
    expect(await first).toEqual({ code: 0, signal: null });
    expect(await codex.exited).toEqual({ code: 0, signal: null });
    expect(alive(pid)).toBe(false);
    expect(await codex.stop()).toEqual({ code: 0, signal: null });
  });

  test("kill -9 of codex fires onExit promptly and resolves exited", async () => {
    const codex = await CodexProcess.start({
      codexHome: path.join(realHomes, "crash"),
      searchFrom: [REPO],
    });
    const reasons: string[] = [];
    const exitSeen = new Promise<void>((resolve) =>
      codex.onExit((reason) => {
        reasons.push(reason);
        resolve();
      })
    );
    process.kill(codex.pid, "SIGKILL");
    await exitSeen;
    expect(await codex.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(reasons).toEqual([`codex app-server (pid ${codex.pid}) exited on signal SIGKILL`]);
    // A listener registered after the crash still hears about it.
    const late = await new Promise<string>((resolve) => codex.onExit((reason) => resolve(reason)));
    expect(late).toBe(reasons[0]);
    await codex.stop(); // still fine after a crash
    expect(reasons.length).toBe(1);
  });

  test("codex exits when the daemon is SIGKILLed (its stdin closes)", async () => {
    const home = path.join(realHomes, "orphan");
    const daemon = Bun.spawn([
      process.execPath,
      "-e",
      `import { CodexProcess } from ${
        JSON.stringify(path.join(REPO, "src/provider/codex/process.ts"))
      };
       const codex = await CodexProcess.start({
         codexHome: ${JSON.stringify(home)},
         searchFrom: [${JSON.stringify(REPO)}],
       });
       console.log(codex.pid);
       setInterval(() => {}, 1000);`,
    ], { stdout: "pipe", stderr: "inherit" });
    const reader = daemon.stdout.getReader();
    const { value } = await reader.read();
    const codexPid = Number(new TextDecoder().decode(value).trim());
    expect(alive(codexPid)).toBe(true);
    daemon.kill("SIGKILL");
    await daemon.exited;
    await eventually(() => !alive(codexPid), 5_000);
  });
});

describe("CodexProcess process group and failures (fake codex scripts)", () => {
  test("a grandchild left behind when codex exits on stdin close does not outlive stop", async () => {
    const codexHome = homeFor("straggler");
    const binary = await script(
      "leaves-child",
      fakeCodex(`sleep 300 &
echo $! > "$CODEX_HOME/grandchild.pid"
while IFS= read -r line; do :; done
exit 0`),
    );
    const codex = await CodexProcess.start({ codexHome, binary, killGraceMs: 2_000 });
    const grandchild = await readPid(path.join(codexHome, "grandchild.pid"));
    expect(alive(grandchild)).toBe(true);
    expect(await codex.stop()).toEqual({ code: 0, signal: null });
    expect(alive(grandchild)).toBe(false);
  });

  test("a codex ignoring stdin close and SIGTERM is SIGKILLed with its whole group", async () => {
    const codexHome = homeFor("stubborn");
    const binary = await script(
      "stubborn",
      fakeCodex(`trap '' TERM
sleep 300 &
echo $! > "$CODEX_HOME/grandchild.pid"
while IFS= read -r line; do :; done
while :; do sleep 1; done`),
    );
    const notes: string[] = [];
    const codex = await CodexProcess.start({
      codexHome,
      binary,
      stdinGraceMs: 50,
      killGraceMs: 100,
      log: (level, message) => notes.push(`${level}: ${message}`),
    });
    const grandchild = await readPid(path.join(codexHome, "grandchild.pid"));
    expect(await codex.stop()).toEqual({ code: null, signal: "SIGKILL" });
    expect(alive(codex.pid)).toBe(false);
    await eventually(() => !alive(grandchild), 1_000);
    expect(notes).toContain(
      `warn: codex pid ${codex.pid} still running 50 ms after stdin closed: SIGTERM`,
    );
    expect(notes).toContain(`warn: codex pid ${codex.pid} ignored SIGTERM for 100 ms: SIGKILL`);
  });

  test("stderr is redacted in the log, the tail and onStderr, and its log is bounded", async () => {
    const codexHome = homeFor("chatty");
    const binary = await script(
      "chatty",
      fakeCodex(
        `printf '\\033[2m2026-11-23T16:15:46.801632Z\\033[0m \\033[31mERROR\\033[0m codex_core: key sk-live-0123456789 rejected\\n' >&2
i=0; while [ $i -lt 30 ]; do echo "INFO line $i" >&2; i=$((i+1)); done
while IFS= read -r line; do :; done`,
      ),
    );
    const logged: Array<{ level: string; message: string; data?: unknown }> = [];
    const raw: string[] = [];
    const codex = await CodexProcess.start({
      codexHome,
      binary,
      stderrLogLines: 10,
      redact: (line) => line.replaceAll("sk-live-0123456789", "[redacted]"),
      log: (level, message, data) => logged.push({ level, message, data }),
      onStderr: (line) => raw.push(line),
    });
    await eventually(() => raw.length === 31, 2_000);
    await codex.stop();
    const stderr = logged.filter((l) => l.message === "codex stderr");
    expect(stderr).toHaveLength(10);
    const first = "2026-11-23T16:15:46.801632Z ERROR codex_core: key [redacted] rejected";
    expect(stderr[0]).toEqual({
      level: "warn",
      message: "codex stderr",
      data: { pid: codex.pid, line: first },
    });
    expect(stderr[1]).toMatchObject({ level: "info", data: { line: "INFO line 0" } });
    expect(logged).toContainEqual({
      level: "warn",
      message: "codex stderr: 21 lines not logged (over 10 per 60 s)",
      data: { pid: codex.pid, suppressed: 21 },
    });
    expect(raw[0]).toBe(first);
    expect(codex.stderrTail(31)[0]).toBe(first);
    expect(JSON.stringify([logged, raw, codex.stderrTail()])).not.toContain("sk-live");
  });

  test("a missing binary is ProviderUnavailable naming the path", async () => {
    const missing = path.join(scratch, "no-such-codex");
    const error = await startFailure(
      CodexProcess.start({ codexHome: homeFor("missing"), binary: missing }),
    );
    expect(error.message).toBe(
      `Cannot start codex: ${missing} (from the binary option) does not exist`,
    );
  });

  test("$CODEX_BIN is used when no option is given, and a bad one is named", async () => {
    const missing = path.join(scratch, "env-codex");
    const error = await startFailure(
      CodexProcess.start({ codexHome: homeFor("env"), inheritedEnv: { CODEX_BIN: missing } }),
    );
    expect(error.message).toContain(`${missing} (from $CODEX_BIN) does not exist`);
  });

  test("a binary that exits at once: ProviderUnavailable carries its stderr and exit code", async () => {
    const binary = await script(
      "exits-3",
      `printf '\\033[31mERROR\\033[0m config.toml: unknown key\\n' >&2
echo "fatal: cannot continue" >&2
exit 3`,
    );
    const error = await startFailure(CodexProcess.start({ codexHome: homeFor("exits"), binary }));
    expect(error.message).toContain(`Cannot start codex: ${binary} (from the binary option)`);
    expect(error.message).toContain("exited with code 3 before answering initialize");
    expect(error.message).toContain("ERROR config.toml: unknown key\nfatal: cannot continue");
  });

  test("a binary that never answers: handshake times out, the child is reaped", async () => {
    const codexHome = homeFor("silent");
    const binary = await script(
      "silent",
      `echo $$ > "$CODEX_HOME/pid"
echo "waiting forever" >&2
exec sleep 300`,
    );
    const error = await startFailure(
      CodexProcess.start({ codexHome, binary, handshakeTimeoutMs: 200, stdinGraceMs: 50 }),
    );
    expect(error.message).toContain("failed the initialize handshake");
    expect(error.message).toContain("timed out after 200 ms");
    expect(error.message).toContain("waiting forever");
    const pid = Number((await readFile(path.join(codexHome, "pid"), "utf8")).trim());
    expect(alive(pid)).toBe(false);
  });

  test("aborting start stops the child and rejects", async () => {
    const codexHome = homeFor("abort");
    const binary = await script("abortable", `echo $$ > "$CODEX_HOME/pid"\nexec sleep 300`);
    const controller = new AbortController();
    const started = CodexProcess.start({
      codexHome,
      binary,
      signal: controller.signal,
      stdinGraceMs: 50,
    });
    const pid = await readPid(path.join(codexHome, "pid"));
    controller.abort();
    const error = await startFailure(started);
    expect(error.message).toContain("start was aborted");
    expect(alive(pid)).toBe(false);
  });

  test("an already aborted signal starts nothing", async () => {
    const codexHome = homeFor("pre-aborted");
    const binary = await script("never-run", `touch "$CODEX_HOME/ran"`);
    const error = await startFailure(
      CodexProcess.start({ codexHome, binary, signal: AbortSignal.abort() }),
    );
    expect(error.message).toBe("Cannot start codex: start was aborted");
    expect(await stat(path.join(codexHome, "ran")).catch(() => "absent")).toBe("absent");
  });

  test("a connect that throws kills the child and is ProviderUnavailable", async () => {
    const codexHome = homeFor("bad-connect");
    const binary = await script("waits", "sleep 300");
    const error = await CodexProcess.start({
      codexHome,
      binary,
      connect: () => {
        throw new Error("no protocol today");
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderUnavailable);
    expect((error as Error).message).toBe(
      `Cannot start codex: cannot connect to ${binary}: no protocol today`,
    );
    // The script may not have run a line yet: look for it by its command line.
    await eventually(() => runningWithArgument(binary).length === 0, 2_000);
  });

  test("an initialize answer of the wrong shape is ProviderUnavailable", async () => {
    const binary = await script(
      "wrong-shape",
      `IFS= read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\\([^,}]*\\).*/\\1/p')
printf '{"id":%s,"result":{"userAgent":42}}\\n' "$id"
while IFS= read -r line; do :; done`,
    );
    const error = await startFailure(CodexProcess.start({ codexHome: homeFor("shape"), binary }));
    expect(error.message).toContain(
      "codex answered initialize with an unexpected result: userAgent:",
    );
  });

  test("the child gets the allow-listed environment only", async () => {
    const codexHome = homeFor("env-dump");
    const binary = await script("env-dump", `env > "$CODEX_HOME/env.txt"\nexit 0`);
    await startFailure(CodexProcess.start({
      codexHome,
      binary,
      inheritedEnv: {
        PATH: process.env.PATH,
        HOME: "/home/someone",
        ANTHROPIC_API_KEY: "sk-ant-secret",
        FLEET_TOKEN: "runner-secret",
        OPENAI_API_KEY: "sk-openai",
        CODEX_HOME: "/home/someone/.codex",
      },
      extraEnv: { MCP_TOKEN: "configured" },
    }));
    const env = Object.fromEntries(
      (await readFile(path.join(codexHome, "env.txt"), "utf8")).trim().split("\n").map((line) => {
        const at = line.indexOf("=");
        return [line.slice(0, at), line.slice(at + 1)];
      }),
    );
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(env.FLEET_TOKEN).toBeUndefined();
    expect(env.OPENAI_API_KEY).toBe("sk-openai");
    expect(env.MCP_TOKEN).toBe("configured");
    expect(env.CODEX_HOME).toBe(codexHome);
    expect(env.RUST_LOG).toBe("warn");
    expect(env.HOME).toBe("/home/someone");
  });
});

describe("binary resolution", () => {
  test("a PATH entry that is npm's node wrapper (codex.js) resolves to the native binary", async () => {
    const bin = path.join(scratch, "bin-with-wrapper");
    await mkdir(bin, { recursive: true });
    await symlink(
      path.join(REPO, "node_modules/@openai/codex/bin/codex.js"),
      path.join(bin, "codex"),
    );
    const resolved = await resolveCodexBinary({ env: { PATH: bin }, searchFrom: [scratch] });
    expect(resolved.source).toBe("path");
    expect(resolved.path).toBe(NATIVE_CODEX);
    expect(resolved.rejected.every((r) => r.source === "node_modules")).toBe(true);
  });
  test("finds the native binary in node_modules, not the node wrapper", async () => {
    const resolved = await resolveCodexBinary({ env: {}, searchFrom: [path.join(REPO, "test")] });
    expect(resolved).toEqual({ source: "node_modules", path: NATIVE_CODEX, rejected: [] });
  });

  test("the option wins over $CODEX_BIN, and $CODEX_BIN over node_modules", async () => {
    const a = await script("codex-a", "exit 0");
    const b = await script("codex-b", "exit 0");
    expect(await resolveCodexBinary({ binary: a, env: { CODEX_BIN: b }, searchFrom: [REPO] }))
      .toEqual({ source: "option", path: a, rejected: [] });
    expect(await resolveCodexBinary({ env: { CODEX_BIN: b }, searchFrom: [REPO] }))
      .toEqual({ source: "env", path: b, rejected: [] });
  });

  test("PATH is last; rejected candidates say why", async () => {
    const dir = path.join(scratch, "path-bin");
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "codex"), "not executable");
    const good = path.join(scratch, "path-bin-2");
    await mkdir(good, { recursive: true });
    await writeFile(path.join(good, "codex"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    // An @openai/codex install whose platform package is missing.
    const broken = path.join(scratch, "broken", "node_modules", "@openai", "codex");
    await mkdir(path.join(broken, "bin"), { recursive: true });
    await writeFile(path.join(broken, "package.json"), '{"name":"@openai/codex"}');
    await writeFile(path.join(broken, "bin", "codex.js"), "#!/usr/bin/env node\n", { mode: 0o755 });
    const resolved = await resolveCodexBinary({
      env: { PATH: `${dir}:${good}` },
      searchFrom: [path.join(scratch, "broken")],
    });
    expect(resolved.source).toBe("path");
    expect(resolved.path).toBe(path.join(good, "codex"));
    expect(resolved.rejected).toContainEqual({
      source: "path",
      path: path.join(dir, "codex"),
      reason: "is not executable",
    });
    expect(resolved.rejected[0]).toEqual({
      source: "node_modules",
      path: path.join(broken, "bin", "codex.js"),
      reason: expect.stringMatching(
        /^is the npm node wrapper and its native binary is missing \(looked at /,
      ),
    });
  });

  test("nothing found: the error lists what was tried", async () => {
    const error = await resolveCodexBinary({ env: { PATH: "/nonexistent" }, searchFrom: [scratch] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderUnavailable);
    expect((error as Error).message).toContain("no codex binary found");
    expect((error as Error).message).toContain("/nonexistent/codex (does not exist)");
  });
});

describe("StderrRing and parseVersion", () => {
  test("keeps the last lines, strips ANSI, joins lines split across chunks", () => {
    const ring = new StderrRing({ maxLines: 3 });
    expect(ring.write("\u001b[2mone\u001b[0m\ntw")).toEqual(["one"]);
    expect(ring.write("o\nthree\nfour\nfi")).toEqual(["two", "three", "four"]);
    expect(ring.lines()).toEqual(["two", "three", "four", "fi"]);
    expect(ring.flush()).toEqual(["fi"]);
    expect(ring.lines()).toEqual(["three", "four", "fi"]);
    expect(ring.lines(2)).toEqual(["four", "fi"]);
  });

  test("is bounded in characters and clips very long lines", () => {
    const ring = new StderrRing({ maxChars: 10, maxLineChars: 8 });
    ring.write("aaaa\nbbbb\ncccc\n");
    expect(ring.lines()).toEqual(["bbbb", "cccc"]);
    ring.write("x".repeat(20) + "\n");
    expect(ring.lines()).toEqual(["xxxxxxxx… [12 more chars]"]);
    expect(stripAnsi("\u001b]0;title\u0007ok\u001b[1;31m!\u001b[0m")).toBe("ok!");
  });

  test("parseVersion reads the userAgent's version", () => {
    expect(parseVersion("codexd/0.169.0 (Debian 12.0.0; x86_64) xterm (codexd; 0.1.0)"))
      .toBe("0.169.0");
    expect(parseVersion("codexd/0.170.0-alpha.2 (Mac OS 15)")).toBe("0.170.0-alpha.2");
    expect(parseVersion("garbage")).toBe("unknown");
  });
});

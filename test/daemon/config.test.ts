import { describe, expect, test } from "bun:test";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import {
  ConfigError,
  isLoopback,
  loadConfig,
  loadOrCreateToken,
  readConfigFile,
} from "../../src/daemon/config.ts";
import { defaultMaxProcesses } from "../../src/provider/codex/process-limit.ts";

const ENV = { XDG_CACHE_HOME: "/home/u/.cache" };

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), "codexd-config-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("loadConfig", () => {
  test("embedded defaults need nothing", () => {
    const config = loadConfig({ args: [], cwd: "/srv/fleet", env: {} });
    expect(config).toMatchObject({
      server: { host: "127.0.0.1", port: 7420, allowRemote: false },
      stateDir: "/srv/fleet/.codexd",
      codex: {
        args: [],
        env: {},
        home: "/srv/fleet/.codexd/codex-home",
        maxProcesses: defaultMaxProcesses(),
      },
      policies: { dir: "/srv/fleet/policies", default: "default" },
    });
    expect(config.codex.bin).toBeUndefined();
  });

  test("the file is JSONC, relative paths are the file's, flags win", async () => {
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.jsonc");
      await writeFile(
        file,
        `{
  // comments and trailing commas are fine
  "server": { "port": 9000, "host": "localhost", },
  "stateDir": "state",
  "codex": { "bin": "bin/codex", "args": ["-c", "model=\\"m\\""], "env": { "A": "1" } },
  "policies": { "dir": "pol", "default": "strict" },
  "events": { "retention": 5000 },
}`,
      );
      const config = loadConfig({
        args: ["--config", file, "--port", "0", "--state-dir", "/var/lib/codexd"],
        cwd: "/elsewhere",
        env: ENV,
      });
      expect(config).toMatchObject({
        server: { host: "localhost", port: 0 },
        stateDir: "/var/lib/codexd",
        codex: { bin: path.join(dir, "bin/codex"), args: ["-c", 'model="m"'], env: { A: "1" } },
        policies: { dir: path.join(dir, "pol"), default: "strict" },
        events: { retention: 5000 },
      });
    });
  });

  test("worktreeRoots are resolved against the file; none by default", async () => {
    expect(loadConfig({ args: [], cwd: "/srv/fleet", env: {} }).worktreeRoots).toEqual([]);
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.jsonc");
      await writeFile(file, `{ "worktreeRoots": ["wt", "/srv/worktrees"] }`);
      const config = loadConfig({ args: ["--config", file], cwd: "/elsewhere", env: ENV });
      expect(config.worktreeRoots).toEqual([path.join(dir, "wt"), "/srv/worktrees"]);
    });
  });

  test("an MCP server running code from under worktreeRoots is refused, naming the field", async () => {
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.jsonc");
      const servers = (args: string[]) =>
        JSON.stringify({
          worktreeRoots: ["/srv/worktrees"],
          mcpServers: { repo: { command: "node", args } },
        });
      await writeFile(file, servers(["/srv/worktrees/a/tools/mcp.js"]));
      expect(() => loadConfig({ args: ["--config", file], cwd: "/x", env: ENV })).toThrow(
        /Cannot use mcpServers\.repo\.args\.0: "\/srv\/worktrees\/a\/tools\/mcp\.js" names \/srv\/worktrees/,
      );
      await writeFile(file, servers(["/opt/mcp/server.js", "--root=/srv/other"]));
      expect(loadConfig({ args: ["--config", file], cwd: "/x", env: ENV }).mcpServers)
        .toMatchObject({ repo: { command: "node" } });
    });
  });

  test("codex.maxProcesses: a number, or null for none; a tiny one is refused", async () => {
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.jsonc");
      const load = () => loadConfig({ args: ["--config", file], cwd: "/x", env: ENV });
      await writeFile(file, `{ "codex": { "maxProcesses": 512 } }`);
      expect(load().codex.maxProcesses).toBe(512);
      await writeFile(file, `{ "codex": { "maxProcesses": null } }`);
      expect(load().codex.maxProcesses).toBeNull();
      await writeFile(file, `{ "codex": { "maxProcesses": 8 } }`);
      expect(load).toThrow(/codex\.maxProcesses/);
    });
  });

  test("$CODEX_BIN is used when the file names no binary", () => {
    const config = loadConfig({ args: [], cwd: "/x", env: { CODEX_BIN: "/opt/codex" } });
    expect(config.codex.bin).toBe("/opt/codex");
  });

  test("a state dir in the temp folder keeps CODEX_HOME out of it", () => {
    const config = loadConfig({ args: ["--state-dir", "/tmp/s1"], cwd: "/x", env: ENV });
    expect(config.codex.home.startsWith("/home/u/.cache/codexd/codex-homes/")).toBe(true);
    expect(config.notes[0]).toContain("temp folder");
    const other = loadConfig({ args: ["--state-dir", "/tmp/s2"], cwd: "/x", env: {} });
    expect(other.codex.home.startsWith(path.join(homedir(), ".cache"))).toBe(true);
    expect(other.codex.home).not.toBe(config.codex.home.replace("/home/u/.cache", ""));
  });

  test.each([
    [["--host", "0.0.0.0"], /Refusing to listen on 0\.0\.0\.0.*--allow-remote/],
    [["--port", "70000"], /Invalid --port 70000/],
    [["--port", "abc"], /Invalid --port abc/],
    [["--bogus"], /bogus/],
  ])("flags %p are refused", (args, message) => {
    expect(() => loadConfig({ args, cwd: "/x", env: {} })).toThrow(message);
  });

  test("a non-loopback host is allowed with --allow-remote and TLS", async () => {
    await withDir(async (dir) => {
      await writeFile(path.join(dir, "cert.pem"), "CERT");
      await writeFile(path.join(dir, "key.pem"), "KEY");
      const file = path.join(dir, "codexd.jsonc");
      await writeFile(file, `{ "server": { "tls": { "cert": "cert.pem", "key": "key.pem" } } }`);
      const config = loadConfig({
        args: ["--config", file, "--host", "0.0.0.0", "--allow-remote"],
        cwd: "/",
        env: {},
      });
      expect(config.server).toMatchObject({
        host: "0.0.0.0",
        allowRemote: true,
        tls: { cert: path.join(dir, "cert.pem"), key: path.join(dir, "key.pem") },
      });
    });
  });

  test("--allow-remote without TLS is refused, with or without a remote host", async () => {
    for (const args of [["--host", "0.0.0.0", "--allow-remote"], ["--allow-remote"]]) {
      expect(() => loadConfig({ args, cwd: "/", env: {} })).toThrow(
        /Refusing --allow-remote without TLS.*server\.tls\.cert and server\.tls\.key/,
      );
    }
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.jsonc");
      await writeFile(file, `{ "server": { "host": "10.0.0.5", "allowRemote": true } }`);
      expect(() => loadConfig({ args: ["--config", file], cwd: "/", env: {} })).toThrow(
        ConfigError,
      );
      // TLS files that cannot be read are refused at load, naming the key.
      await writeFile(
        file,
        `{ "server": { "allowRemote": true, "tls": { "cert": "nope.pem", "key": "nope.pem" } } }`,
      );
      expect(() => loadConfig({ args: ["--config", file], cwd: "/", env: {} })).toThrow(
        /Cannot read server\.tls\.cert .*nope\.pem/,
      );
    });
  });

  test("limits and allowedHosts: defaults, and from the file", async () => {
    expect(loadConfig({ args: [], cwd: "/x", env: {} })).toMatchObject({
      limits: { maxLiveSessions: 500, maxEventStreams: 1000 },
      server: { allowedHosts: [] },
    });
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.jsonc");
      await writeFile(
        file,
        `{ "limits": { "maxLiveSessions": 3, "maxEventStreams": 7 },
           "server": { "allowedHosts": ["codexd.internal"] } }`,
      );
      expect(loadConfig({ args: ["--config", file], cwd: "/", env: {} })).toMatchObject({
        limits: { maxLiveSessions: 3, maxEventStreams: 7 },
        server: { allowedHosts: ["codexd.internal"] },
      });
      await writeFile(file, `{ "limits": { "maxLiveSessions": 0 } }`);
      expect(() => loadConfig({ args: ["--config", file], cwd: "/", env: {} })).toThrow(
        /limits\.maxLiveSessions/,
      );
    });
  });

  test("codex.user: its codex home lives beside the state dir, never inside it", async () => {
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.jsonc");
      await writeFile(file, `{ "stateDir": "/srv/codexd/state", "codex": { "user": "agent" } }`);
      const config = loadConfig({ args: ["--config", file], cwd: "/", env: ENV });
      expect(config.codex).toMatchObject({
        user: "agent",
        home: "/srv/codexd/state-codex-home",
      });
      for (const home of ["/srv/codexd/state/codex-home", "/srv/codexd"]) {
        await writeFile(
          file,
          `{ "stateDir": "/srv/codexd/state", "codex": { "user": "agent", "home": "${home}" } }`,
        );
        expect(() => loadConfig({ args: ["--config", file], cwd: "/", env: ENV })).toThrow(
          /codex\.home .* and the state dir .* overlap/,
        );
      }
      await writeFile(file, `{ "codex": { "user": "bad user!" } }`);
      expect(() => loadConfig({ args: ["--config", file], cwd: "/", env: ENV })).toThrow(
        /codex\.user/,
      );
    });
  });
});

describe("readConfigFile errors name file, line, column and key", () => {
  const cases: [string, string, RegExp][] = [
    ["bad type", '{\n  "server": {\n    "port": "80"\n  }\n}', /:3:13: server\.port: /],
    ["too big", '{ "server": { "port": 70000 } }', /:1:23: server\.port: .*65535/],
    ["unknown key", '{\n  "stateDir": "s",\n  "colour": 1\n}', /:3:3: colour: Unrecognized key/],
    ["nested unknown", '{ "codex": { "binary": "x" } }', /:1:14: codex\.binary: Unrecognized/],
    ["syntax", '{ "server": { "port": 1 ', /:1:\d+: invalid JSONC: /],
    ["empty", "", /:1:1: invalid JSONC/],
    ["bad mcp name", '{ "mcpServers": { "a b": { "command": "x" } } }', /mcpServers\.a b/],
  ];
  for (const [name, text, message] of cases) {
    test(name, async () => {
      await withDir(async (dir) => {
        const file = path.join(dir, "c.jsonc");
        await writeFile(file, text);
        let error: unknown;
        try {
          readConfigFile(file);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toStartWith(file + ":");
        expect((error as Error).message).toMatch(message);
      });
    });
  }

  test("a missing file", () => {
    expect(() => readConfigFile("/nonexistent/c.jsonc")).toThrow(
      /Cannot read config \/nonexistent\/c\.jsonc/,
    );
  });
});

describe("loadOrCreateToken", () => {
  test("generates 32 random bytes as hex, mode 0600, then reuses it", async () => {
    await withDir(async (dir) => {
      const first = loadOrCreateToken(dir);
      expect(first.created).toBe(true);
      expect(first.token).toMatch(/^[0-9a-f]{64}$/);
      expect((await stat(first.path)).mode & 0o777).toBe(0o600);
      const again = loadOrCreateToken(dir);
      expect(again).toEqual({ ...first, created: false });
    });
  });

  test("a configured token file must exist and be long enough", async () => {
    await withDir(async (dir) => {
      expect(() => loadOrCreateToken(dir, path.join(dir, "nope"))).toThrow(/does not exist/);
      const short = path.join(dir, "short");
      await writeFile(short, "abc\n");
      expect(() => loadOrCreateToken(dir, short)).toThrow(/shorter than 16/);
    });
  });
});

test("isLoopback", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) {
    expect(isLoopback(host)).toBe(true);
  }
  for (const host of ["0.0.0.0", "10.0.0.1", "::", "example.com", "127.0.0.1.evil"]) {
    expect(isLoopback(host)).toBe(false);
  }
});

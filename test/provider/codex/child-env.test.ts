import { describe, expect, test } from "bun:test";
import {
  buildChildEnv,
  DEFAULT_RUST_LOG,
  isAllowedEnvName,
} from "../../../src/provider/codex/child-env.ts";
import { COMMAND_ENV_EXCLUDED, COMMAND_ENV_INHERITED } from "../../../src/provider/codex/plan.ts";

const HOME = "/srv/codexd/home";

describe("buildChildEnv", () => {
  const cases: Array<{
    name: string;
    inherited: Record<string, string | undefined>;
    extra?: Record<string, string>;
    expected: Record<string, string>;
  }> = [
    {
      name: "passes the basic allow-list",
      inherited: { PATH: "/bin", HOME: "/root", USER: "u", LOGNAME: "u", SHELL: "/bin/sh" },
      expected: { PATH: "/bin", HOME: "/root", USER: "u", LOGNAME: "u", SHELL: "/bin/sh" },
    },
    {
      name: "passes locale, terminal, time zone and temp dir",
      inherited: {
        LANG: "C.UTF-8",
        LC_ALL: "C",
        LC_CTYPE: "C",
        TERM: "xterm",
        TZ: "UTC",
        TMPDIR: "/t",
      },
      expected: {
        LANG: "C.UTF-8",
        LC_ALL: "C",
        LC_CTYPE: "C",
        TERM: "xterm",
        TZ: "UTC",
        TMPDIR: "/t",
      },
    },
    {
      name: "passes proxies in both cases and CA settings",
      inherited: {
        http_proxy: "a",
        HTTPS_PROXY: "b",
        no_proxy: "c",
        ALL_PROXY: "d",
        SSL_CERT_FILE: "e",
        SSL_CERT_DIR: "f",
        NODE_EXTRA_CA_CERTS: "g",
        REQUESTS_CA_BUNDLE: "h",
        CURL_CA_BUNDLE: "i",
      },
      expected: {
        http_proxy: "a",
        HTTPS_PROXY: "b",
        no_proxy: "c",
        ALL_PROXY: "d",
        SSL_CERT_FILE: "e",
        SSL_CERT_DIR: "f",
        NODE_EXTRA_CA_CERTS: "g",
        REQUESTS_CA_BUNDLE: "h",
        CURL_CA_BUNDLE: "i",
      },
    },
    {
      name: "passes OPENAI_* and CODEX_* but never the caller's CODEX_HOME",
      inherited: {
        OPENAI_API_KEY: "sk",
        OPENAI_BASE_URL: "u",
        CODEX_HOME: "/home/me/.codex",
        CODEX_X: "1",
      },
      expected: { OPENAI_API_KEY: "sk", OPENAI_BASE_URL: "u", CODEX_X: "1" },
    },
    {
      name: "drops the runner's secrets and everything else",
      inherited: {
        ANTHROPIC_API_KEY: "secret",
        AWS_SECRET_ACCESS_KEY: "secret",
        GITHUB_TOKEN: "secret",
        FLEET_RUNNER_TOKEN: "secret",
        LD_PRELOAD: "/evil.so",
        NODE_OPTIONS: "--require x",
        path: "/lowercase-is-not-PATH",
        XOPENAI_KEY: "no",
      },
      expected: {},
    },
    {
      name: "skips undefined values",
      inherited: { PATH: undefined, HOME: "/h" },
      expected: { HOME: "/h" },
    },
    {
      name: "keeps a RUST_LOG the daemon was given",
      inherited: { RUST_LOG: "debug" },
      expected: { RUST_LOG: "debug" },
    },
    {
      name: "adds configured extras, even names outside the allow-list",
      inherited: { PATH: "/bin", ANTHROPIC_API_KEY: "secret" },
      extra: { MY_TOOL_TOKEN: "t", PATH: "/opt/bin:/bin", RUST_LOG: "info" },
      expected: { PATH: "/opt/bin:/bin", MY_TOOL_TOKEN: "t", RUST_LOG: "info" },
    },
    {
      name: "an extra CODEX_HOME cannot replace ours",
      inherited: {},
      extra: { CODEX_HOME: "/elsewhere" },
      expected: {},
    },
  ];

  for (const c of cases) {
    test(c.name, () => {
      const env = buildChildEnv({ inherited: c.inherited, extra: c.extra, codexHome: HOME });
      expect(env).toEqual({ RUST_LOG: DEFAULT_RUST_LOG, ...c.expected, CODEX_HOME: HOME });
    });
  }

  test("PATH keeps its absolute folders only, from the daemon's environment or the config's", () => {
    const inherited = { PATH: "node_modules/.bin:/usr/local/bin::.:bin:/usr/bin:" };
    expect(buildChildEnv({ inherited, codexHome: "/h" }).PATH).toBe("/usr/local/bin:/usr/bin");
    expect(buildChildEnv({ inherited, extra: { PATH: "./x:/opt/bin" }, codexHome: "/h" }).PATH)
      .toBe("/opt/bin");
    expect(buildChildEnv({ inherited: {}, codexHome: "/h" })).not.toHaveProperty("PATH");
  });

  test("does not modify its inputs", () => {
    const inherited = { PATH: "/bin", ANTHROPIC_API_KEY: "secret" };
    const extra = { A: "1" };
    buildChildEnv({ inherited, extra, codexHome: HOME });
    expect(inherited).toEqual({ PATH: "/bin", ANTHROPIC_API_KEY: "secret" });
    expect(extra).toEqual({ A: "1" });
  });
});

describe("codex's environment and its commands' environment", () => {
  /** codex's include_only/exclude patterns: `*` wildcards, case-insensitive. */
  const matches = (name: string, patterns: readonly string[]) =>
    patterns.some((pattern) => new RegExp(`^${pattern.replaceAll("*", ".*")}$`, "i").test(name));
  const names = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LC_ALL",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "http_proxy",
    "HTTPS_PROXY",
    "no_proxy",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_API_KEY",
    "CODEX_ACCESS_TOKEN",
  ];

  test("codex's credentials reach codex but are never inherited by its commands", () => {
    for (const name of names.filter((n) => /^(OPENAI|CODEX)_/.test(n))) {
      expect(isAllowedEnvName(name)).toBe(true);
      expect(matches(name, COMMAND_ENV_INHERITED)).toBe(false);
      expect(matches(name, COMMAND_ENV_EXCLUDED)).toBe(true);
    }
  });

  test("everything else codex gets, its commands inherit", () => {
    for (const name of names.filter((n) => !/^(OPENAI|CODEX)_/.test(n))) {
      expect(isAllowedEnvName(name)).toBe(true);
      expect(matches(name, COMMAND_ENV_INHERITED)).toBe(true);
    }
  });
});

import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { evaluate } from "../../src/approval/engine.ts";
import { envFloorReason, envGlobMatches } from "../../src/approval/env-floor.ts";
import { formatIssue } from "../../src/approval/policy-errors.ts";
import { loadPolicies } from "../../src/approval/policy-loader.ts";
import { defaultShellAnalyzer } from "../../src/approval/shell-analyzer.ts";
import {
  guardSpec,
  shellLine,
  type SpecGuardContext,
  SpecRefused,
} from "../../src/approval/spec-guard.ts";
import { Spec, type SpecInput } from "../../src/provider/spec.ts";
import { fakeAnalyzer } from "./support/fake-analyzer.ts";
import { tempDir } from "./support/policies.ts";
import { storeWith } from "./support/store.ts";

const REPO_POLICIES = join(import.meta.dir, "..", "..", "policies");
const shipped = (name: string) => readFileSync(join(REPO_POLICIES, `${name}.yaml`), "utf8");

const OPEN = `
version: 1
name: open
default: allow
allowBypass: true
spec:
  env:
    allow: ["*"]
  mcpServers: allow
  maxSandbox: danger-full-access
  maxWebSearch: cached
`;
const SILENT = "version: 1\nname: silent\ndefault: allow\n";
const ASKING = `
version: 1
name: asking
default: deny
commands:
  allow:
    - { id: my-mcp, prefix: [my-mcp] }
  ask:
    - { id: ask-docs, prefix: [docs-mcp] }
spec:
  mcpServers: allow
  maxSandbox: read-only
`;

const policies = storeWith({
  default: shipped("default"),
  strict: shipped("strict"),
  open: OPEN,
  silent: SILENT,
  asking: ASKING,
  "mcp-fleet": "version: 1\nname: mcp-fleet\nextends: [default]\nspec: { mcpServers: allow }\n",
});
const tmp = tempDir("codexd-spec-guard-");
afterAll(() => {
  tmp[Symbol.dispose]();
  policies[Symbol.dispose]();
});
const WT = join(tmp.dir, "wt");
mkdirSync(WT);

const guard = (input: Partial<SpecInput>, context: SpecGuardContext = {}) => {
  const spec = Spec.parse({ prompt: "go", cwd: WT, ...input });
  return guardSpec(spec, policies.store.get(spec.policy), fakeAnalyzer, context);
};
const refusals = (input: Partial<SpecInput>, context: SpecGuardContext = {}) =>
  guard(input, context).refusals.map((r) => [r.path, r.rule]);

describe("env: the built-in floor", () => {
  const floored = [
    "BASH_ENV",
    "ENV",
    "BASH_FUNC_ls",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_EXTRA_CA_CERTS",
    "npm_config_script_shell",
    "NPM_CONFIG_USERCONFIG",
    "YARN_RC_FILENAME",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONBREAKPOINT",
    "PIP_INDEX_URL",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PERL5DB",
    "RUBYOPT",
    "RUBYLIB",
    "BUNDLE_GEMFILE",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_0",
    "GIT_CONFIG_VALUE_0",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_PARAMETERS",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_EDITOR",
    "GIT_PAGER",
    "GIT_EXEC_PATH",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_TEMPLATE_DIR",
    "GIT_PROXY_COMMAND",
    "GIT_SEQUENCE_EDITOR",
    "PATH",
    "HOME",
    "SHELL",
    "USER",
    "TMPDIR",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "BROWSER",
    "LESSOPEN",
    "LESS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "KUBE_EDITOR",
    "KUBECTL_EXTERNAL_DIFF",
    "CODEX_HOME",
    "CODEX_API_KEY",
    "CODEXD_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "MAVEN_OPTS",
    "GRADLE_OPTS",
    "GRADLE_USER_HOME",
    "RUSTC_WRAPPER",
    "RUSTFLAGS",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
    "CARGO_HOME",
    "GOFLAGS",
    "GOPROXY",
    "CGO_CFLAGS",
    "CC",
    "MAKEFLAGS",
    "MAKEFILES",
    "CFLAGS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "SSLKEYLOGFILE",
    "OPENSSL_CONF",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "http_proxy",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "KUBECONFIG",
    "AWS_CONFIG_FILE",
    "TF_CLI_CONFIG_FILE",
    "XDG_CONFIG_HOME",
    "TAR_OPTIONS",
    "LUA_INIT",
    "DOTNET_STARTUP_HOOKS",
    "PHP_INI_SCAN_DIR",
    "PHPRC",
    "VIMINIT",
    "WGETRC",
    "RSYNC_CONNECT_PROG",
    "GH_CONFIG_DIR",
    "GH_PAGER",
    "HGRCPATH",
    "DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "GNUPGHOME",
    "NODE",
    "GIT",
    "npm_execpath",
    "ELECTRON_RUN_AS_NODE",
    "IPYTHONDIR",
    "VAGRANT_VAGRANTFILE",
    "ZDOTDIR",
  ];
  for (const name of floored) {
    test(`${name} is on the floor`, () => expect(envFloorReason(name)).toBeString());
  }
  const plain = [
    "API_KEY",
    "NPM_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "NODE_AUTH_TOKEN",
    "CARGO_REGISTRY_TOKEN",
    "CARGO_REGISTRIES_MY_REG_TOKEN",
    "POETRY_PYPI_TOKEN_PYPI",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "ANTHROPIC_API_KEY",
    "SENTRY_DSN",
    "DATABASE_URL",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "NODE_ENV",
    "CI",
  ];
  for (const name of plain) {
    test(`${name} is not on the floor`, () => expect(envFloorReason(name)).toBeUndefined());
  }

  test("no policy lifts the floor: allow: ['*'] still refuses BASH_ENV", () => {
    expect(refusals({ policy: "open", env: { BASH_ENV: "/x", API_KEY: "k", FOO: "1" } }))
      .toEqual([["env.BASH_ENV", "env.floor"]]);
  });

  test("a policy that says nothing lets a spec set no variable (fail closed)", () => {
    expect(refusals({ policy: "silent", env: { API_KEY: "k" } }))
      .toEqual([["env.API_KEY", "env.not-allowed"]]);
  });

  test("the shipped default admits credential names only", () => {
    expect(refusals({ env: { API_KEY: "k", NPM_TOKEN: "t", GIT_AUTHOR_NAME: "a" } })).toEqual([]);
    expect(refusals({ env: { FOO: "1", NODE_OPTIONS: "--require /x", GIT_DIR: "/x" } })).toEqual([
      ["env.FOO", "env.not-allowed"],
      ["env.NODE_OPTIONS", "env.floor"],
      ["env.GIT_DIR", "env.floor"],
    ]);
  });

  test("strict admits no variable at all", () => {
    expect(refusals({ policy: "strict", env: { NPM_TOKEN: "t" } }))
      .toEqual([["env.NPM_TOKEN", "env.not-allowed"]]);
  });

  test("policy globs", () => {
    expect(envGlobMatches("*_TOKEN", "NPM_TOKEN")).toBe(true);
    expect(envGlobMatches("*_TOKEN", "NPM_TOKENX")).toBe(false);
    expect(envGlobMatches("API_KEY", "API_KEY")).toBe(true);
    expect(envGlobMatches("API_KEY", "xAPI_KEY")).toBe(false);
    expect(envGlobMatches("*", "ANYTHING")).toBe(true);
  });
});

describe("mcpServers", () => {
  test("refused where the policy does not allow them (default, strict, or saying nothing)", () => {
    for (const policy of ["default", "strict", "silent"]) {
      expect(refusals({ policy, mcpServers: { docs: { command: "my-mcp" } } }))
        .toEqual([["mcpServers.docs", "mcpServers.not-allowed"]]);
    }
  });

  test("each command line is judged as a command: built-in rules first", () => {
    expect(refusals({ policy: "open", mcpServers: { x: { command: "rm", args: ["-rf", "/"] } } }))
      .toEqual([["mcpServers.x.command", "mcpServers.command"]]);
  });

  test("the policy's rules apply: an allow-list admits only its commands; ask is a refusal", () => {
    expect(refusals({ policy: "asking", mcpServers: { a: { command: "my-mcp" } } })).toEqual([]);
    expect(refusals({ policy: "asking", mcpServers: { b: { command: "node", args: ["s.js"] } } }))
      .toEqual([["mcpServers.b.command", "mcpServers.command"]]);
    const asked = guard({ policy: "asking", mcpServers: { c: { command: "docs-mcp" } } });
    expect(asked.refusals[0]).toMatchObject({ rule: "mcpServers.command" });
    expect(asked.refusals[0].message).toContain("would ask about");
  });

  test("the policy's deny rules apply", () => {
    expect(
      refusals({ policy: "mcp-fleet", mcpServers: { p: { command: "npm", args: ["publish"] } } }),
    )
      .toEqual([["mcpServers.p.command", "mcpServers.command"]]);
  });

  test("a marker-touching server command is refused unless the policy allows it outright", () => {
    const evil = { x: { command: "sh", args: ["-c", "touch /tmp/marker"] } };
    expect(refusals({ policy: "default", mcpServers: evil }))
      .toEqual([["mcpServers.x", "mcpServers.not-allowed"]]);
    expect(refusals({ policy: "asking", mcpServers: evil }))
      .toEqual([["mcpServers.x.command", "mcpServers.command"]]);
  });

  test("judged by the policy alone: the spec's own permissions neither vouch nor object", () => {
    expect(refusals({
      policy: "open",
      permissionMode: "bypassPermissions",
      mcpServers: { m: { command: "npm", args: ["publish"] } },
    })).toEqual([]);
    expect(refusals({
      policy: "asking",
      permissionMode: "bypassPermissions",
      mcpServers: { m: { command: "node", args: ["s.js"] } },
    })).toContainEqual(["mcpServers.m.command", "mcpServers.command"]);
    expect(refusals({
      policy: "mcp-fleet",
      mcpServers: { m: { command: "my-mcp" } },
      permissionConfig: { allowPatterns: ["npm test"], defaultDecision: "ask" },
    })).toEqual([]);
  });

  describe("the floor: no server runs code from a folder the session's commands write", () => {
    const ROOTS = join(tmp.dir, "roots");
    const OTHER = join(ROOTS, "other-wt");
    mkdirSync(OTHER, { recursive: true });
    const LINK = join(tmp.dir, "link-to-wt");
    symlinkSync(WT, LINK);
    const refused: [string, string, string[], string][] = [
      ["a script in the worktree", "python3", [join(WT, "tools/mcp.py")], "args.0"],
      ["the worktree's own program", join(WT, "bin/server"), [], "command"],
      ["through a symlink to the worktree", "node", [join(LINK, "srv.js")], "args.0"],
      ["an option's value", "npm", [`--prefix=${WT}`, "start"], "args.0"],
      ["an option cluster", "make", [`-C${WT}`, "serve"], "args.0"],
      ["inside a -c script", "sh", ["-c", `cd ${WT} && exec ./srv`], "args.1"],
      ["a file URL", "deno", ["run", `file://${WT}/srv.ts`], "args.1"],
      ["another worktree under worktreeRoots", "node", [join(OTHER, "srv.js")], "args.0"],
      ["the worktree itself, as the server's folder", "uv", ["run", "--directory", WT], "args.2"],
    ];
    for (const [name, command, args, field] of refused) {
      test(`refused: ${name}`, () => {
        expect(refusals(
          { policy: "open", mcpServers: { s: { command, args } } },
          { worktreeRoots: [ROOTS, tmp.dir] },
        )).toContainEqual([`mcpServers.s.${field}`, "mcpServers.writable-code"]);
      });
    }
    // Other spellings of the worktree inside a script (only the worktree is a root here, so
    // nothing else can be what the word names): doubled slashes, `.`, `..`, a link.
    const spelled: [string, string[]][] = [
      ["a doubled slash", ["-c", `python3 ${tmp.dir}//wt/s.py`]],
      ["a dot segment", ["-c", `python3 ${tmp.dir}/./wt/s.py`]],
      ["a dot-dot segment", ["-c", `node ${tmp.dir}/roots/../wt/s.js`]],
      ["a link", ["-c", `exec node ${LINK}/srv.js`]],
    ];
    for (const [name, args] of spelled) {
      test(`refused: the worktree in a script, through ${name}`, () => {
        expect(refusals({ policy: "open", mcpServers: { s: { command: "sh", args } } }))
          .toContainEqual(["mcpServers.s.args.1", "mcpServers.writable-code"]);
      });
    }
    test("allowed: a server installed elsewhere, and a folder whose name only starts alike", () => {
      expect(refusals({
        policy: "open",
        mcpServers: {
          a: { command: "/usr/bin/python3", args: ["-m", "docs_mcp"] },
          b: { command: "node", args: [`${WT}-tools/srv.js`] },
        },
      })).toEqual([]);
    });
  });

  test("a server's env goes through the floor and the policy's names", () => {
    expect(refusals({
      policy: "mcp-fleet",
      mcpServers: {
        m: { command: "my-mcp", env: { LD_PRELOAD: "/x.so", API_KEY: "k", FOO: "1" } },
      },
    })).toEqual([
      ["mcpServers.m.env.LD_PRELOAD", "env.floor"],
      ["mcpServers.m.env.FOO", "env.not-allowed"],
    ]);
  });

  test("under a fleet extending default with mcpServers: allow, an ordinary server starts", () => {
    expect(refusals({
      policy: "mcp-fleet",
      mcpServers: { m: { command: "my-mcp", args: ["--port", "1"] } },
    })).toEqual([]);
  });

  test("a command line the analyzer cannot judge is refused, never a crash", () => {
    const throwing = {
      ...fakeAnalyzer,
      analyze: () => {
        throw new Error("boom");
      },
    };
    const spec = Spec.parse({
      prompt: "go",
      cwd: WT,
      policy: "mcp-fleet",
      mcpServers: { m: { command: "my-mcp" } },
    });
    const result = guardSpec(spec, policies.store.get("mcp-fleet"), throwing, {});
    expect(result.refusals.map((r) => [r.path, r.rule])).toEqual([
      ["mcpServers.m.command", "mcpServers.command"],
    ]);
    expect(result.refusals[0].message).toContain("boom");
  });

  test("shellLine quotes so the analyzer reads back the same words", async () => {
    const analyzer = await defaultShellAnalyzer();
    const argv = ["my mcp", "--x=it's", "$(touch /x)", "a;b", "plain-arg"];
    const line = shellLine(argv);
    const analysis = analyzer.analyze(line);
    expect(analysis.unanalyzable).toBeUndefined();
    expect(analysis.commands.map((c) => c.rawArgv)).toEqual([argv]);
  });
});

describe("sandbox and permissions", () => {
  test("danger-full-access only where the policy's maxSandbox allows it", () => {
    expect(refusals({ sandbox: "danger-full-access" })).toEqual([["sandbox", "sandbox.max"]]);
    expect(refusals({ policy: "strict", sandbox: "danger-full-access" }))
      .toEqual([["sandbox", "sandbox.max"]]);
    expect(refusals({ policy: "silent", sandbox: "danger-full-access" }))
      .toEqual([["sandbox", "sandbox.max"]]);
    expect(refusals({ policy: "open", sandbox: "danger-full-access" })).toEqual([]);
    expect(refusals({ sandbox: "workspace-write" })).toEqual([]);
    expect(refusals({ policy: "asking", sandbox: "workspace-write" }))
      .toEqual([["sandbox", "sandbox.max"]]);
    expect(refusals({ policy: "asking", sandbox: "read-only" })).toEqual([]);
  });

  test("web search only as far as the policy's maxWebSearch (none unless it says)", () => {
    expect(refusals({ webSearch: "cached" })).toEqual([["webSearch", "webSearch.max"]]);
    expect(refusals({ policy: "strict", webSearch: "live" }))
      .toEqual([["webSearch", "webSearch.max"]]);
    expect(refusals({ webSearch: "disabled" })).toEqual([]);
    expect(refusals({ policy: "open", webSearch: "cached" })).toEqual([]);
    expect(refusals({ policy: "open", webSearch: "live" }))
      .toEqual([["webSearch", "webSearch.max"]]);
  });

  test("an unnamed sandbox is read-only where that is the policy's limit", () => {
    expect(guard({ policy: "asking" }).spec.sandbox).toBe("read-only");
    expect(guard({}).spec.sandbox).toBeUndefined();
  });

  test("bypassPermissions only under allowBypass", () => {
    expect(refusals({ permissionMode: "bypassPermissions" }))
      .toEqual([["permissionMode", "permissionMode.bypass"]]);
    expect(refusals({ policy: "open", permissionMode: "bypassPermissions" })).toEqual([]);
  });

  test("defaultDecision can only be stricter than the policy's default", () => {
    expect(refusals({ policy: "strict", permissionConfig: { defaultDecision: "allow" } }))
      .toEqual([["permissionConfig.defaultDecision", "permissionConfig.narrow-only"]]);
    expect(refusals({ policy: "strict", permissionConfig: { defaultDecision: "ask" } }))
      .toEqual([["permissionConfig.defaultDecision", "permissionConfig.narrow-only"]]);
    expect(refusals({ policy: "strict", permissionConfig: { defaultDecision: "deny" } }))
      .toEqual([]);
    expect(refusals({ permissionConfig: { defaultDecision: "ask" } })).toEqual([]);
  });

  test("allowPatterns are accepted at spawn but can only narrow (finding 5)", () => {
    const spec = { policy: "strict", permissionConfig: { allowPatterns: ["node"] } };
    expect(refusals(spec)).toEqual([]);
    const decided = evaluate(
      policies.store.get("strict"),
      { kind: "command", command: "node -e 'require(1)'", cwd: WT },
      {
        worktree: WT,
        permissionMode: "default",
        permissionConfig: { allowPatterns: ["node"], disallowPatterns: [] },
      },
      fakeAnalyzer,
    );
    expect(decided.decision).toBe("deny");
  });
});

describe("cwd", () => {
  const stateDir = join(tmp.dir, "state");
  const codexHome = join(tmp.dir, "codex-home");
  const home = join(tmp.dir, "home");
  const roots = join(tmp.dir, "roots");
  const agent = join(tmp.dir, "agent");
  for (
    const dir of [
      stateDir,
      join(stateDir, "x"),
      codexHome,
      home,
      join(home, ".config", "git"),
      join(home, "work"),
      join(home, "bin"),
      roots,
      join(roots, "a", "bin"),
      join(agent, ".config"),
    ]
  ) {
    mkdirSync(dir, { recursive: true });
  }
  symlinkSync("/etc", join(tmp.dir, "etc-link"));
  symlinkSync(WT, join(tmp.dir, "wt-link"));
  symlinkSync(WT, join(roots, "escape"));
  const context: SpecGuardContext = { stateDir, codexHome, home, pathDirs: [] };

  const cases: Array<[string, string, string | undefined, SpecGuardContext?]> = [
    ["the root", "/", "cwd.root"],
    ["/etc", "/etc", "cwd.system"],
    ["inside /usr", "/usr/lib", "cwd.system"],
    ["/proc", "/proc", "cwd.system"],
    ["/dev", "/dev", "cwd.system"],
    ["/var", "/var", "cwd.system"],
    ["/root", "/root", "cwd.system"],
    ["/tmp itself", "/tmp", "cwd.system"],
    ["/home itself", "/home", "cwd.system"],
    ["a symlink to /etc", join(tmp.dir, "etc-link"), "cwd.system"],
    ["dot-dots up to /etc", `${WT}/../../../../../../../etc`, "cwd.system"],
    ["the daemon user's home", home, "cwd.home"],
    ["a folder containing the home", tmp.dir, "cwd.home"],
    ["a hidden folder of the home", join(home, ".config"), "cwd.home-hidden"],
    ["inside one", join(home, ".config", "git"), "cwd.home-hidden"],
    ["a plain subfolder of the home", join(home, "work"), undefined],
    ["the agent account's home", agent, "cwd.home", { agentHome: agent }],
    ["a hidden folder of it", join(agent, ".config"), "cwd.home-hidden", { agentHome: agent }],
    ["without codex.user: an ordinary folder", join(agent, ".config"), undefined],
    ["a folder of the PATH", join(home, "bin"), "cwd.path", { pathDirs: [join(home, "bin")] }],
    ["a folder holding one", join(roots, "a"), "cwd.path", { pathDirs: [join(roots, "a", "bin")] }],
    ["inside one (not on the PATH itself)", join(roots, "a"), undefined, { pathDirs: [roots] }],
    ["the state dir", stateDir, "cwd.state-dir"],
    ["inside the state dir", join(stateDir, "x"), "cwd.state-dir"],
    ["the codex home", codexHome, "cwd.codex-home"],
    ["an ordinary worktree", WT, undefined],
    ["a symlink to a worktree", join(tmp.dir, "wt-link"), undefined],
    ["inside a worktree root", join(roots, "a"), undefined, { worktreeRoots: [roots] }],
    ["a worktree root itself", roots, undefined, { worktreeRoots: [roots] }],
    ["outside the worktree roots", WT, "cwd.worktree-roots", { worktreeRoots: [roots] }],
    ["a symlink out of a root", join(roots, "escape"), "cwd.worktree-roots", {
      worktreeRoots: [roots],
    }],
  ];
  for (const [name, cwd, rule, extra] of cases) {
    test(`${name}: ${rule ?? "accepted"}`, () => {
      const found = guard({ cwd }, { ...context, ...extra })
        .refusals.filter((r) => r.path === "cwd").map((r) => r.rule);
      expect(found).toEqual(rule === undefined ? [] : [rule]);
    });
  }

  test("the policies folder, and folders holding the daemon's config or token file", () => {
    const daemonHome = join(tmp.dir, "daemon");
    const policiesDir = join(daemonHome, "policies");
    mkdirSync(join(policiesDir, "sub"), { recursive: true });
    const config = join(daemonHome, "codexd.jsonc");
    writeFileSync(config, "{}");
    const ctx = { home, policiesDir, daemonFiles: [config] };
    expect(refusals({ cwd: policiesDir }, ctx)).toEqual([["cwd", "cwd.policies"]]);
    expect(refusals({ cwd: join(policiesDir, "sub") }, ctx)).toEqual([["cwd", "cwd.policies"]]);
    expect(refusals({ cwd: daemonHome }, { home, daemonFiles: [config] }))
      .toEqual([["cwd", "cwd.daemon-files"]]);
    expect(refusals({ cwd: WT }, ctx)).toEqual([]);
  });

  test("a folder that contains the state dir is refused", () => {
    const outer = join(tmp.dir, "outer");
    mkdirSync(join(outer, ".codexd"), { recursive: true });
    expect(refusals({ cwd: outer }, { stateDir: join(outer, ".codexd"), home })).toEqual([
      ["cwd", "cwd.state-dir"],
    ]);
  });

  test("the resolved path is what the session runs in", () => {
    const result = guard({ cwd: join(tmp.dir, "wt-link") }, { home });
    expect(result.refusals).toEqual([]);
    expect(result.spec.cwd).toBe(WT);
    expect(guard({ cwd: `${WT}/../wt` }, { home }).spec.cwd).toBe(WT);
  });
});

describe("refusals", () => {
  test("every refusal is reported, each naming its field and rule", () => {
    const { refusals: all } = guard({
      policy: "mcp-fleet",
      cwd: "/etc",
      env: { BASH_ENV: "/x" },
      sandbox: "danger-full-access",
      mcpServers: { evil: { command: "rm", args: ["-rf", "/"] } },
    });
    expect(all.map((r) => r.path).sort()).toEqual([
      "cwd",
      "env.BASH_ENV",
      "mcpServers.evil.command",
      "sandbox",
    ]);
    const error = new SpecRefused("spawn session", all);
    expect(error.code).toBe("invalid_input");
    expect(error.message).toStartWith("Cannot spawn session: cwd: ");
    expect(error.message).toContain("(rule cwd.system)");
  });
});

describe("the policy file's spec section", () => {
  test("is validated, errors located at file:line:col", () => {
    using dir = tempDir();
    const file = dir.write(
      "bad.yaml",
      "version: 1\nname: bad\nspec:\n  env:\n    allow: [API_KEY, 'BASH-ENV']\n  mcpServers: maybe\n  maxSandbox: none\n  extra: 1\n",
    );
    const { issues } = loadPolicies([file], fakeAnalyzer);
    const lines = (issues.get("bad") ?? []).map(formatIssue);
    expect(lines).toContainEqual(expect.stringMatching(/bad\.yaml:5:\d+: spec\.env\.allow\[1\]: /));
    expect(lines).toContainEqual(expect.stringMatching(/bad\.yaml:6:\d+: spec\.mcpServers: /));
    expect(lines).toContainEqual(expect.stringMatching(/bad\.yaml:7:\d+: spec\.maxSandbox: /));
    expect(lines).toContainEqual(
      expect.stringMatching(/bad\.yaml:8:3: spec\.extra: unknown key extra/),
    );
  });

  test("env.allow lists merge along extends; scalars are the last file's", () => {
    using local = storeWith({
      base: "version: 1\nname: base\nspec: { env: { allow: [A_TOKEN] }, mcpServers: allow }\n",
      child:
        "version: 1\nname: child\nextends: [base]\nspec: { env: { allow: [B_TOKEN] }, mcpServers: deny }\n",
    });
    expect(local.store.get("child").merged.spec).toEqual({
      envAllow: ["A_TOKEN", "B_TOKEN"],
      mcpServers: "deny",
      maxSandbox: "workspace-write",
      maxWebSearch: "disabled",
    });
  });
});

describe("the attacks are real (harmless markers, positive controls)", () => {
  const hasGit = spawnSync("git", ["--version"]).status === 0;

  test("BASH_ENV runs a script inside an approved `bash -c ls`", () => {
    using dir = tempDir();
    const marker = join(dir.dir, "bash-env-ran");
    const script = dir.write("hook.sh", `touch '${marker}'\n`);
    spawnSync("bash", ["-c", "ls"], {
      cwd: dir.dir,
      env: { PATH: process.env.PATH, BASH_ENV: script },
    });
    expect(existsSync(marker)).toBe(true);
    expect(envFloorReason("BASH_ENV")).toBeString();
  });

  test.skipIf(!hasGit)(
    "GIT_CONFIG_* with core.fsmonitor runs a program inside `git status`",
    () => {
      using dir = tempDir();
      const marker = join(dir.dir, "fsmonitor-ran");
      const hook = dir.write("hook.sh", `#!/bin/sh\ntouch '${marker}'\n`);
      spawnSync("chmod", ["+x", hook]);
      const repo = join(dir.dir, "repo");
      mkdirSync(repo);
      spawnSync("git", ["init", "-q"], { cwd: repo });
      writeFileSync(join(repo, "f"), "x");
      spawnSync("git", ["status"], {
        cwd: repo,
        env: {
          PATH: process.env.PATH,
          HOME: dir.dir,
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_CONFIG_COUNT: "1",
          GIT_CONFIG_KEY_0: "core.fsmonitor",
          GIT_CONFIG_VALUE_0: hook,
        },
      });
      expect(existsSync(marker)).toBe(true);
      for (const name of ["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"]) {
        expect(envFloorReason(name)).toBeString();
      }
    },
  );

  test.skipIf(!hasGit)("GIT_EXTERNAL_DIFF runs a program inside `git diff`", () => {
    using dir = tempDir();
    const marker = join(dir.dir, "external-diff-ran");
    const hook = dir.write("hook.sh", `#!/bin/sh\ntouch '${marker}'\n`);
    spawnSync("chmod", ["+x", hook]);
    const repo = join(dir.dir, "repo");
    mkdirSync(repo);
    const git = (...args: string[]) =>
      spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], {
        cwd: repo,
        env: { PATH: process.env.PATH, HOME: dir.dir, GIT_CONFIG_NOSYSTEM: "1" },
      });
    git("init", "-q");
    writeFileSync(join(repo, "f"), "x");
    git("add", "f");
    git("commit", "-qm", "init");
    writeFileSync(join(repo, "f"), "y");
    spawnSync("git", ["diff"], {
      cwd: repo,
      env: { PATH: process.env.PATH, HOME: dir.dir, GIT_EXTERNAL_DIFF: hook },
    });
    expect(existsSync(marker)).toBe(true);
    expect(envFloorReason("GIT_EXTERNAL_DIFF")).toBeString();
  });

  test("NODE_OPTIONS=--require runs a module inside `node`", () => {
    const node = spawnSync("node", ["--version"]);
    if (node.status !== 0) return;
    using dir = tempDir();
    const marker = join(dir.dir, "node-options-ran");
    const hook = dir.write(
      "hook.cjs",
      `require("fs").writeFileSync(${JSON.stringify(marker)}, "x");\n`,
    );
    spawnSync("node", ["-e", "0"], {
      cwd: dir.dir,
      env: { PATH: process.env.PATH, NODE_OPTIONS: `--require ${hook}` },
    });
    expect(existsSync(marker)).toBe(true);
    expect(envFloorReason("NODE_OPTIONS")).toBeString();
  });
});

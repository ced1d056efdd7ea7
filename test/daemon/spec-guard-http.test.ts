/**
 * The fleet policy governs the spec, over HTTP: the daemon's SessionManager (real store, journal,
 * policies and bridge; the in-memory provider, recording each spec planned and then failing to
 * start it as a codex that is down would) behind the Hono app, called with `app.request()`. A refused spec is a 400 naming
 * the field and the rule and never reaches the provider; an accepted one reaches it (then 503).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { ApprovalBridge } from "../../src/approval/bridge.ts";
import { PolicyStore } from "../../src/approval/policy-store.ts";
import { createApp } from "../../src/daemon/app.ts";
import { Journal } from "../../src/daemon/journal.ts";
import { SessionManager } from "../../src/daemon/sessions.ts";
import { Store } from "../../src/daemon/store.ts";
import { ProviderUnavailable } from "../../src/errors.ts";
import { MemoryProvider } from "../support/memory-provider.ts";
import { fakeAnalyzer } from "../approval/support/fake-analyzer.ts";
import { tempDir } from "../approval/support/policies.ts";
import { silentLogger } from "../../src/log.ts";

const TOKEN = "spec-guard-token-0123";
const tmp = tempDir("codexd-spec-guard-http-");
afterAll(() => tmp[Symbol.dispose]());

const REPO_POLICIES = join(import.meta.dir, "..", "..", "policies");
const policyDir = join(tmp.dir, "policies");
mkdirSync(policyDir);
for (const name of ["default", "strict"]) {
  tmp.write(`policies/${name}.yaml`, readFileSync(join(REPO_POLICIES, `${name}.yaml`), "utf8"));
}
tmp.write(
  "policies/mcp-fleet.yaml",
  "version: 1\nname: mcp-fleet\nextends: [default]\nspec: { mcpServers: allow }\n",
);
const WT = join(tmp.dir, "wt");
const ROOTS = join(tmp.dir, "roots");
const STATE = join(tmp.dir, "state");
const CODEX_HOME = join(tmp.dir, "codex-home");
for (const dir of [WT, ROOTS, join(ROOTS, "wt-1"), STATE, CODEX_HOME]) {
  mkdirSync(dir, { recursive: true });
}
symlinkSync("/etc", join(tmp.dir, "etc-link"));
symlinkSync(join(ROOTS, "wt-1"), join(tmp.dir, "wt-1-link"));

function setup(options: { worktreeRoots?: string[] } = {}) {
  const store = Store.open(":memory:");
  const journal = new Journal(store);
  const policies = new PolicyStore(policyDir, fakeAnalyzer);
  expect(policies.issues()).toEqual([]);
  const provider = new MemoryProvider();
  provider.startFailure = new ProviderUnavailable("no codex in this test");
  const sent = provider.planned;
  const sessions = new SessionManager({
    store,
    journal,
    provider,
    policies,
    bridge: new ApprovalBridge(policies),
    workspace: { stateDir: STATE, codexHome: CODEX_HOME, worktreeRoots: options.worktreeRoots },
    version: "test",
  });
  const app = createApp({ service: sessions, token: TOKEN, logger: silentLogger });
  const post = (path: string, body: unknown) =>
    app.request(path, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  return { app, post, sent, store };
}

interface ErrorJson {
  error: { code: string; message: string; details?: Array<{ path: string; rule?: string }> };
}

const ATTACKS: Array<[string, Record<string, unknown>, string, string]> = [
  [
    "BASH_ENV runs a script in every command",
    { env: { BASH_ENV: "/x.sh" } },
    "env.BASH_ENV",
    "env.floor",
  ],
  [
    "GIT_CONFIG_* sets core.fsmonitor",
    {
      env: { GIT_CONFIG_COUNT: "1" },
    },
    "env.GIT_CONFIG_COUNT",
    "env.floor",
  ],
  ["GIT_EXTERNAL_DIFF", { env: { GIT_EXTERNAL_DIFF: "/x" } }, "env.GIT_EXTERNAL_DIFF", "env.floor"],
  ["NODE_OPTIONS", { env: { NODE_OPTIONS: "--require /x" } }, "env.NODE_OPTIONS", "env.floor"],
  ["LD_PRELOAD", { env: { LD_PRELOAD: "/x.so" } }, "env.LD_PRELOAD", "env.floor"],
  ["OPENAI_API_KEY", { env: { OPENAI_API_KEY: "sk" } }, "env.OPENAI_API_KEY", "env.floor"],
  ["a name default does not list", { env: { FOO: "1" } }, "env.FOO", "env.not-allowed"],
  [
    "MCP servers under strict",
    {
      policy: "strict",
      mcpServers: { x: { command: "my-mcp" } },
    },
    "mcpServers.x",
    "mcpServers.not-allowed",
  ],
  [
    "MCP servers under default",
    { mcpServers: { x: { command: "sh", args: ["-c", "touch /tmp/marker"] } } },
    "mcpServers.x",
    "mcpServers.not-allowed",
  ],
  [
    "an MCP server whose command a built-in rule denies",
    {
      policy: "mcp-fleet",
      mcpServers: { x: { command: "rm", args: ["-rf", "/"] } },
    },
    "mcpServers.x.command",
    "mcpServers.command",
  ],
  [
    "an MCP server with LD_PRELOAD",
    {
      policy: "mcp-fleet",
      mcpServers: { x: { command: "my-mcp", env: { LD_PRELOAD: "/x.so" } } },
    },
    "mcpServers.x.env.LD_PRELOAD",
    "env.floor",
  ],
  ["sandbox danger-full-access", { sandbox: "danger-full-access" }, "sandbox", "sandbox.max"],
  [
    "bypassPermissions without allowBypass",
    {
      permissionMode: "bypassPermissions",
    },
    "permissionMode",
    "permissionMode.bypass",
  ],
  [
    "defaultDecision allow under strict",
    {
      policy: "strict",
      permissionConfig: { defaultDecision: "allow" },
    },
    "permissionConfig.defaultDecision",
    "permissionConfig.narrow-only",
  ],
  ["cwd /", { cwd: "/" }, "cwd", "cwd.root"],
  ["cwd /etc", { cwd: "/etc" }, "cwd", "cwd.system"],
  ["cwd a symlink to /etc", { cwd: join(tmp.dir, "etc-link") }, "cwd", "cwd.system"],
  ["cwd wt/../../../etc", { cwd: `${WT}/../../../../../../etc` }, "cwd", "cwd.system"],
  ["cwd the state dir", { cwd: STATE }, "cwd", "cwd.state-dir"],
  ["cwd the codex home", { cwd: CODEX_HOME }, "cwd", "cwd.codex-home"],
  ["cwd around the state dir", { cwd: tmp.dir }, "cwd", "cwd.state-dir"],
];

describe("spawn refuses what the policy does not allow", () => {
  const { post, sent } = setup();
  for (const [name, extra, path, rule] of ATTACKS) {
    test(`${name} → 400 ${path} ${rule}`, async () => {
      const before = sent.length;
      const res = await post("/v1/sessions", { prompt: "go", cwd: WT, ...extra });
      expect(res.status).toBe(400);
      const body = (await res.json()) as ErrorJson;
      expect(body.error.code).toBe("invalid_input");
      expect(body.error.details).toContainEqual(expect.objectContaining({ path, rule }));
      expect(body.error.message).toContain(path);
      expect(sent.length).toBe(before);
    });
  }

  test("an acceptable spec reaches codex, with the cwd resolved", async () => {
    const link = join(tmp.dir, "wt-1-link");
    const res = await post("/v1/sessions", {
      prompt: "go",
      cwd: link,
      policy: "mcp-fleet",
      env: { API_KEY: "k", GIT_AUTHOR_NAME: "bot" },
      mcpServers: { docs: { command: "my-mcp", args: ["--port", "1"], env: { DOCS_TOKEN: "t" } } },
      permissionConfig: { allowPatterns: ["npm test"], defaultDecision: "ask" },
    });
    expect(res.status, await res.clone().text()).toBe(503);
    expect(sent.at(-1)?.cwd).toBe(join(ROOTS, "wt-1"));
  });
});

describe("resume is judged the same way", () => {
  test("a refused resume changes nothing", async () => {
    const { post, sent, store } = setup();
    expect((await post("/v1/sessions", { prompt: "go", cwd: WT })).status).toBe(503);
    const [row] = store.listSessions();
    const res = await post(`/v1/sessions/${row.id}/resume`, {
      prompt: "again",
      cwd: WT,
      env: { BASH_ENV: "/x.sh" },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorJson).error.details).toContainEqual(
      expect.objectContaining({ path: "env.BASH_ENV", rule: "env.floor" }),
    );
    expect(sent.length).toBe(1);
    expect(store.getSession(row.id)?.spec).toEqual(row.spec);
  });
});

describe("worktreeRoots", () => {
  const { post, sent } = setup({ worktreeRoots: [ROOTS] });
  test("a cwd outside them is refused", async () => {
    const res = await post("/v1/sessions", { prompt: "go", cwd: WT });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorJson).error.details).toContainEqual(
      expect.objectContaining({ path: "cwd", rule: "cwd.worktree-roots" }),
    );
  });
  test("a cwd inside one is accepted", async () => {
    const res = await post("/v1/sessions", { prompt: "go", cwd: join(ROOTS, "wt-1") });
    expect(res.status).toBe(503);
    expect(sent.at(-1)?.cwd).toBe(join(ROOTS, "wt-1"));
  });
});

describe("the service checks that the cwd exists (the wire schema checks its form)", () => {
  test("a missing cwd or a file as cwd is a 400 naming cwd; nothing reaches the provider", async () => {
    const { post, sent } = setup();
    const file = join(tmp.dir, "a-file");
    tmp.write("a-file", "x");
    for (
      const [cwd, says] of [
        [
          join(tmp.dir, "nope"),
          `Cannot spawn session: cwd ${join(tmp.dir, "nope")} does not exist`,
        ],
        [file, `Cannot spawn session: cwd ${file} is not a directory`],
      ]
    ) {
      const res = await post("/v1/sessions", { prompt: "x", cwd });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: { code: "invalid_input", message: says, details: [{ path: "cwd", message: says }] },
      });
    }
    expect(sent).toEqual([]);
  });
});

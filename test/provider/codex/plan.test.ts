import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { Spec, type SpecInput } from "../../../src/provider/spec.ts";
import path from "node:path";
import {
  codexPermissions,
  COMMAND_ENV_EXCLUDED,
  COMMAND_ENV_INHERITED,
  commandEnvPolicy,
  mcpBatchWrite,
  PINNED_FEATURES,
  pinnedConfig,
  planSpawn,
  planThread,
  SANDBOX_GUARD_PATH,
  SANDBOX_PROFILE,
  sandboxProfileConfig,
  SPEC_FIELD_HANDLING,
  untrustedProjects,
  withPrivateTmp,
} from "../../../src/provider/codex/plan.ts";

const cwd = tmpdir();
const spec = (input: Partial<SpecInput> = {}) => Spec.parse({ prompt: "hello", cwd, ...input });

describe("planSpawn", () => {
  test("every Spec key is either translated or listed with a reason", () => {
    const specKeys = Object.keys(Spec.shape).sort();
    expect(Object.keys(SPEC_FIELD_HANDLING).sort()).toEqual(specKeys);
    const full = spec({
      model: "m",
      baseInstructions: "b",
      developerInstructions: "d",
      reasoningEffort: "high",
      sandbox: "read-only",
      permissionConfig: { allowPatterns: ["npm test"] },
      mcpServers: { docs: { command: "node", args: ["x.js"] } },
      env: { FOO: "bar" },
      timeoutMs: 1000,
      metadata: { team: "a" },
    });
    // Every field is honoured: by codex, or by codexd (policy, permissionConfig, timeoutMs,
    // onBusy, metadata): none is "ignored".
    expect(planSpawn(full).ignoredFields).toEqual([]);
    expect(planSpawn(full, { fieldsSet: Object.keys(full) }).ignoredFields).toEqual([]);
  });

  test("ignoredFields: fields filled in by defaults are not the caller's", () => {
    const minimal = spec();
    expect(minimal.policy).toBe("default");
    expect(minimal.onBusy).toBe("queue");
    expect(planSpawn(minimal, { fieldsSet: ["prompt", "cwd"] }).ignoredFields).toEqual([]);
  });

  test("ignoredFields: a sandbox the caller set under permissionMode plan (read-only) is named", () => {
    const planned = spec({ permissionMode: "plan", sandbox: "workspace-write" });
    expect(planSpawn(planned, { fieldsSet: ["prompt", "cwd", "permissionMode", "sandbox"] }))
      .toMatchObject({
        threadStart: { approvalPolicy: "untrusted" },
        ignoredFields: [{ field: "sandbox", reason: expect.stringContaining("read-only") }],
      });
    // read-only is what plan runs: honoured. A sandbox codexd filled in is not the caller's.
    const readOnly = spec({ permissionMode: "plan", sandbox: "read-only" });
    expect(planSpawn(readOnly).ignoredFields).toEqual([]);
    expect(planSpawn(planned, { fieldsSet: ["prompt", "cwd", "permissionMode"] }).ignoredFields)
      .toEqual([]);
  });

  test.each([
    ["prompt", { prompt: "do it" }, (p: ReturnType<typeof planSpawn>) => p.firstTurn.input],
    ["model", { model: "gpt-x" }, (p: ReturnType<typeof planSpawn>) => p.threadStart.model],
    [
      "reasoningEffort → effort",
      { reasoningEffort: "low" as const },
      (p: ReturnType<typeof planSpawn>) => p.firstTurn.effort,
    ],
    [
      "baseInstructions",
      { baseInstructions: "be brief" },
      (p: ReturnType<typeof planSpawn>) => p.threadStart.baseInstructions,
    ],
    [
      "developerInstructions",
      { developerInstructions: "use tabs" },
      (p: ReturnType<typeof planSpawn>) => p.threadStart.developerInstructions,
    ],
  ])("translates %s", (_name, input, pick) => {
    const value = pick(planSpawn(spec(input)));
    expect(value).toEqual(
      "prompt" in input
        ? [{ type: "text", text: "do it", text_elements: [] }]
        : Object.values(input)[0],
    );
  });

  test("optional fields that are absent are not sent at all; the pinned settings always are", () => {
    const plan = planSpawn(spec());
    expect(plan.threadStart).toEqual({
      cwd,
      approvalPolicy: "untrusted",
      approvalsReviewer: "user",
      experimentalRawEvents: true,
      config: { ...pinnedConfig(cwd, undefined), ...sandboxProfileConfig("workspace-write") },
    });
    expect(plan.firstTurn).toEqual({ input: [{ type: "text", text: "hello", text_elements: [] }] });
    expect(plan.mcpConfigEdit).toBeUndefined();
  });

  test("a session's MCP servers and env go in the thread's config", () => {
    const plan = planSpawn(spec({
      mcpServers: { docs: { command: "node", args: ["srv.js"], env: { K: "v" } } },
      env: { API_TOKEN: "secret" },
    }));
    expect(plan.threadStart.config).toEqual({
      projects: untrustedProjects(cwd),
      shell_environment_policy: {
        inherit: "all",
        ignore_default_excludes: false,
        exclude: ["OPENAI_*", "CODEX_*"],
        set: { SHLVL: "1", API_TOKEN: "secret" },
        include_only: [...COMMAND_ENV_INHERITED, "SHLVL", "API_TOKEN"],
      },
      features: {
        unified_exec: true,
        write_stdin_approval: true,
        tool_call_mcp_elicitation: true,
        skill_mcp_dependency_install: false,
        multi_agent: false,
        multi_agent_v2: false,
        request_permissions_tool: false,
        exec_permission_approvals: false,
        goals: false,
        shell_snapshot: false,
      },
      skills: { include_instructions: false },
      web_search: "disabled",
      allow_login_shell: false,
      default_permissions: "codexd",
      permissions: {
        codexd: {
          extends: ":workspace",
          filesystem: { "/nonexistent/codexd-sandbox-guard": "deny" },
        },
      },
      // Started outside the sandbox: never in the worktree (no cwd given: "/").
      "mcp_servers.docs": { command: "node", args: ["srv.js"], cwd: "/", env: { K: "v" } },
    });
    // Web search only as the spec asks (its policy allowing: spec-guard.ts).
    expect(planSpawn(spec({ webSearch: "cached" })).threadStart.config.web_search).toBe("cached");
    const placed = planSpawn(spec({ mcpServers: { docs: { command: "x", args: [], env: {} } } }), {
      mcpCwd: "/tmp/codexd-tmp-1/.mcp-cwd",
    });
    expect(placed.threadStart.config["mcp_servers.docs"]).toEqual({
      command: "x",
      args: [],
      cwd: "/tmp/codexd-tmp-1/.mcp-cwd",
    });
  });

  test("the sandbox is a permission profile with a deny-read entry, never thread/start's sandbox", () => {
    // With thread/start's `sandbox` codex drops the profile's entries, and without a deny-read
    // entry it reruns an approved command unsandboxed when it fails (approved-sandbox.test.ts).
    for (
      const [input, base] of [
        [{}, ":workspace"],
        [{ sandbox: "read-only" as const }, ":read-only"],
        [{ permissionMode: "plan" as const }, ":read-only"],
        [{ permissionMode: "acceptEdits" as const }, ":workspace"],
      ] as const
    ) {
      const thread = planThread(spec(input));
      expect(thread.sandbox).toBeUndefined();
      expect(thread.config.default_permissions).toBe(SANDBOX_PROFILE);
      expect(thread.config.permissions).toEqual({
        [SANDBOX_PROFILE]: { extends: base, filesystem: { [SANDBOX_GUARD_PATH]: "deny" } },
      });
    }
    // bypassPermissions runs unsandboxed by design: thread/start's sandbox, no profile.
    const bypass = planThread(spec({ permissionMode: "bypassPermissions" }));
    expect(bypass.sandbox).toBe("danger-full-access");
    expect(bypass.config.default_permissions).toBeUndefined();
  });

  test("the cwd's git folders are read-only entries; a denied path stays denied", () => {
    const thread = planThread(spec({}), {
      readOnly: ["/repo/.git", "/shared"],
      readDenied: ["/shared"],
    });
    expect(asFilesystem(thread.config.permissions)).toEqual({
      [SANDBOX_GUARD_PATH]: "deny",
      "/repo/.git": "read",
      "/shared": "deny",
    });
  });

  test("thread/resume overrides carry the same pins as thread/start", () => {
    const input = spec({ env: { A: "1" }, sandbox: "read-only" });
    const resume = planThread(input, { cwdAliases: ["/real/wt"] });
    expect(resume.approvalsReviewer).toBe("user");
    expect(resume.config.features).toEqual({ ...PINNED_FEATURES });
    expect(resume.config.shell_environment_policy).toEqual(commandEnvPolicy({ A: "1" }));
    expect(resume.config.projects).toEqual(untrustedProjects(cwd, ["/real/wt"]));
  });
});

describe("pinned codex settings", () => {
  test("the worktree, every folder above it and each alias are untrusted", () => {
    const projects = untrustedProjects("/work/wt-1/sub", ["/mnt/real/wt-1/sub"]);
    expect(Object.keys(projects).sort()).toEqual([
      "/",
      "/mnt",
      "/mnt/real",
      "/mnt/real/wt-1",
      "/mnt/real/wt-1/sub",
      "/work",
      "/work/wt-1",
      "/work/wt-1/sub",
    ]);
    expect(new Set(Object.values(projects).map((p) => p.trust_level))).toEqual(
      new Set(["untrusted"]),
    );
    // A relative or dotted spelling is resolved first.
    expect(Object.keys(untrustedProjects("/a/b/../c"))).toEqual(["/a/c", "/a", "/"]);
    expect(Object.keys(untrustedProjects("rel"))[0]).toBe(path.resolve("rel"));
  });

  test("commands inherit only the allow-list plus the spec's names; OPENAI_*/CODEX_* never", () => {
    const policy = commandEnvPolicy({ NPM_TOKEN: "t", "bad name": "x" });
    expect(policy.inherit).toBe("all");
    expect(policy.ignore_default_excludes).toBe(false);
    expect(policy.exclude).toEqual([...COMMAND_ENV_EXCLUDED]);
    expect(policy.set).toEqual({ SHLVL: "1", NPM_TOKEN: "t", "bad name": "x" });
    // A name that is not a plain identifier is set but never let through the final filter.
    expect(policy.include_only).toEqual([...COMMAND_ENV_INHERITED, "SHLVL", "NPM_TOKEN"]);
    for (const name of ["PATH", "HOME", "LANG", "LC_*", "TERM", "TMPDIR", "USER", "TZ"]) {
      expect(COMMAND_ENV_INHERITED).toContain(name);
    }
    for (const pattern of COMMAND_ENV_INHERITED) {
      expect(pattern).not.toMatch(/OPENAI|CODEX|KEY|TOKEN|SECRET/i);
    }
    // bash then skips ~/.bashrc (read-denied) instead of printing "Permission denied" (plan.ts).
    expect(commandEnvPolicy().set).toEqual({ SHLVL: "1" });
  });

  test("daemon-wide MCP servers become one config/batchWrite replacing mcp_servers", () => {
    const plan = planSpawn(spec(), {
      daemonMcpServers: { fs: { command: "mcp-fs", args: [], env: {} } },
      mcpCwd: "/m",
    });
    expect(plan.mcpConfigEdit).toEqual({
      edits: [{
        keyPath: "mcp_servers",
        value: { fs: { command: "mcp-fs", args: [], cwd: "/m" } },
        mergeStrategy: "replace",
      }],
      reloadUserConfig: true,
    });
    expect(mcpBatchWrite({}).edits[0]?.keyPath).toBe("mcp_servers");
  });
});

describe("permission modes", () => {
  test.each(
    [
      ["default", undefined, { approvalPolicy: "untrusted", sandbox: "workspace-write" }],
      ["acceptEdits", undefined, { approvalPolicy: "untrusted", sandbox: "workspace-write" }],
      ["plan", "danger-full-access", { approvalPolicy: "untrusted", sandbox: "read-only" }],
      ["default", "read-only", { approvalPolicy: "untrusted", sandbox: "read-only" }],
    ] as const,
  )("%s with sandbox %s", (mode, sandbox, expected) => {
    expect(codexPermissions(mode, sandbox)).toEqual(expected);
  });

  // Whether a fleet may bypass is the spec guard's decision (spec-guard-http.test.ts).
  test("bypassPermissions asks nothing and runs unsandboxed unless the spec says otherwise", () => {
    expect(codexPermissions("bypassPermissions", undefined)).toEqual({
      approvalPolicy: "never",
      sandbox: "danger-full-access",
    });
  });
});

/** The filesystem entries of codexd's permission profile in a thread's `config.permissions`. */
function asFilesystem(permissions: unknown): unknown {
  return (permissions as Record<string, { filesystem: unknown }>)[SANDBOX_PROFILE].filesystem;
}

describe("withPrivateTmp (each session's own temp folder)", () => {
  test("workspace-write: /tmp and codex's TMPDIR read-only, the others' unreadable, the folder writable and TMPDIR", () => {
    const thread = planThread(spec({ env: { A: "1" } }), { readDenied: ["/secret"] });
    const changed = withPrivateTmp(thread, "/tmp/codexd-tmp-1/ses_a");
    expect(asFilesystem(changed.config.permissions)).toEqual({
      ...asFilesystem(thread.config.permissions) as object,
      ":slash_tmp": "read",
      ":tmpdir": "read",
      "/tmp/codexd-tmp-1": "deny", // every session's temp folder but its own
      "/tmp/codexd-tmp-1/ses_a": "write",
    });
    expect(changed.config.shell_environment_policy).toMatchObject({
      set: { SHLVL: "1", A: "1", TMPDIR: "/tmp/codexd-tmp-1/ses_a" },
    });
    // The plan itself is left as it was (it is reused for every start and resume).
    expect(thread.config.shell_environment_policy).toMatchObject({ set: { SHLVL: "1", A: "1" } });
    expect(asFilesystem(thread.config.permissions)).not.toHaveProperty([":slash_tmp"]);
  });

  test("read-only and full access are left alone", () => {
    for (
      const input of [{ sandbox: "read-only" as const }, {
        permissionMode: "bypassPermissions" as const,
      }]
    ) {
      const thread = planThread(spec(input));
      expect(withPrivateTmp(thread, "/t")).toBe(thread);
    }
  });
});

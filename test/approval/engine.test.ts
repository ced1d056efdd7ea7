import { describe, expect, test } from "bun:test";
import { evaluate, type SessionFacts } from "../../src/approval/engine.ts";
import type { PermissionConfig } from "../../src/provider/spec.ts";
import { fakeAnalyzer } from "./support/fake-analyzer.ts";
import { storeWith } from "./support/store.ts";

const FLEET = `
version: 1
name: fleet
default: allow
commands:
  deny:
    - id: no-publish
      prefix: [npm, publish]
      reason: releases are made by CI
    - id: no-prod
      regex: 'prod\\.example\\.com'
  ask:
    - id: ask-push
      prefix: [git, push]
`;

const ALLOWLIST = `
version: 1
name: allowlist
default: allow
commands:
  allow:
    - id: npm-test
      prefix: [npm, test]
    - id: ls
      prefix: [ls]
  ask:
    - id: ask-push
      prefix: [git, push]
`;

const PERMISSIVE_ALLOW = `
version: 1
name: permissive
default: allow
commands:
  allow:
    - id: allow-force
      prefix: [git, push]
`;

const facts = (permissionConfig?: Partial<PermissionConfig>): SessionFacts => ({
  worktree: "/tmp",
  permissionMode: "default",
  permissionConfig: permissionConfig === undefined
    ? undefined
    : { allowPatterns: [], disallowPatterns: [], ...permissionConfig },
});

describe("decision order for commands", () => {
  using env = storeWith({
    fleet: FLEET,
    allowlist: ALLOWLIST,
    permissive: PERMISSIVE_ALLOW,
    "deny-default": "version: 1\nname: deny-default\ndefault: deny\n",
  });
  const cases: Array<{
    name: string;
    policy: string;
    command: string;
    spec?: Partial<PermissionConfig>;
    decision: "allow" | "deny" | "ask";
    source: string;
    ruleId?: string;
  }> = [
    {
      name: "builtin beats a policy allow",
      policy: "permissive",
      command: "git push --force origin main",
      decision: "deny",
      source: "builtin",
      ruleId: "builtin.force-push",
    },
    {
      name: "builtin beats a spec allowPattern",
      policy: "fleet",
      command: "rm -rf /",
      spec: { allowPatterns: ["rm"] },
      decision: "deny",
      source: "builtin",
      ruleId: "builtin.rm-root",
    },
    {
      name: "policy deny by prefix in a later simple command",
      policy: "fleet",
      command: "npm test && npm publish --tag next",
      decision: "deny",
      source: "policy:fleet",
      ruleId: "no-publish",
    },
    {
      name: "policy deny by regex anywhere in the line",
      policy: "fleet",
      command: "curl https://prod.example.com/x",
      decision: "deny",
      source: "policy:fleet",
      ruleId: "no-prod",
    },
    {
      name: "policy deny beats a spec allowPattern",
      policy: "fleet",
      command: "npm publish",
      spec: { allowPatterns: ["npm publish"] },
      decision: "deny",
      source: "policy:fleet",
      ruleId: "no-publish",
    },
    {
      name: "spec disallowPattern",
      policy: "fleet",
      command: "cargo publish --dry-run",
      spec: { disallowPatterns: ["cargo publish"] },
      decision: "deny",
      source: "spec",
      ruleId: "spec.disallowPatterns",
    },
    {
      name: "spec disallowPattern beats a policy allow",
      policy: "allowlist",
      command: "npm test -- --watch",
      spec: { disallowPatterns: ["npm test"] },
      decision: "deny",
      source: "spec",
    },
    {
      name: "allow-list accepts when every simple command matches",
      policy: "allowlist",
      command: "npm test && ls -la",
      decision: "allow",
      source: "policy:allowlist",
      ruleId: "npm-test",
    },
    {
      name: "allow-list declines a line with one unlisted command",
      policy: "allowlist",
      command: "npm test && curl x",
      decision: "deny",
      source: "policy:allowlist",
      ruleId: "allow-list",
    },
    {
      name: "allow-list miss falls through to ask",
      policy: "allowlist",
      command: "git push origin main",
      decision: "ask",
      source: "policy:allowlist",
      ruleId: "ask-push",
    },
    {
      name: "spec allowPatterns narrow: an unmatched command is declined",
      policy: "fleet",
      command: "make build",
      spec: { allowPatterns: ["npm test"] },
      decision: "deny",
      source: "spec",
      ruleId: "spec.allowPatterns",
    },
    {
      name: "spec allowPattern keeps the policy's allow",
      policy: "fleet",
      command: "npm test",
      spec: { allowPatterns: ["npm test"] },
      decision: "allow",
      source: "default",
    },
    {
      name: "spec allowPatterns never widen an allow-list (finding 5: node under strict)",
      policy: "allowlist",
      command: "node -e 'require(1)'",
      spec: { allowPatterns: ["node"] },
      decision: "deny",
      source: "policy:allowlist",
      ruleId: "allow-list",
    },
    {
      name: "spec allowPatterns do not skip the policy's ask",
      policy: "allowlist",
      command: "git push origin main",
      spec: { allowPatterns: ["git push"] },
      decision: "ask",
      source: "policy:allowlist",
      ruleId: "ask-push",
    },
    {
      name: "spec allowPatterns turn an unmatched ask into a deny",
      policy: "allowlist",
      command: "git push origin main",
      spec: { allowPatterns: ["npm test"] },
      decision: "deny",
      source: "spec",
      ruleId: "spec.allowPatterns",
    },
    {
      name: "spec allowPatterns need every simple command to match",
      policy: "allowlist",
      command: "npm test && ls",
      spec: { allowPatterns: ["npm test"] },
      decision: "deny",
      source: "spec",
      ruleId: "spec.allowPatterns",
    },
    {
      name: "ask rule",
      policy: "fleet",
      command: "git push origin main",
      decision: "ask",
      source: "policy:fleet",
      ruleId: "ask-push",
    },
    {
      name: "policy default",
      policy: "fleet",
      command: "make build",
      decision: "allow",
      source: "default",
    },
    {
      name: "spec defaultDecision overrides the policy default",
      policy: "fleet",
      command: "make build",
      spec: { defaultDecision: "deny" },
      decision: "deny",
      source: "spec",
      ruleId: "spec.defaultDecision",
    },
    {
      name: "spec defaultDecision cannot loosen the policy default (finding 5)",
      policy: "deny-default",
      command: "make build",
      spec: { defaultDecision: "allow" },
      decision: "deny",
      source: "default",
      ruleId: "default",
    },
    {
      name: "spec defaultDecision ask under a deny default stays deny",
      policy: "deny-default",
      command: "make build",
      spec: { defaultDecision: "ask" },
      decision: "deny",
      source: "default",
    },
    {
      name: "spec defaultDecision ask narrows an allow default",
      policy: "fleet",
      command: "make build",
      spec: { defaultDecision: "ask" },
      decision: "ask",
      source: "spec",
      ruleId: "spec.defaultDecision",
    },
    {
      name: "unanalysable input is declined by default",
      policy: "fleet",
      command: "$(echo rm) -rf x",
      decision: "deny",
      source: "policy:fleet",
      ruleId: "unanalyzable",
    },
    {
      name: "unanalysable input is never accepted by an allow rule",
      policy: "allowlist",
      command: "npm test $(curl x)",
      decision: "deny",
      ruleId: "unanalyzable",
      source: "policy:allowlist",
    },
    {
      name: "an interactive shell is declined by default",
      policy: "fleet",
      command: "bash",
      decision: "deny",
      source: "policy:fleet",
      ruleId: "interactive",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const policy = env.store.get(c.policy);
      const d = evaluate(
        policy,
        { kind: "command", command: c.command, cwd: "/tmp" },
        facts(c.spec),
        fakeAnalyzer,
      );
      expect({ decision: d.decision, source: d.source }).toEqual({
        decision: c.decision,
        source: c.source,
      });
      if (c.ruleId !== undefined) expect(d.ruleId).toBe(c.ruleId);
    });
  }

  test("the allow-list refusal names the policy and the command", () => {
    const d = evaluate(
      env.store.get("allowlist"),
      { kind: "command", command: "curl x", cwd: "/tmp" },
      facts(),
      fakeAnalyzer,
    );
    expect(d.reason).toBe('"curl x" is not in the allow-list of policy allowlist');
  });

  test("writeStdin is judged like a command", () => {
    const d = evaluate(
      env.store.get("fleet"),
      { kind: "writeStdin", command: "npm publish", cwd: "/tmp" },
      facts(),
      fakeAnalyzer,
    );
    expect(d).toMatchObject({ decision: "deny", ruleId: "no-publish" });
  });

  test("the deny rule's reason is the verdict's reason", () => {
    const d = evaluate(
      env.store.get("fleet"),
      { kind: "command", command: "npm publish", cwd: "/tmp" },
      facts(),
      fakeAnalyzer,
    );
    expect(d.reason).toBe("releases are made by CI");
  });
});

describe("unanalyzable, interactive and bypass settings", () => {
  using env = storeWith({
    lenient: `
version: 1
name: lenient
default: allow
unanalyzable: ask
interactive: allow
allowBypass: true
maxCommandLength: 2048
commands:
  deny: [{ id: no-curl, prefix: [curl] }]
`,
  });
  const run = (command: string, mode: SessionFacts["permissionMode"] = "default") =>
    evaluate(
      env.store.get("lenient"),
      { kind: "command", command, cwd: "/tmp" },
      { worktree: "/tmp", permissionMode: mode },
      fakeAnalyzer,
    );

  test("unanalyzable: ask holds unanalysable input for a person", () => {
    expect(run("eval $X").decision).toBe("ask");
  });
  test("a line longer than maxCommandLength is unanalysable, even under bypass", () => {
    const long = `echo ${"x ".repeat(1100)}`;
    expect(run(long)).toMatchObject({ decision: "ask", ruleId: "unanalyzable" });
    expect(run(long, "bypassPermissions")).toMatchObject({ decision: "ask" });
    expect(run(long.slice(0, 2048)).decision).toBe("allow");
  });
  test("interactive: allow lets the command go on to the rules", () => {
    expect(run("python")).toMatchObject({ decision: "allow", source: "default" });
  });
  test("bypassPermissions skips policy rules but never built-ins", () => {
    expect(run("curl x", "bypassPermissions")).toMatchObject({ decision: "allow", source: "mode" });
    expect(run("rm -rf /", "bypassPermissions")).toMatchObject({ source: "builtin" });
  });
  test("bypassPermissions is ignored under a policy that does not allow it", () => {
    using strict = storeWith({ s: "version: 1\nname: s\ndefault: deny\n" });
    const d = evaluate(
      strict.store.get("s"),
      { kind: "command", command: "ls", cwd: "/tmp" },
      { worktree: "/tmp", permissionMode: "bypassPermissions" },
      fakeAnalyzer,
    );
    expect(d).toMatchObject({ decision: "deny", source: "default" });
  });
});

describe("mcp tools and permissions", () => {
  using env = storeWith({
    m: `
version: 1
name: m
default: allow
mcp:
  default: deny
  allow: [{ server: docs }, { id: gh-read, server: github, tool: get_issue }]
  deny: [{ id: no-docs-delete, server: docs, tool: delete }]
`,
    p: "version: 1\nname: p\ndefault: allow\npermissions: ask\n",
  });
  const mcp = (server: string, tool: string) =>
    evaluate(env.store.get("m"), { kind: "mcpTool", server, tool }, facts(), fakeAnalyzer);

  test("mcp deny beats mcp allow", () => {
    expect(mcp("docs", "delete")).toMatchObject({ decision: "deny", ruleId: "no-docs-delete" });
  });
  test("a server-wide allow", () => {
    expect(mcp("docs", "search").decision).toBe("allow");
  });
  test("a tool allow does not cover other tools of the server", () => {
    expect(mcp("github", "get_issue")).toMatchObject({ decision: "allow", ruleId: "gh-read" });
    expect(mcp("github", "delete_repo")).toMatchObject({ decision: "deny", ruleId: "mcp.default" });
  });
  test("network access is denied unless the policy says otherwise", () => {
    const req = { kind: "permissions" as const, permissions: { network: { enabled: true } } };
    expect(evaluate(env.store.get("m"), req, facts(), fakeAnalyzer).decision).toBe("deny");
    expect(evaluate(env.store.get("p"), req, facts(), fakeAnalyzer)).toMatchObject({
      decision: "ask",
      ruleId: "permissions",
    });
    // An empty file-system part asks for nothing more.
    const emptyFiles = {
      network: { enabled: true },
      fileSystem: { entries: [], read: null, write: [], globScanMaxDepth: null },
    };
    expect(
      evaluate(env.store.get("p"), { ...req, permissions: emptyFiles }, facts(), fakeAnalyzer)
        .ruleId,
    ).toBe("permissions");
  });
  // Shapes of codex 0.169's RequestPermissionProfile (generate-json-schema): every file-system
  // grant, and anything codexd does not know, is declined whatever the policy says.
  const ungrantable: [string, unknown][] = [
    ["write on a folder", { fileSystem: { write: ["/srv/other"] } }],
    ["read on a folder", { fileSystem: { read: ["/root/.ssh"] } }],
    ["write on the root", {
      fileSystem: {
        entries: [{ access: "write", path: { type: "special", value: { kind: "root" } } }],
      },
    }],
    ["a glob entry", {
      fileSystem: { entries: [{ access: "read", path: { type: "glob_pattern", pattern: "**" } }] },
    }],
    ["network with files", { network: { enabled: true }, fileSystem: { write: ["/"] } }],
    ["a field codexd does not know", { network: { enabled: true }, processes: { spawn: true } }],
    ["network in another shape", { network: true }],
    ["not an object", "all"],
  ];
  for (const [name, permissions] of ungrantable) {
    test(`permissions: ${name} is declined by the floor`, () => {
      const req = { kind: "permissions" as const, permissions };
      expect(evaluate(env.store.get("p"), req, facts(), fakeAnalyzer)).toMatchObject({
        decision: "deny",
        ruleId: "builtin.sandbox-escalation",
        source: "builtin",
      });
    });
  }
});

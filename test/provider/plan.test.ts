import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { InvalidInput } from "../../src/errors.ts";
import { Spec, type SpecInput } from "../../src/provider/spec.ts";
import {
  codexPermissions,
  mcpBatchWrite,
  planSpawn,
  SPEC_FIELD_HANDLING,
} from "../../src/provider/codex/plan.ts";

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
    const plan = planSpawn(full);
    const ignored = plan.ignoredFields.map((f) => f.field).sort();
    expect(ignored).toEqual(["metadata", "onBusy", "permissionConfig", "policy", "timeoutMs"]);
    for (const field of ignored) {
      expect(plan.ignoredFields.find((f) => f.field === field)?.reason.length).toBeGreaterThan(10);
    }
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

  test("optional fields that are absent are not sent at all", () => {
    const plan = planSpawn(spec());
    expect(plan.threadStart).toEqual({
      cwd,
      approvalPolicy: "untrusted",
      sandbox: "workspace-write",
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
      "mcp_servers.docs": { command: "node", args: ["srv.js"], env: { K: "v" } },
      "shell_environment_policy.set": { API_TOKEN: "secret" },
    });
  });

  test("daemon-wide MCP servers become one config/batchWrite replacing mcp_servers", () => {
    const plan = planSpawn(spec(), {
      daemonMcpServers: { fs: { command: "mcp-fs", args: [], env: {} } },
    });
    expect(plan.mcpConfigEdit).toEqual({
      edits: [{
        keyPath: "mcp_servers",
        value: { fs: { command: "mcp-fs", args: [] } },
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
    expect(codexPermissions(mode, sandbox, false)).toEqual(expected);
  });

  test("bypassPermissions is refused unless the fleet policy allows it", () => {
    expect(() => codexPermissions("bypassPermissions", undefined, false)).toThrow(InvalidInput);
    const error = captureError(() => planSpawn(spec({ permissionMode: "bypassPermissions" })));
    expect(error).toBeInstanceOf(InvalidInput);
    expect((error as InvalidInput).field).toBe("permissionMode");
    expect((error as Error).message).toContain("allowBypass");
    expect(codexPermissions("bypassPermissions", undefined, true)).toEqual({
      approvalPolicy: "never",
      sandbox: "danger-full-access",
    });
  });
});

function captureError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/**
 * Spec → codex params: a pure translation, table-tested. `planSpawn` decides every codex setting a
 * session starts with; nothing else in the provider invents thread or turn parameters.
 */
import { InvalidInput } from "../../errors.ts";
import type { McpServer, PermissionMode, Spec } from "../spec.ts";

export type ApprovalPolicy = "untrusted" | "on-request" | "never";
export type SandboxMode = "read-only" | "workspace-write" | "danger-full-access";

export interface ThreadStartParams {
  cwd: string;
  approvalPolicy: ApprovalPolicy;
  sandbox: SandboxMode;
  model?: string;
  baseInstructions?: string;
  developerInstructions?: string;
  config?: Record<string, unknown>;
}

export interface TextInput {
  type: "text";
  text: string;
  text_elements: never[];
}

export interface TurnStartParams {
  threadId: string;
  input: TextInput[];
  effort?: string;
}

export interface ConfigBatchWriteParams {
  edits: Array<{ keyPath: string; value: unknown; mergeStrategy: "replace" | "upsert" }>;
  reloadUserConfig: boolean;
}

export interface IgnoredField {
  field: keyof Spec;
  reason: string;
}

export interface SpawnPlan {
  threadStart: ThreadStartParams;
  /** The first turn's params; `threadId` is filled in once `thread/start` answered. */
  firstTurn: Omit<TurnStartParams, "threadId">;
  /** Daemon-wide MCP servers pushed once per provider lifetime (`config/batchWrite`). */
  mcpConfigEdit?: ConfigBatchWriteParams;
  ignoredFields: IgnoredField[];
}

export interface PlanOptions {
  /** Whether the session's fleet policy lets it use `bypassPermissions`. */
  allowBypass?: boolean;
  /** Daemon-wide MCP servers from the configuration. */
  daemonMcpServers?: Record<string, McpServer>;
}

/** Every Spec field, and how codexd handles it: translated for codex, or why not. */
export const SPEC_FIELD_HANDLING: Record<
  keyof Spec,
  { translatedTo: string } | { reason: string }
> = {
  prompt: { translatedTo: "turn/start input[0].text" },
  cwd: { translatedTo: "thread/start cwd" },
  model: { translatedTo: "thread/start model" },
  baseInstructions: { translatedTo: "thread/start baseInstructions" },
  developerInstructions: { translatedTo: "thread/start developerInstructions" },
  reasoningEffort: { translatedTo: "turn/start effort" },
  sandbox: { translatedTo: "thread/start sandbox" },
  permissionMode: { translatedTo: "thread/start approvalPolicy and sandbox" },
  mcpServers: { translatedTo: "thread/start config mcp_servers.<name>" },
  env: { translatedTo: "thread/start config shell_environment_policy.set" },
  policy: { reason: "enforced by codexd's approval bridge, not sent to codex" },
  permissionConfig: { reason: "enforced by codexd's approval bridge, not sent to codex" },
  timeoutMs: { reason: "enforced by codexd as each turn's hard deadline" },
  onBusy: { reason: "decides how codexd queues follow-up turns" },
  metadata: { reason: "stored and listed by codexd, opaque to codex" },
};

/** The codex approval policy and sandbox for a permission mode, so the bridge sees every call. */
export function codexPermissions(
  mode: PermissionMode,
  sandbox: SandboxMode | undefined,
  allowBypass: boolean,
): { approvalPolicy: ApprovalPolicy; sandbox: SandboxMode } {
  switch (mode) {
    case "default":
    case "acceptEdits":
      return { approvalPolicy: "untrusted", sandbox: sandbox ?? "workspace-write" };
    case "plan":
      return { approvalPolicy: "untrusted", sandbox: "read-only" };
    case "bypassPermissions":
      if (!allowBypass) {
        throw new InvalidInput(
          "Cannot spawn session: permissionMode bypassPermissions would let codex run commands " +
            "without asking, so the built-in safety rules could not run; the fleet policy must " +
            "set allowBypass: true",
          "permissionMode",
        );
      }
      return { approvalPolicy: "never", sandbox: sandbox ?? "danger-full-access" };
  }
}

export function textInput(text: string): TextInput[] {
  return [{ type: "text", text, text_elements: [] }];
}

/** The `thread/start` params for a spec (also the overrides `thread/resume` sends). */
export function planThread(spec: Spec, options: PlanOptions = {}): ThreadStartParams {
  const permissions = codexPermissions(
    spec.permissionMode,
    spec.sandbox,
    options.allowBypass ?? false,
  );
  const config: Record<string, unknown> = {};
  for (const [name, server] of Object.entries(spec.mcpServers ?? {})) {
    config[`mcp_servers.${name}`] = mcpServerConfig(server);
  }
  if (spec.env && Object.keys(spec.env).length > 0) {
    config["shell_environment_policy.set"] = { ...spec.env };
  }
  return {
    cwd: spec.cwd,
    ...permissions,
    ...(spec.model !== undefined && { model: spec.model }),
    ...(spec.baseInstructions !== undefined && { baseInstructions: spec.baseInstructions }),
    ...(spec.developerInstructions !== undefined &&
      { developerInstructions: spec.developerInstructions }),
    ...(Object.keys(config).length > 0 && { config }),
  };
}

/** The params of a turn (first or follow-up) carrying `prompt`. */
export function planTurn(spec: Spec, prompt: string): Omit<TurnStartParams, "threadId"> {
  return {
    input: textInput(prompt),
    ...(spec.reasoningEffort !== undefined && { effort: spec.reasoningEffort }),
  };
}

export function planSpawn(spec: Spec, options: PlanOptions = {}): SpawnPlan {
  const ignoredFields: IgnoredField[] = [];
  for (const [field, handling] of Object.entries(SPEC_FIELD_HANDLING)) {
    if ("reason" in handling && spec[field as keyof Spec] !== undefined) {
      ignoredFields.push({ field: field as keyof Spec, reason: handling.reason });
    }
  }
  const daemonServers = options.daemonMcpServers ?? {};
  return {
    threadStart: planThread(spec, options),
    firstTurn: planTurn(spec, spec.prompt),
    ...(Object.keys(daemonServers).length > 0 && {
      mcpConfigEdit: mcpBatchWrite(daemonServers),
    }),
    ignoredFields,
  };
}

/** `config/batchWrite` params replacing codex's `mcp_servers` table (keyPath is the TOML name). */
export function mcpBatchWrite(servers: Record<string, McpServer>): ConfigBatchWriteParams {
  const value = Object.fromEntries(
    Object.entries(servers).map(([name, server]) => [name, mcpServerConfig(server)]),
  );
  return {
    edits: [{ keyPath: "mcp_servers", value, mergeStrategy: "replace" }],
    reloadUserConfig: true,
  };
}

function mcpServerConfig(server: McpServer): Record<string, unknown> {
  return {
    command: server.command,
    args: server.args,
    ...(Object.keys(server.env).length > 0 && { env: server.env }),
  };
}

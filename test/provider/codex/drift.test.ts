import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { resolveCodexBinary } from "../../../src/provider/codex/binary.ts";
import {
  checkProtocolDrift,
  generateSchema,
  loadSchemaDir,
  type SchemaDocuments,
} from "../../../src/provider/codex/drift.ts";
import { PROTOCOL_USAGE, type ProtocolUsage } from "../../../src/provider/codex/protocol-usage.ts";
import { METHOD_RESULTS } from "../../../src/provider/codex/results.ts";

let schemaDir: string;
let documents: SchemaDocuments;

beforeAll(async () => {
  schemaDir = await mkdtemp(path.join(tmpdir(), "codexd-schema-"));
  const codex = await resolveCodexBinary({ searchFrom: [import.meta.dir] });
  await generateSchema(codex.path, schemaDir);
  documents = await loadSchemaDir(schemaDir);
});

afterAll(async () => {
  await rm(schemaDir, { recursive: true, force: true });
});

/** PROTOCOL_USAGE with one client request's lists changed. */
function withClientRequest(
  method: string,
  change: { method?: string; params?: string[]; result?: string[] },
): ProtocolUsage {
  return {
    ...PROTOCOL_USAGE,
    clientRequests: PROTOCOL_USAGE.clientRequests.map((use) =>
      use.method === method
        ? {
          ...use,
          method: change.method ?? use.method,
          params: [...use.params, ...(change.params ?? [])],
          result: [...use.result, ...(change.result ?? [])],
        }
        : use
    ),
  };
}

describe("protocol drift against the pinned codex", () => {
  test("the generated schema has the method files the check reads", () => {
    for (const file of ["ClientRequest.json", "ServerNotification.json", "ServerRequest.json"]) {
      expect(Object.keys(documents)).toContain(file);
    }
  });

  test("codexd's protocol usage has no drift", async () => {
    const report = await checkProtocolDrift(schemaDir);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  test("a feature on by default that codexd neither pins nor knows is a problem", async () => {
    // As a newer codex turning `apps` on would look: the known list without it.
    const report = await checkProtocolDrift(documents, {
      ...PROTOCOL_USAGE,
      defaultOnKnown: PROTOCOL_USAGE.defaultOnKnown!.filter((name) => name !== "apps"),
    });
    expect(report.problems).toEqual([
      expect.stringMatching(/^feature "apps" \(\w[^)]*\) is on by default in this codex/),
    ]);
    // A pinned one is governed whatever its default: `goals` is pinned off and on by default.
    expect(PROTOCOL_USAGE.features).toContain("goals");
    const pinned = await checkProtocolDrift(documents, {
      ...PROTOCOL_USAGE,
      defaultOnKnown: PROTOCOL_USAGE.defaultOnKnown!.filter((name) => name !== "goals"),
    });
    expect(pinned.problems).toEqual([]);
  });

  test("a misspelt param is reported by name with a suggestion", async () => {
    const report = await checkProtocolDrift(
      documents,
      withClientRequest("turn/start", { params: ["reasoningEffort"] }),
    );
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      'turn/start params: field "reasoningEffort" does not exist (did you mean "effort"?)',
    ]);
  });

  test("a result field that is not there (threadId on thread/start) is reported", async () => {
    const report = await checkProtocolDrift(
      documents,
      withClientRequest("thread/start", { result: ["threadId", "thread.idd"] }),
    );
    expect(report.problems).toEqual([
      'thread/start result: field "threadId" does not exist (did you mean "thread"?)',
      'thread/start result: field "thread.idd" does not exist (no "idd" in "thread") (did you mean "id"?)',
    ]);
  });

  test("a renamed method is reported with the nearest real one", async () => {
    const report = await checkProtocolDrift(
      documents,
      withClientRequest("turn/interrupt", { method: "turn/interupt" }),
    );
    expect(report.problems).toEqual([
      'client request "turn/interupt" does not exist (did you mean "turn/interrupt"?)',
    ]);
  });

  test("a notification field, an answer value and an array step are checked", async () => {
    const usage: ProtocolUsage = {
      ...PROTOCOL_USAGE,
      serverNotifications: [{ method: "turn/completed", params: ["turn.errors"] }],
      serverRequests: [{
        method: "item/fileChange/requestApproval",
        params: ["threadId[]"],
        result: [{ path: "decision", values: ["accept", "approve"] }],
      }],
    };
    const report = await checkProtocolDrift(documents, usage);
    expect(report.problems).toEqual([
      'notification turn/completed params: field "turn.errors" does not exist (no "errors" in "turn") (did you mean "error"?)',
      'server request item/fileChange/requestApproval params: field "threadId[]": "threadId" is not an array',
      'server request item/fileChange/requestApproval result: field "decision": value "approve" is not allowed',
    ]);
  });

  test("a value codexd accepts but this codex does not send is a note, not a problem", async () => {
    const usage: ProtocolUsage = {
      ...PROTOCOL_USAGE,
      serverRequests: [{
        method: "item/commandExecution/requestApproval",
        params: [{ path: "kind", values: ["command"], accepts: ["typedByAGhost"] }],
        result: [],
      }],
    };
    const report = await checkProtocolDrift(documents, usage);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.notes).toEqual([
      'server request item/commandExecution/requestApproval params: field "kind": value "typedByAGhost" is accepted, not used',
    ]);
    // The same value in `values` (codexd depends on it) is a problem.
    const needed = await checkProtocolDrift(documents, {
      ...usage,
      serverRequests: [{
        ...usage.serverRequests[0],
        params: [{ path: "kind", values: ["typedByAGhost"] }],
      }],
    });
    expect(needed.ok).toBe(false);
    expect(needed.notes).toEqual([]);
  });

  test("a result type named explicitly must exist", async () => {
    const usage: ProtocolUsage = {
      ...PROTOCOL_USAGE,
      clientRequests: [{
        method: "config/batchWrite",
        params: [],
        result: [],
        resultType: "ConfigBatchWriteResponse",
      }],
    };
    const report = await checkProtocolDrift(documents, usage);
    expect(report.problems).toEqual([
      "config/batchWrite result: type ConfigBatchWriteResponse not found in the schema",
    ]);
  });

  test("a schema folder without the method files is reported, not thrown", async () => {
    const report = await checkProtocolDrift({}, PROTOCOL_USAGE);
    expect(report.ok).toBe(false);
    expect(report.problems).toContain(
      "schema has no ClientRequest.json: cannot check client requests",
    );
  });

  test("generateSchema names the binary when it cannot run", async () => {
    await expect(generateSchema("/nonexistent/codex", schemaDir)).rejects.toThrow(
      /Cannot generate the codex protocol schema with \/nonexistent\/codex/,
    );
  });
});

/** Every field path a zod object schema names (`thread.id`), each with whether it is required. */
function resultFields(schema: z.ZodType): Array<{ path: string; required: boolean }> {
  const fields: Array<{ path: string; required: boolean }> = [];
  const walk = (node: Record<string, unknown>, prefix: string) => {
    const required = new Set((node.required as string[] | undefined) ?? []);
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      fields.push({ path: prefix + name, required: required.has(name) });
      walk(child as Record<string, unknown>, `${prefix}${name}.`);
    }
  };
  walk(z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>, "");
  return fields;
}

/** The schema node of `typeName`, and its document (where its `$ref`s resolve). */
function schemaType(typeName: string): { root: Record<string, unknown>; node: unknown } {
  const file = Object.keys(documents).find((f) => path.posix.basename(f) === `${typeName}.json`);
  if (!file) throw new Error(`no ${typeName}.json in the generated schema`);
  const root = documents[file] as Record<string, unknown>;
  return { root, node: root };
}

/** Whether codex's schema requires the field at `fieldPath` of `typeName`. */
function codexRequires(typeName: string, fieldPath: string): boolean {
  const { root } = schemaType(typeName);
  const definitions = (root.definitions ?? {}) as Record<string, Record<string, unknown>>;
  let node = root;
  const names = fieldPath.split(".");
  for (const [i, name] of names.entries()) {
    while (typeof node.$ref === "string") node = definitions[node.$ref.split("/").pop()!]!;
    if (!((node.required as string[] | undefined) ?? []).includes(name)) return false;
    if (i < names.length - 1) node = (node.properties as Record<string, never>)[name];
  }
  return true;
}

describe("result schemas (results.ts) against the pinned codex", () => {
  const responseType = (method: string): string => {
    const use = PROTOCOL_USAGE.clientRequests.find((u) => u.method === method);
    if (use?.resultType) return use.resultType;
    const requests = documents["ClientRequest.json"] as {
      oneOf: Array<{ properties: { method: { enum: string[] }; params?: { $ref?: string } } }>;
    };
    const variant = requests.oneOf.find((v) => v.properties.method.enum.includes(method));
    return variant!.properties.params!.$ref!.split("/").pop()!.replace(/Params$/, "Response");
  };

  test("every method codexd calls has a result schema", () => {
    expect(Object.keys(METHOD_RESULTS).sort()).toEqual(
      PROTOCOL_USAGE.clientRequests.map((use) => use.method).sort(),
    );
  });

  test("every field a result schema reads exists in codex's result type", async () => {
    const usage: ProtocolUsage = {
      clientRequests: Object.entries(METHOD_RESULTS).map(([method, schema]) => ({
        method,
        params: [],
        result: resultFields(schema).map((field) => field.path),
        resultType: responseType(method),
      })),
      clientNotifications: [],
      serverNotifications: [],
      serverRequests: [],
    };
    const report = await checkProtocolDrift(documents, usage);
    expect(report.problems).toEqual([]);
  });

  test("a field a result schema requires is one codex always sends", () => {
    const loose: string[] = [];
    for (const [method, schema] of Object.entries(METHOD_RESULTS)) {
      for (const field of resultFields(schema)) {
        if (field.required && !codexRequires(responseType(method), field.path)) {
          loose.push(`${method}: ${field.path}`);
        }
      }
    }
    expect(loose).toEqual([]);
  });
});

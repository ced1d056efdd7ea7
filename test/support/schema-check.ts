/**
 * Checks a test's hand-written codex payload against the JSON schema the pinned codex generates,
 * so table tests use the shapes codex really sends. A small validator: `$ref` (local), `type`,
 * `enum`, `required`, `properties`, `items`, `oneOf`/`anyOf`/`allOf`; enough for codex's schema.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { resolveCodexBinary } from "../../src/provider/codex/binary.ts";
import { generateSchema } from "../../src/provider/codex/drift.ts";

type Schema = Record<string, unknown> | boolean;

interface MethodFile {
  definitions: Record<string, Schema>;
  oneOf: Array<{ properties: { method: { enum: string[] }; params?: Schema } }>;
}

export interface CodexSchema {
  /** Problems with `params` as the params of notification `method` (empty: it conforms). */
  notification(method: string, params: unknown): string[];
  /** Problems with `params` as the params of server request `method`. */
  serverRequest(method: string, params: unknown): string[];
}

/** Generates the pinned codex's schema into a temporary folder and reads the method files. */
export async function loadCodexSchema(): Promise<CodexSchema> {
  const dir = await mkdtemp(path.join(tmpdir(), "codexd-schema-"));
  try {
    const codex = await resolveCodexBinary({ searchFrom: [import.meta.dir] });
    await generateSchema(codex.path, dir);
    const read = async (file: string) =>
      JSON.parse(await readFile(path.join(dir, file), "utf8")) as MethodFile;
    const notifications = await read("ServerNotification.json");
    const requests = await read("ServerRequest.json");
    return {
      notification: (method, params) => checkParams(notifications, method, params),
      serverRequest: (method, params) => checkParams(requests, method, params),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function checkParams(file: MethodFile, method: string, params: unknown): string[] {
  const variant = file.oneOf.find((v) => v.properties.method.enum.includes(method));
  if (!variant) return [`no method ${method} in the schema`];
  return validate(variant.properties.params ?? {}, params, "params", file.definitions);
}

function validate(
  schema: Schema,
  value: unknown,
  at: string,
  definitions: Record<string, Schema>,
  open = false,
): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${at}: not allowed`];
  const ref = schema.$ref as string | undefined;
  if (ref) {
    const target = definitions[ref.replace("#/definitions/", "")];
    return target === undefined
      ? [`${at}: unknown ${ref}`]
      : validate(target, value, at, definitions, open);
  }
  const problems: string[] = [];
  const types = schema.type === undefined
    ? undefined
    : ([] as string[]).concat(schema.type as string | string[]);
  if (types && !types.some((t) => hasType(value, t))) {
    return [`${at}: ${JSON.stringify(value)} is not ${types.join("|")}`];
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    problems.push(`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`);
  }
  // Branches of an object that declares fields of its own each describe only part of it.
  const partial = open || schema.properties !== undefined;
  for (const key of ["oneOf", "anyOf"] as const) {
    const options = schema[key] as Schema[] | undefined;
    if (
      options && !options.some((o) => validate(o, value, at, definitions, partial).length === 0)
    ) {
      problems.push(`${at}: matches none of ${key}`);
    }
  }
  for (const part of (schema.allOf as Schema[] | undefined) ?? []) {
    problems.push(...validate(part, value, at, definitions, partial));
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    for (const name of (schema.required as string[] | undefined) ?? []) {
      if (!(name in value)) problems.push(`${at}.${name}: required`);
    }
    for (const [name, field] of Object.entries(value)) {
      if (name in properties) {
        problems.push(...validate(properties[name]!, field, `${at}.${name}`, definitions));
      } else if (
        !open && schema.properties && schema.additionalProperties === undefined &&
        !schema.oneOf && !schema.anyOf
      ) {
        // codex's types are closed: an extra field here is a field codex does not send.
        problems.push(`${at}.${name}: not in the schema`);
      }
    }
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) =>
      problems.push(...validate(schema.items as Schema, item, `${at}[${i}]`, definitions))
    );
  }
  return problems;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "integer":
      return Number.isInteger(value);
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    default:
      return false;
  }
}

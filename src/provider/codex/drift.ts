/**
 * Protocol drift check: does the installed codex still have every method and field codexd uses
 * (protocol-usage.ts)? Reads the JSON schema `codex app-server generate-json-schema` writes and
 * reports each missing method, field or value by name, with a suggestion when a near name exists:
 *
 *   turn/start params: field "reasoningEffort" does not exist (did you mean "effort"?)
 *
 * The feature flags codexd pins (plan.ts `PINNED_FEATURES`) are not in the schema: generateSchema
 * also writes what `codex features list` prints into the same folder (FEATURES_FILE), and the
 * check reports a pinned feature that is missing or removed.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { errorMessage, ProviderUnavailable } from "../../errors.ts";
import {
  type FieldList,
  type FieldUse,
  PROTOCOL_USAGE,
  type ProtocolUsage,
} from "./protocol-usage.ts";

/** Schema files by path relative to the schema folder ("ClientRequest.json", "v2/X.json"). */
export type SchemaDocuments = Readonly<Record<string, unknown>>;

export interface DriftReport {
  /** No problems (notes do not count). */
  ok: boolean;
  problems: string[];
  /** What codexd accepts but this codex does not use (`FieldUse.accepts`): not problems. */
  notes: string[];
}

/** The file generateSchema writes the installed codex's feature flags to (beside the schema). */
export const FEATURES_FILE = "codexd-codex-features.json";

/** One line of `codex features list`. */
export interface CodexFeature {
  name: string;
  /** `stable`, `experimental`, `under development`, `deprecated`, `removed`, … */
  stage: string;
  enabled: boolean;
}

/**
 * Writes codex's JSON schema into `outDir` (`codex app-server generate-json-schema`), and its
 * feature flags (`codex features list`) into `outDir/FEATURES_FILE`. A codex without the
 * `features` command gets no feature file; the check then reports that it cannot check them.
 */
export async function generateSchema(
  codexBin: string,
  outDir: string,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<void> {
  // --experimental: codexd opts into the experimental API (initialize), so its fields are part
  // of the protocol it speaks.
  await runCodex(
    codexBin,
    ["app-server", "generate-json-schema", "--experimental", "--out", outDir],
    options,
  )
    .catch((error: unknown) => {
      throw new ProviderUnavailable(
        `Cannot generate the codex protocol schema with ${codexBin}: ${errorMessage(error)}`,
        { cause: error },
      );
    });
  const features = await listCodexFeatures(codexBin, options).catch(() => undefined);
  if (features) {
    await writeFile(path.join(outDir, FEATURES_FILE), JSON.stringify({ features }, null, 2));
  }
}

/**
 * The feature flags of the installed codex (`codex features list`, run on an empty CODEX_HOME
 * of its own so no configuration colours the answer; the folder is removed after).
 */
export async function listCodexFeatures(
  codexBin: string,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<CodexFeature[]> {
  const home = await mkdtemp(path.join(tmpdir(), "codexd-features-"));
  try {
    const stdout = await runCodex(codexBin, ["features", "list"], options, { CODEX_HOME: home });
    return parseFeatureList(stdout);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** `name  stage words  true|false` lines; anything else is skipped. */
export function parseFeatureList(text: string): CodexFeature[] {
  const features: CodexFeature[] = [];
  for (const line of text.split("\n")) {
    const match = /^(\S+)\s+(.*?)\s+(true|false)\s*$/.exec(line.trim());
    if (match) features.push({ name: match[1], stage: match[2], enabled: match[3] === "true" });
  }
  return features;
}

function runCodex(
  codexBin: string,
  args: string[],
  options: { signal?: AbortSignal; timeoutMs?: number },
  env: Record<string, string> = {},
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile(
      codexBin,
      args,
      {
        signal: options.signal,
        timeout: options.timeoutMs ?? 30_000,
        // Neither command needs configuration; keep the daemon's environment out of them.
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", RUST_LOG: "error", ...env },
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        reject(
          new Error(
            errorMessage(error) +
              (stderr.trim() ? `; stderr: ${stderr.trim().slice(-2000)}` : ""),
            { cause: error },
          ),
        );
      },
    );
  });
}

/** Reads every *.json file under `dir` (recursively). */
export async function loadSchemaDir(dir: string): Promise<SchemaDocuments> {
  const documents: Record<string, unknown> = {};
  const files = await readdir(dir, { recursive: true });
  for (const file of files) {
    if (!file.endsWith(".json")) continue;
    const text = await readFile(path.join(dir, file), "utf8");
    try {
      documents[file.split(path.sep).join("/")] = JSON.parse(text);
    } catch (error) {
      throw new Error(`Cannot read schema ${path.join(dir, file)}: ${errorMessage(error)}`);
    }
  }
  return documents;
}

/** Checks `usage` against a schema folder or already loaded schema documents. */
export async function checkProtocolDrift(
  schema: string | SchemaDocuments,
  usage: ProtocolUsage = PROTOCOL_USAGE,
): Promise<DriftReport> {
  const documents = typeof schema === "string" ? await loadSchemaDir(schema) : schema;
  const notes: string[] = [];
  const problems = new DriftChecker(documents).check(usage, notes);
  return { ok: problems.length === 0, problems, notes };
}

// ---------------------------------------------------------------------------------------------

/** The parts of a JSON schema node the check reads; everything else passes through. */
const SchemaNode = z.looseObject({
  $ref: z.string().optional(),
  type: z.union([z.string(), z.array(z.string())]).optional(),
  properties: z.record(z.string(), z.unknown()).optional(),
  items: z.unknown().optional(),
  anyOf: z.array(z.unknown()).optional(),
  oneOf: z.array(z.unknown()).optional(),
  allOf: z.array(z.unknown()).optional(),
  enum: z.array(z.unknown()).optional(),
  const: z.unknown().optional(),
  title: z.string().optional(),
  definitions: z.record(z.string(), z.unknown()).optional(),
});
type SchemaNode = z.infer<typeof SchemaNode>;

const FeatureListDocument = z.object({
  features: z.array(z.object({ name: z.string(), stage: z.string(), enabled: z.boolean() })),
});

/** A schema node and the document its `$ref`s resolve in. */
interface Located {
  root: unknown;
  node: unknown;
}

/** One alternative a value may take, after refs and unions are expanded. */
type Shape =
  | { kind: "object"; properties: Record<string, Located>; open: boolean }
  | { kind: "array"; items: Located | undefined }
  | { kind: "string"; values: string[] | undefined }
  | { kind: "open" }
  | { kind: "other" };

interface MethodEntry {
  params: Located | undefined;
  /** The type name of the params ($ref's last segment), to find the matching Response. */
  paramsType: string | undefined;
}

const METHOD_GROUPS = {
  clientRequests: { file: "ClientRequest.json", label: "client request" },
  clientNotifications: { file: "ClientNotification.json", label: "client notification" },
  serverNotifications: { file: "ServerNotification.json", label: "notification" },
  serverRequests: { file: "ServerRequest.json", label: "server request" },
} as const;

class DriftChecker {
  readonly #documents: SchemaDocuments;
  readonly #types = new Map<string, Located>();
  #notes: string[] = [];

  constructor(documents: SchemaDocuments) {
    this.#documents = documents;
    // Type index for results: each file's root by file name, then every definition.
    for (const [file, root] of Object.entries(documents)) {
      this.#types.set(path.posix.basename(file, ".json"), { root, node: root });
    }
    for (const root of Object.values(documents)) this.#indexDefinitions(root, root);
  }

  check(usage: ProtocolUsage, notes: string[]): string[] {
    const problems: string[] = [];
    this.#notes = notes;
    this.#checkFeatures(usage.features ?? [], problems);
    this.#checkDefaultOn(usage, problems);
    for (const group of Object.keys(METHOD_GROUPS) as Array<keyof typeof METHOD_GROUPS>) {
      const { file, label } = METHOD_GROUPS[group];
      const methods = this.#methods(file);
      if (!methods) {
        problems.push(`schema has no ${file}: cannot check ${label}s`);
        continue;
      }
      for (const use of usage[group]) {
        const entry = methods.get(use.method);
        const unlisted = "paramsType" in use ? use.paramsType : undefined;
        if (!entry && unlisted !== undefined) {
          const type = this.#types.get(unlisted);
          if (type) this.#checkFields(`${label} ${use.method} params`, type, use.params, problems);
          else problems.push(`${label} "${use.method}": type ${unlisted} not found in the schema`);
          continue;
        }
        if (!entry) {
          problems.push(
            `${label} "${use.method}" does not exist${suggest(use.method, [...methods.keys()])}`,
          );
          continue;
        }
        const prefix = group === "clientRequests" ? use.method : `${label} ${use.method}`;
        this.#checkFields(`${prefix} params`, entry.params, use.params, problems);
        if (!("result" in use)) continue;
        const resultType = use.resultType ?? entry.paramsType?.replace(/Params$/, "Response");
        const result = resultType ? this.#types.get(resultType) : undefined;
        if (!result) {
          if (use.result.length > 0 || use.resultType) {
            problems.push(
              `${prefix} result: type ${resultType ?? "(unnamed)"} not found in the schema`,
            );
          }
          continue;
        }
        this.#checkFields(`${prefix} result`, result, use.result, problems);
      }
    }
    return problems;
  }

  #checkFeatures(pinned: readonly string[], problems: string[]): void {
    if (pinned.length === 0) return;
    const parsed = FeatureListDocument.safeParse(this.#documents[FEATURES_FILE]);
    if (!parsed.success) {
      problems.push(
        `no feature list (${FEATURES_FILE} from \`codex features list\`): cannot check the ` +
          `pinned features ${pinned.join(", ")}`,
      );
      return;
    }
    const known = new Map(parsed.data.features.map((f) => [f.name, f]));
    for (const name of pinned) {
      const feature = known.get(name);
      if (!feature) {
        problems.push(`feature "${name}" does not exist${suggest(name, [...known.keys()])}`);
      } else if (/removed/i.test(feature.stage)) {
        problems.push(`feature "${name}" is ${feature.stage}: pinning it has no effect`);
      }
    }
  }

  /** A feature on by default that codexd neither pins nor knows from the reviewed codex. */
  #checkDefaultOn(usage: ProtocolUsage, problems: string[]): void {
    if (!usage.defaultOnKnown) return;
    const parsed = FeatureListDocument.safeParse(this.#documents[FEATURES_FILE]);
    if (!parsed.success) return; // #checkFeatures already says the list is missing
    const known = new Set([...usage.defaultOnKnown, ...usage.features ?? []]);
    for (const feature of parsed.data.features) {
      if (!feature.enabled || known.has(feature.name)) continue;
      problems.push(
        `feature "${feature.name}" (${feature.stage}) is on by default in this codex and was not ` +
          "in the codex codexd was reviewed against: find out what it does, then pin it " +
          "(plan.ts PINNED_FEATURES) or add it to feature-baseline.ts",
      );
    }
  }

  #indexDefinitions(root: unknown, container: unknown): void {
    const parsed = SchemaNode.safeParse(container);
    if (!parsed.success || !parsed.data.definitions) return;
    for (const [name, node] of Object.entries(parsed.data.definitions)) {
      if (!this.#types.has(name)) this.#types.set(name, { root, node });
      // Some files nest a namespace of definitions (`#/definitions/v2/X`).
      if (/^v\d+$/.test(name)) this.#indexNamespace(root, node);
    }
  }

  #indexNamespace(root: unknown, namespace: unknown): void {
    const parsed = z.record(z.string(), z.unknown()).safeParse(namespace);
    if (!parsed.success) return;
    for (const [name, node] of Object.entries(parsed.data)) {
      if (!this.#types.has(name)) this.#types.set(name, { root, node });
    }
  }

  #methods(file: string): Map<string, MethodEntry> | undefined {
    const root = this.#documents[file];
    const parsed = SchemaNode.safeParse(root);
    if (!parsed.success || !parsed.data.oneOf) return undefined;
    const methods = new Map<string, MethodEntry>();
    for (const variant of parsed.data.oneOf) {
      const v = SchemaNode.safeParse(variant);
      if (!v.success) continue;
      const method = SchemaNode.safeParse(v.data.properties?.method);
      const name = method.success ? method.data.enum?.[0] ?? method.data.const : undefined;
      if (typeof name !== "string") continue;
      const params = v.data.properties?.params;
      methods.set(name, {
        params: params === undefined ? undefined : { root, node: params },
        paramsType: params === undefined ? undefined : refName(params),
      });
    }
    return methods;
  }

  #checkFields(
    where: string,
    start: Located | undefined,
    fields: FieldList,
    problems: string[],
  ): void {
    for (const field of fields) {
      const use: FieldUse = typeof field === "string" ? { path: field } : field;
      const problem = start
        ? this.#checkField(start, use, (note) => this.#notes.push(`${where}: ${note}`))
        : `field "${use.path}" does not exist (there are no params)`;
      if (problem) problems.push(`${where}: ${problem}`);
    }
  }

  /** Walks `use.path` from `start`; returns a problem or undefined. */
  #checkField(start: Located, use: FieldUse, note: (text: string) => void): string | undefined {
    let current: Located[] = [start];
    const segments = use.path.split(".");
    for (const [index, segment] of segments.entries()) {
      const match = /^(.*?)((?:\[\])*)$/.exec(segment)!;
      const name = match[1];
      const arrayDepth = match[2].length / 2;
      const shapes = this.#shapes(current);
      if (shapes.some((s) => s.kind === "open" || (s.kind === "object" && s.open))) {
        if (!shapes.some((s) => s.kind === "object" && name in s.properties)) return undefined;
      }
      const next: Located[] = [];
      const known = new Set<string>();
      for (const shape of shapes) {
        if (shape.kind !== "object") continue;
        for (const key of Object.keys(shape.properties)) known.add(key);
        if (name in shape.properties) next.push(shape.properties[name]);
      }
      if (next.length === 0) {
        const parent = segments.slice(0, index).join(".");
        const where = parent ? ` (no "${name}" in "${parent}")` : "";
        return `field "${use.path}" does not exist${where}${suggest(name, [...known])}`;
      }
      current = next;
      for (let depth = 0; depth < arrayDepth; depth++) {
        const items: Located[] = [];
        const itemShapes = this.#shapes(current);
        if (itemShapes.some((s) => s.kind === "open")) return undefined;
        for (const shape of itemShapes) {
          if (shape.kind === "array" && shape.items) items.push(shape.items);
        }
        if (items.length === 0) return `field "${use.path}": "${name}" is not an array`;
        current = items;
      }
    }
    return use.values || use.accepts ? this.#checkValues(current, use, note) : undefined;
  }

  #checkValues(nodes: Located[], use: FieldUse, note: (text: string) => void): string | undefined {
    const shapes = this.#shapes(nodes);
    if (shapes.some((s) => s.kind === "open" || (s.kind === "string" && !s.values))) {
      return undefined;
    }
    const allowed = new Set<string>();
    for (const shape of shapes) {
      if (shape.kind === "string") { for (const value of shape.values ?? []) allowed.add(value); }
    }
    for (const value of use.accepts ?? []) {
      if (!allowed.has(value)) note(`field "${use.path}": value "${value}" is accepted, not used`);
    }
    const missing = (use.values ?? []).filter((value) => !allowed.has(value));
    if (missing.length === 0) return undefined;
    return missing.map((value) =>
      `field "${use.path}": value "${value}" is not allowed${suggest(value, [...allowed])}`
    ).join("; ");
  }

  /** Expands refs and unions into the alternatives a value may take. */
  #shapes(nodes: Located[]): Shape[] {
    const shapes: Shape[] = [];
    const seen = new Set<unknown>();
    const visit = (located: Located, depth: number): void => {
      if (depth > 64 || seen.has(located.node)) return;
      seen.add(located.node);
      if (located.node === true) return void shapes.push({ kind: "open" });
      const parsed = SchemaNode.safeParse(located.node);
      if (!parsed.success) return;
      const node = parsed.data;
      if (node.$ref) {
        const target = resolvePointer(located.root, node.$ref) ??
          this.#types.get(node.$ref.split("/").pop()!)?.node;
        if (target !== undefined) visit({ root: located.root, node: target }, depth + 1);
      }
      for (const member of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) {
        visit({ root: located.root, node: member }, depth + 1);
      }
      const own = ownShape(located.root, node);
      if (own) shapes.push(own);
    };
    for (const located of nodes) visit(located, 0);
    return shapes;
  }
}

/** The shape a node declares itself (besides its refs and unions), if any. */
function ownShape(root: unknown, node: SchemaNode): Shape | undefined {
  const types = node.type === undefined ? [] : [node.type].flat();
  const hasUnion = node.$ref || node.anyOf || node.oneOf || node.allOf;
  const strings = [...(node.enum ?? []), ...(node.const !== undefined ? [node.const] : [])]
    .filter((v): v is string => typeof v === "string");
  if (node.enum || node.const !== undefined) return { kind: "string", values: strings };
  if (node.properties) {
    const properties: Record<string, Located> = {};
    for (const [key, value] of Object.entries(node.properties)) {
      properties[key] = { root, node: value };
    }
    const additional = (node as Record<string, unknown>).additionalProperties;
    return { kind: "object", properties, open: additional !== undefined && additional !== false };
  }
  if (types.includes("array")) {
    return {
      kind: "array",
      items: node.items === undefined ? undefined : { root, node: node.items },
    };
  }
  if (types.includes("string")) return { kind: "string", values: undefined };
  if (types.includes("object")) return { kind: "open" };
  if (types.length > 0) return { kind: "other" };
  // No type, no properties, no union: a free-form value (`{}` or only a description).
  return hasUnion ? undefined : { kind: "open" };
}

function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The type name a params schema refers to (also through `anyOf [ref, null]`). */
function refName(node: unknown): string | undefined {
  const parsed = SchemaNode.safeParse(node);
  if (!parsed.success) return undefined;
  if (parsed.data.$ref) return parsed.data.$ref.split("/").pop();
  for (const member of [...(parsed.data.anyOf ?? []), ...(parsed.data.oneOf ?? [])]) {
    const name = refName(member);
    if (name) return name;
  }
  return undefined;
}

/** " (did you mean "x"?)" for the nearest candidate, or "". */
export function suggest(wanted: string, candidates: readonly string[]): string {
  const w = wanted.toLowerCase();
  let best: { name: string; score: number } | undefined;
  for (const name of candidates) {
    const c = name.toLowerCase();
    let score: number;
    if (c === w) score = 0;
    else if (c.length >= 3 && w.length >= 3 && (w.includes(c) || c.includes(w))) score = 1;
    else {
      const distance = levenshtein(w, c);
      if (distance > Math.max(2, Math.floor(w.length / 3))) continue;
      score = 1 + distance;
    }
    if (!best || score < best.score) best = { name, score };
  }
  return best ? ` (did you mean "${best.name}"?)` : "";
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j] + 1,
        row[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length];
}

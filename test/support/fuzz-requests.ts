/**
 * Seeded random and mutated requests across every route, shared by the app-level fuzz test
 * (fake service) and the real-daemon one. A failure reproduces with its seed.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

/** An existing folder that specs may name as cwd. */
export const CWD = mkdtempSync(join(tmpdir(), "codexd-fuzz-"));
/** A value that must never be echoed back. */
export const SECRET = "FUZZ-SECRET-VALUE";

/** mulberry32: small, fast, seedable. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Gen {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  string(): string {
    const alphabets = ["abc", "../", '\u0000\n\r\t"\\', "é漢😀\u202e", "%00%2F%E0%A4%A", "{}[]:,"];
    const alphabet = this.pick(alphabets);
    const length = this.pick([0, 1, 5, 40, 300]);
    return Array.from({ length }, () => alphabet[this.int(alphabet.length)]).join("");
  }
  value(depth = 0): unknown {
    const kind = this.int(depth > 2 ? 6 : 9);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 7 * 24 * 3600_000 + 1]);
      case 3:
      case 4:
        return this.string();
      case 5:
        return this.pick(["/", CWD, "/no/such", "relative", "default", "allow", "deny", "ask"]);
      case 6:
        return Array.from({ length: this.int(4) }, () => this.value(depth + 1));
      default: {
        const obj: Record<string, unknown> = {};
        for (let i = this.int(4); i > 0; i--) obj[this.pick(KEYS)] = this.value(depth + 1);
        return obj;
      }
    }
  }
}

const KEYS = [
  "prompt",
  "cwd",
  "model",
  "env",
  "policy",
  "permissionMode",
  "permissionConfig",
  "mcpServers",
  "timeoutMs",
  "onBusy",
  "metadata",
  "sandbox",
  "reasoningEffort",
  "text",
  "decision",
  "command",
  "paths",
  "__proto__",
  "constructor",
  "",
  "allowPatterns",
  "args",
];

export const VALID_BODIES: Record<string, () => Record<string, unknown>> = {
  spec: () => ({
    prompt: "hello",
    cwd: CWD,
    env: { API_KEY: SECRET },
    permissionConfig: { allowPatterns: ["npm test"] },
    mcpServers: { echo: { command: "node", env: { TOKEN: SECRET } } },
    metadata: { a: 1 },
  }),
  turn: () => ({ prompt: "more" }),
  inject: () => ({ text: "steer" }),
  answer: () => ({ decision: "allow" }),
  evaluate: () => ({ policy: "default", command: "ls -la" }),
  evaluatePaths: () => ({ policy: "default", paths: ["/w/a"], cwd: "/w" }),
};

export function mutate(g: Gen, body: Record<string, unknown>): unknown {
  const copy: Record<string, unknown> = structuredClone(body);
  const keys = Object.keys(copy);
  for (let i = 1 + g.int(3); i > 0; i--) {
    switch (g.int(6)) {
      case 0:
        delete copy[g.pick(keys)];
        break;
      case 1:
        copy[g.pick(keys)] = g.value();
        break;
      case 2:
        copy[g.pick(KEYS)] = g.value();
        break;
      case 3:
        if (copy.env !== undefined) copy.env = { [g.pick(["OK", "1BAD", "", "a-b"])]: SECRET };
        break;
      case 4:
        return g.pick([[copy], g.value(), "string", 42, null]);
      default:
        copy[g.pick(keys)] = g.pick(["", " ", "x".repeat(10_000), [], {}]);
    }
  }
  return copy;
}

const ROUTES: Array<{ method: string; path: string; body?: keyof typeof VALID_BODIES }> = [
  { method: "GET", path: "/v1/health" },
  { method: "GET", path: "/v1/capabilities" },
  { method: "POST", path: "/v1/sessions", body: "spec" },
  { method: "GET", path: "/v1/sessions" },
  { method: "GET", path: "/v1/sessions/{id}" },
  { method: "DELETE", path: "/v1/sessions/{id}" },
  { method: "POST", path: "/v1/sessions/{id}/turns", body: "turn" },
  { method: "POST", path: "/v1/sessions/{id}/resume", body: "spec" },
  { method: "POST", path: "/v1/sessions/{id}/inject", body: "inject" },
  { method: "POST", path: "/v1/sessions/{id}/interrupt" },
  { method: "GET", path: "/v1/sessions/{id}/events" },
  { method: "GET", path: "/v1/sessions/{id}/approvals" },
  { method: "POST", path: "/v1/sessions/{id}/approvals/{rid}", body: "answer" },
  { method: "GET", path: "/v1/policies" },
  { method: "POST", path: "/v1/policies/reload" },
  { method: "POST", path: "/v1/policies/evaluate", body: "evaluate" },
  { method: "POST", path: "/v1/policies/evaluate", body: "evaluatePaths" },
  { method: "POST", path: "/v1/shutdown" },
  { method: "GET", path: "/v1/openapi.json" },
  { method: "GET", path: "/metrics" },
];

const IDS = [
  "s-1",
  "s-2",
  "nope",
  "",
  "..",
  "%2e%2e",
  "a%20b",
  "%E0%A4%A",
  "%00",
  "x".repeat(300),
  "😀",
];
const QUERIES = [
  "",
  "?after=1",
  "?after=-1",
  "?after=1e309",
  "?after=0x10",
  "?format=json",
  "?format=json&limit=0",
  "?format=json&limit=99999999",
  "?format=xml",
  "?after=&format=",
  "?after=1&after=2",
  "?%zz=1",
];
const TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/vnd.api+json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "",
  "application/jsonx",
];

export interface FuzzTarget {
  /** Base URL of requests (`http://codexd.test` for app.request). */
  base: string;
  token: string;
  /** A session id that exists, and a pending approval request id in it. */
  sessionId: string;
  requestId: string;
  /** Leave out routes that would end the run (POST /v1/shutdown against a real daemon). */
  skipShutdown?: boolean;
}

export function fuzzRequest(
  g: Gen,
  target: FuzzTarget,
): { method: string; url: string; init: RequestInit; label: string } {
  const routes = target.skipShutdown ? ROUTES.filter((r) => r.path !== "/v1/shutdown") : ROUTES;
  const route = g.pick(routes);
  const method = g.chance(0.9) ? route.method : g.pick(["GET", "POST", "PUT", "PATCH", "DELETE"]);
  let path = route.path.replace("{id}", g.chance(0.6) ? target.sessionId : g.pick(IDS))
    .replace("{rid}", g.pick([target.requestId, "nope", "%2F", ""]));
  if (g.chance(0.05)) path = path + g.pick(["/", "/x", "//"]);
  const url = `${target.base}${path}${route.path.endsWith("events") ? g.pick(QUERIES) : ""}`;
  const headers: Record<string, string> = {
    authorization: g.chance(0.97)
      ? `Bearer ${target.token}`
      : g.pick(["", "Bearer", `bearer ${target.token}`, "Bearer x"]),
  };
  if (g.chance(0.1)) {
    headers["last-event-id"] = g.pick(["1", "-1", "abc", "99999999999999999999", " 2 "]);
  }
  let body: string | undefined;
  if (method !== "GET" && (route.body || g.chance(0.2))) {
    const valid = route.body ? VALID_BODIES[route.body]() : {};
    const value = g.chance(0.15) ? valid : mutate(g, valid);
    body = JSON.stringify(value) ?? "null";
    if (g.chance(0.1)) body = body.slice(0, g.int(body.length + 1));
    if (g.chance(0.03)) body = "\uFEFF" + body;
    const type = g.chance(0.8) ? "application/json" : g.pick(TYPES);
    if (type) headers["content-type"] = type;
  }
  return {
    method,
    url,
    init: { method, headers, body },
    label: `${method} ${url} ${body?.slice(0, 120)}`,
  };
}

const ErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/**
 * What every fuzzed answer must satisfy: no 5xx, no secret echoed, and an error body of the
 * documented shape. Counts the status in `statuses`; throws naming the run and the request.
 */
export async function checkFuzzResponse(
  res: Response,
  statuses: Map<number, number>,
  run: number,
  label: string,
): Promise<void> {
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  if (res.status >= 500) {
    throw new Error(`run ${run}: ${res.status} for ${label}: ${await res.text()}`);
  }
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    await res.body?.cancel();
    return;
  }
  const text = await res.text();
  if (text.includes(SECRET)) throw new Error(`run ${run}: secret echoed by ${label}`);
  if (res.status >= 400 && !ErrorBody.safeParse(JSON.parse(text)).success) {
    throw new Error(`run ${run}: malformed error body for ${label}: ${text}`);
  }
}

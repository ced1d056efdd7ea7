/**
 * What the HTTP API checks before any route runs: the `Host` a request names (DNS rebinding),
 * its `Origin` (cross-site requests from a browser), how deep its JSON nests (a parser or
 * validator recursing 40,000 levels blows the stack), and the limits on live sessions and event
 * streams. Pure functions; app.ts wires them in.
 */

/** Nesting allowed in any JSON request body: deeper than this is refused before parsing. */
export const MAX_JSON_DEPTH = 64;
/** Nesting allowed inside a spec's `metadata` (opaque to codexd, stored and served back). */
export const MAX_METADATA_DEPTH = 32;
/** A spec's `metadata`, serialized as JSON, at most this many bytes. */
export const MAX_METADATA_BYTES = 64 * 1024;

export interface HttpLimits {
  /** Sessions running or idle at once; a spawn or resume over it gets 429. */
  maxLiveSessions: number;
  /** Open SSE event streams at once; one more gets 429. */
  maxEventStreams: number;
}

export const DEFAULT_LIMITS: HttpLimits = { maxLiveSessions: 500, maxEventStreams: 1000 };

/** Seconds a client told 429 waits before trying again. */
export const RETRY_AFTER_SECONDS = 5;

export interface ListenAddress {
  /** The address the server listens on (`127.0.0.1`, `::1`, `0.0.0.0`, a name). */
  hostname: string;
  /** The bound port (the real one when the configuration said 0). */
  port: number;
  tls: boolean;
  /** More names clients may use (`server.allowedHosts`), e.g. a DNS name in the certificate. */
  extraHosts?: readonly string[];
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
const WILDCARDS = new Set(["0.0.0.0", "[::]"]);

function bracketed(hostname: string): string {
  const h = hostname.toLowerCase();
  return h.includes(":") && !h.startsWith("[") ? `[${h}]` : h;
}

/**
 * Every `Host` value accepted: the listening host and the loopback names, each with the bound
 * port (and bare when the port is the scheme's default). A wildcard address is no name a client
 * sends, so it adds nothing: list the names in `server.allowedHosts`.
 */
export function allowedHosts(listen: ListenAddress): Set<string> {
  const names = new Set([
    bracketed(listen.hostname),
    ...LOOPBACK_NAMES,
    ...(listen.extraHosts ?? []).map(bracketed),
  ]);
  const defaultPort = listen.tls ? 443 : 80;
  const hosts = new Set<string>();
  for (const name of names) {
    if (WILDCARDS.has(name)) continue;
    hosts.add(`${name}:${listen.port}`);
    if (listen.port === defaultPort) hosts.add(name);
  }
  return hosts;
}

/**
 * True when an `Origin` header names the origin being served (`scheme://host` of the request).
 * `null` and anything unparsable are cross-origin.
 */
export function isSameOrigin(origin: string, protocol: string, host: string): boolean {
  try {
    return new URL(origin).origin === new URL(`${protocol}//${host}`).origin;
  } catch {
    return false;
  }
}

export interface TooDeep {
  /** The top-level key under which the nesting goes too deep; "" for the root itself. */
  path: string;
  limit: number;
}

/**
 * Finds JSON nested deeper than `limit` without parsing it (and so without recursion): a linear
 * scan of brackets outside strings. Text that is not JSON is left for the parser to refuse.
 */
export function jsonTooDeep(text: string, limit: number): TooDeep | undefined {
  let depth = 0;
  let rootIsObject = false;
  let expectKey = false;
  let topKey = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 34 /* " */) {
      const end = stringEnd(text, i);
      if (depth === 1 && rootIsObject && expectKey) {
        topKey = decodeKey(text.slice(i, end + 1));
        expectKey = false;
      }
      i = end;
    } else if (ch === 123 /* { */ || ch === 91 /* [ */) {
      if (depth === 0) {
        rootIsObject = ch === 123;
        expectKey = rootIsObject;
        topKey = "";
      }
      depth++;
      if (depth > limit) return { path: rootIsObject ? topKey : "", limit };
    } else if (ch === 125 /* } */ || ch === 93 /* ] */) {
      depth--;
    } else if (ch === 44 /* , */ && depth === 1 && rootIsObject) {
      expectKey = true;
    }
  }
  return undefined;
}

/** Index of the quote closing the string opened at `start` (or the text's end). */
function stringEnd(text: string, start: number): number {
  let i = start;
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i === -1) return text.length;
    let backslashes = 0;
    for (let j = i - 1; text.charCodeAt(j) === 92; j--) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
}

function decodeKey(literal: string): string {
  try {
    const key: unknown = JSON.parse(literal);
    return typeof key === "string" ? key : literal;
  } catch {
    return literal.slice(1, -1);
  }
}

/**
 * The nesting depth of a parsed value (a scalar is 0, `{}` is 1), iteratively; stops counting
 * once past `limit`.
 */
export function valueDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    const here = depth + 1;
    if (here > max) max = here;
    if (max > limit) return max;
    for (const child of Object.values(item)) stack.push([child, here]);
  }
  return max;
}

/** Why `metadata` is refused, or undefined when it is within the limits. */
export function metadataProblem(metadata: unknown): string | undefined {
  if (metadata === undefined) return undefined;
  if (valueDepth(metadata, MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH) {
    return `nests deeper than ${MAX_METADATA_DEPTH} levels`;
  }
  const bytes = new TextEncoder().encode(JSON.stringify(metadata)).length;
  if (bytes > MAX_METADATA_BYTES) {
    return `is ${bytes} bytes as JSON; at most ${MAX_METADATA_BYTES} are allowed`;
  }
  return undefined;
}

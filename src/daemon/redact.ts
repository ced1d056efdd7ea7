/**
 * Secrets of a spec never leave the daemon. A secret is a value of `spec.env` or of an MCP
 * server's `env` (`mcpServers.<name>.env`). The stored spec keeps only the variable names, and
 * every event is scrubbed before it is written or served:
 *
 * - each secret is searched for as written and in the encodings a command is likely to print it
 *   in: base64 and base64url (at each of the three byte alignments, so a secret inside a longer
 *   encoded string is found too), hex (lower and upper case), URL encoding, and JSON string
 *   escaping;
 * - a streamed text (`text.delta` events) is scrubbed across piece boundaries: a piece's tail that
 *   could be the start of a secret is held back until the next piece shows whether it is one, so
 *   neither a stored delta nor the pieces joined reveal a secret.
 */
import type { Spec } from "../provider/spec.ts";

export const REDACTED = "[redacted]";

/**
 * Values shorter than this are not searched for in event text: replacing every `1` or `on` would
 * mangle output without protecting anything worth protecting.
 */
const MIN_SECRET_LENGTH = 6;

/** The spec as stored and listed: every env value, the MCP servers' included, is `[redacted]`. */
export function redactSpec(spec: Spec): Record<string, unknown> {
  const redacted: Record<string, unknown> = { ...spec };
  if (spec.env) redacted.env = redactEnv(spec.env);
  if (spec.mcpServers) {
    redacted.mcpServers = Object.fromEntries(
      Object.entries(spec.mcpServers).map((
        [name, server],
      ) => [name, { ...server, env: redactEnv(server.env ?? {}) }]),
    );
  }
  return redacted;
}

function redactEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(env).map((key) => [key, REDACTED]));
}

/** Every secret value of a spec: its env and its MCP servers' env. */
export function specSecrets(spec: Spec): string[] {
  return [
    ...Object.values(spec.env ?? {}),
    ...Object.values(spec.mcpServers ?? {}).flatMap((server) => Object.values(server.env ?? {})),
  ];
}

/** Scrubs a session's secrets (see the file comment). */
export interface Scrubber {
  /** Replaces every secret, in any of its encodings, anywhere in a JSON value. */
  <T>(value: T): T;
  /** The secrets it searches for. */
  readonly secrets: readonly string[];
  /** One whole text, scrubbed. */
  text(text: string): string;
  /**
   * The next piece of a streamed text: `held` is what the previous call held back. Returns what
   * can be shown now and the new tail to hold (a possible start of a secret). Once the stream
   * ends, show `text(held)`.
   */
  stream(held: string, piece: string): { text: string; held: string };
}

/** Names of environment variables whose values are credentials rather than settings. */
const SECRET_ENV_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|PROXY/i;

/**
 * The values that must not reach codexd's log through what codex prints (its stderr): every
 * variable the configuration gives codex (`codex.env`), and the inherited ones whose names say
 * they hold a credential (API keys, tokens, proxies with a password in their URL).
 */
export function envSecrets(
  inherited: Readonly<Record<string, string | undefined>>,
  configured: Readonly<Record<string, string>> = {},
): string[] {
  const named = Object.entries(inherited)
    .filter(([name, value]) => value !== undefined && SECRET_ENV_NAME.test(name))
    .map(([, value]) => value!);
  return [...new Set([...Object.values(configured), ...named])];
}

/** A scrubber for the spec's secrets, or undefined if it has none worth searching for. */
export function secretScrubber(spec: Spec): Scrubber | undefined {
  return scrubberFor(specSecrets(spec));
}

export function scrubberFor(values: readonly string[]): Scrubber | undefined {
  const secrets = values.filter((value) => value.length >= MIN_SECRET_LENGTH);
  if (secrets.length === 0) return undefined;
  const patterns = [...new Set(secrets.flatMap(encodings))]
    .filter((p) => p.length >= MIN_SECRET_LENGTH)
    // Longest first, so that of two patterns starting at one place the longer is replaced whole.
    .sort((a, b) => b.length - a.length);
  const firstChars = new Set(patterns.map((p) => p[0]));
  const longest = patterns[0]!.length;

  /** The smallest index >= from where the rest of `text` is a proper prefix of a pattern. */
  const holdStart = (text: string, from: number): number => {
    for (let i = Math.max(from, text.length - longest + 1); i < text.length; i++) {
      if (!firstChars.has(text[i])) continue;
      const tail = text.slice(i);
      if (patterns.some((p) => p.length > tail.length && p.startsWith(tail))) return i;
    }
    return text.length;
  };

  /**
   * Replaces patterns left to right (at each place the longest), in `text` up to the point where
   * a possible start of a secret begins when `streaming`: the rest is returned as `held`.
   */
  const run = (text: string, streaming: boolean): { text: string; held: string } => {
    const present = patterns.filter((p) => text.includes(p));
    let hold = streaming ? holdStart(text, 0) : text.length;
    if (present.length === 0) return { text: text.slice(0, hold), held: text.slice(hold) };
    const next = present.map((p) => text.indexOf(p));
    let out = "";
    let at = 0;
    for (;;) {
      let best = -1;
      for (let k = 0; k < present.length; k++) {
        if (next[k]! !== -1 && next[k]! < at) next[k] = text.indexOf(present[k]!, at);
        if (next[k] === -1) continue;
        if (best === -1 || next[k]! < next[best]!) best = k; // ties: the earlier, longer one
      }
      if (best === -1 || next[best]! >= hold) break;
      out += text.slice(at, next[best]) + REDACTED;
      at = next[best]! + present[best]!.length;
      // A whole secret reached past the held tail's start: hold only what follows it.
      if (streaming && at > hold) hold = holdStart(text, at);
    }
    return { text: out + text.slice(at, Math.max(at, hold)), held: text.slice(Math.max(at, hold)) };
  };

  // `base64` wraps its output every 76 characters: a copy inside an encoded env dump may be cut
  // by line breaks. Searched for in whole texts (a command's output), line breaks allowed.
  const cores = [...new Set(secrets.flatMap((s) => base64Cores(new TextEncoder().encode(s))))]
    .filter((core) => core.length >= MIN_SECRET_LENGTH)
    .flatMap((core) => [core, core.replaceAll("+", "-").replaceAll("/", "_")]);
  const wrapped = cores.length === 0 ? undefined : new RegExp(
    cores.map((core) => [...core].map((c) => c.replace(/[+/]/g, "\\$&")).join("(?:\\r?\\n)?"))
      .join("|"),
    "g",
  );
  // Hex dumps space and wrap their bytes (`xxd -p`, `od -An -tx1`): whitespace allowed between.
  const spacedHex = new RegExp(
    secrets.map((s) =>
      Array.from(new TextEncoder().encode(s), (b) => b.toString(16).padStart(2, "0")).join("\\s*")
    ).join("|"),
    "gi",
  );
  const scrubText = (text: string): string => {
    let out = run(text, false).text;
    if (wrapped && out.includes("\n")) out = out.replace(wrapped, REDACTED);
    if (/[0-9a-f]{2}\s+[0-9a-f]{2}/i.test(out)) out = out.replace(spacedHex, REDACTED);
    return out;
  };
  const scrub = (value: unknown): unknown => {
    if (typeof value === "string") return scrubText(value);
    if (Array.isArray(value)) return value.map(scrub);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), scrub(v)]));
    }
    return value;
  };
  return Object.assign(<T>(value: T) => scrub(value) as T, {
    secrets,
    text: scrubText,
    stream: (held: string, piece: string) => run(held + piece, true),
  });
}

/** A secret as written and in the encodings it is searched for in. */
function encodings(secret: string): string[] {
  const bytes = new TextEncoder().encode(secret);
  const out = [secret];
  const json = JSON.stringify(secret).slice(1, -1);
  out.push(json);
  const url = encodeURIComponent(secret);
  out.push(url, url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), url.replaceAll("%20", "+"));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  out.push(hex, hex.toUpperCase());
  for (const core of base64Cores(bytes)) {
    out.push(core, core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return out;
}

/**
 * The base64 characters that depend on the secret's bytes alone, for each of the three places
 * the secret can start within a 3-byte group: a secret inside a longer encoded string shows one
 * of these whatever precedes or follows it.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    let binary = "";
    for (const byte of padded) binary += String.fromCharCode(byte);
    const encoded = btoa(binary);
    // Character i covers bits [6i, 6i + 6): keep those wholly inside the secret's bits.
    const first = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    cores.push(encoded.slice(first, end));
  }
  return cores;
}

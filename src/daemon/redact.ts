/**
 * Secrets in `spec.env` never leave the daemon: the stored spec keeps only the variable names,
 * and any event text that contains a secret value has it replaced before it is written.
 */
import type { Spec } from "../provider/spec.ts";

export const REDACTED = "[redacted]";

/**
 * Values shorter than this are not searched for in event text: replacing every `1` or `on` would
 * mangle output without protecting anything worth protecting.
 */
const MIN_SECRET_LENGTH = 6;

/** The spec as stored and listed: every env value replaced by `[redacted]`. */
export function redactSpec(spec: Spec): Record<string, unknown> {
  if (!spec.env) return { ...spec };
  return {
    ...spec,
    env: Object.fromEntries(Object.keys(spec.env).map((key) => [key, REDACTED])),
  };
}

/** A function that scrubs the spec's secret values from any JSON value, or undefined if none. */
export function secretScrubber(spec: Spec): (<T>(value: T) => T) | undefined {
  const secrets = Object.values(spec.env ?? {})
    .filter((value) => value.length >= MIN_SECRET_LENGTH)
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return undefined;
  const scrubText = (text: string): string => {
    let out = text;
    for (const secret of secrets) {
      if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
    }
    return out;
  };
  const scrub = (value: unknown): unknown => {
    if (typeof value === "string") return scrubText(value);
    if (Array.isArray(value)) return value.map(scrub);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v)]));
    }
    return value;
  };
  return <T>(value: T) => scrub(value) as T;
}

import { expect, test } from "bun:test";
import { REDACTED, redactSpec, secretScrubber } from "../../src/daemon/redact.ts";
import type { Spec } from "../../src/provider/spec.ts";

const spec = (env?: Record<string, string>) => ({ cwd: "/wt", prompt: "p", env }) as Spec;

test("redactSpec keeps env names and hides every value", () => {
  expect(redactSpec(spec({ API_KEY: "sk-123456", DEBUG: "1" }))).toMatchObject({
    cwd: "/wt",
    env: { API_KEY: REDACTED, DEBUG: REDACTED },
  });
  expect(redactSpec(spec())).toEqual({ cwd: "/wt", prompt: "p", env: undefined });
});

test("secretScrubber replaces long secrets anywhere, longest first, and skips short values", () => {
  expect(secretScrubber(spec({ DEBUG: "1" }))).toBeUndefined();
  expect(secretScrubber(spec())).toBeUndefined();
  const scrub = secretScrubber(spec({ A: "secret-abc", B: "secret-abcdef", C: "on" }))!;
  expect(scrub({ text: "x secret-abcdef y secret-abc on", n: 3, list: [{ v: "secret-abc" }] }))
    .toEqual({ text: `x ${REDACTED} y ${REDACTED} on`, n: 3, list: [{ v: REDACTED }] });
});

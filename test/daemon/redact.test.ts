import { describe, expect, test } from "bun:test";
import {
  envSecrets,
  REDACTED,
  redactSpec,
  scrubberFor,
  secretScrubber,
  specSecrets,
} from "../../src/daemon/redact.ts";
import type { Spec } from "../../src/provider/spec.ts";

const spec = (env?: Record<string, string>, mcpServers?: Spec["mcpServers"]) =>
  ({ cwd: "/wt", prompt: "p", env, ...(mcpServers && { mcpServers }) }) as Spec;

const SECRET = "sk-live-0123456789abcdef";

test("redactSpec keeps env names and hides every value", () => {
  expect(redactSpec(spec({ API_KEY: "sk-123456", DEBUG: "1" }))).toMatchObject({
    cwd: "/wt",
    env: { API_KEY: REDACTED, DEBUG: REDACTED },
  });
  expect(redactSpec(spec())).toEqual({ cwd: "/wt", prompt: "p", env: undefined });
});

test("redactSpec hides the MCP servers' env values too; their secrets are scrubbed like env's", () => {
  const s = spec(undefined, {
    echo: { command: "node", args: ["echo.mjs"], env: { ECHO_TOKEN: "mcp-secret-42", N: "1" } },
  });
  expect(redactSpec(s)).toEqual({
    cwd: "/wt",
    prompt: "p",
    env: undefined,
    mcpServers: {
      echo: { command: "node", args: ["echo.mjs"], env: { ECHO_TOKEN: REDACTED, N: REDACTED } },
    },
  });
  expect(JSON.stringify(redactSpec(s))).not.toContain("mcp-secret-42");
  expect(specSecrets(s)).toEqual(["mcp-secret-42", "1"]);
  expect(secretScrubber(s)!({ output: "token mcp-secret-42" })).toEqual({
    output: `token ${REDACTED}`,
  });
});

test("secretScrubber replaces long secrets anywhere, longest first, and skips short values", () => {
  expect(secretScrubber(spec({ DEBUG: "1" }))).toBeUndefined();
  expect(secretScrubber(spec())).toBeUndefined();
  const scrub = secretScrubber(spec({ A: "secret-abc", B: "secret-abcdef", C: "on" }))!;
  expect(scrub({ text: "x secret-abcdef y secret-abc on", n: 3, list: [{ v: "secret-abc" }] }))
    .toEqual({ text: `x ${REDACTED} y ${REDACTED} on`, n: 3, list: [{ v: REDACTED }] });
  expect(scrub<Record<string, number>>({ "key secret-abc": 1 })).toEqual({
    [`key ${REDACTED}`]: 1,
  });
});

describe("encoded copies of a secret", () => {
  const scrub = scrubberFor([SECRET])!;
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  const b64url = (text: string) => Buffer.from(text).toString("base64url");
  const hex = (text: string) => Buffer.from(text).toString("hex");

  test.each([
    ["base64", b64(SECRET)],
    ["base64 of `KEY=<secret>\\n` (an env dump)", b64(`API_KEY=${SECRET}\n`)],
    ["base64 at the second byte alignment", b64(`K=${SECRET}`)],
    ["base64 at the third byte alignment", b64(`KY=${SECRET}`)],
    ["base64url", b64url(`xx${SECRET}??>>`)],
    ["hex", hex(SECRET)],
    ["HEX", hex(`a${SECRET}`).toUpperCase()],
    ["URL-encoded", encodeURIComponent(`${SECRET}`)],
    ["JSON-escaped", JSON.stringify(SECRET)],
  ])("%s", (_name, encoded) => {
    const out = scrub.text(`before ${encoded} after`);
    expect(out).toContain(REDACTED);
    expect(out).not.toContain(encoded);
    // What is left of the encoded text no longer decodes to the secret.
    for (const decode of [b64, b64url, hex]) expect(out).not.toContain(decode(SECRET));
    expect(Buffer.from(out.split(" ")[1]!, "base64").toString("latin1")).not.toContain(SECRET);
  });

  test("base64 wrapped over lines (an `env | base64` dump) is found across the line breaks", () => {
    const prefix = "HOME=/root\nPATH=/usr/bin:/bin\nAPI_KEY=";
    const dump = b64(`${prefix}${SECRET}\nLANG=C\n`);
    // The characters of the dump that encode the secret's bytes alone.
    const core = dump.slice(
      Math.ceil(prefix.length * 8 / 6),
      (prefix.length + SECRET.length) * 8 / 6,
    );
    for (const width of [76, 20, 7]) {
      const lines = dump.match(new RegExp(`.{1,${width}}`, "g"))!;
      const wrappedText = lines.join(width === 7 ? "\r\n" : "\n");
      expect(wrappedText.replace(/\s/g, "")).toContain(core); // the attack: it is in there
      const out = scrub.text(wrappedText);
      expect(out).toContain(REDACTED);
      expect(out.replace(/\s/g, "")).not.toContain(core.slice(2, -2));
    }
  });

  test("hex dumps that space or wrap the bytes (xxd -p, od -An -tx1) are found", () => {
    const bytes = [...Buffer.from(`K=${SECRET}\n`)].map((b) => b.toString(16).padStart(2, "0"));
    const xxd = bytes.join("").match(/.{1,12}/g)!.join("\n"); // xxd -p wraps (at 60)
    const od = bytes.map((b) => ` ${b}`).join("").replace(/((?: [0-9a-f]{2}){16})/g, "$1\n");
    for (const dump of [xxd, od, od.toUpperCase()]) {
      const out = scrub.text(dump);
      expect(out).toContain(REDACTED);
      expect(out.replace(/\s/g, "").toLowerCase()).not.toContain(hex(SECRET).slice(2, -2));
    }
    expect(scrub.text("00 11 22 33 ff")).toBe("00 11 22 33 ff");
  });

  test("secrets with characters that encode differently", () => {
    const odd = 'p@ss w/rd"&\\+é';
    const s = scrubberFor([odd])!;
    for (
      const encoded of [
        encodeURIComponent(odd),
        encodeURIComponent(odd).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
        encodeURIComponent(odd).replaceAll("%20", "+"),
        JSON.stringify(odd).slice(1, -1),
        b64(odd),
        b64url(odd),
        hex(odd),
      ]
    ) {
      expect(s.text(`[${encoded}]`)).not.toContain(encoded);
    }
  });

  test("text without a secret is left alone", () => {
    const text = "ordinary output: c2stbGl2ZQ== 0123456789abcdef %20";
    expect(scrub.text(text)).toBe(text);
  });
});

describe("a streamed text is scrubbed across piece boundaries", () => {
  const secrets = [SECRET, "ghp_AAAABBBBCCCC", "secret-abc", "secret-abcdef"];
  const scrub = scrubberFor(secrets)!;

  /** Streams `pieces`, returns what was shown piece by piece, then the flushed tail. */
  function stream(pieces: string[]): string[] {
    const shown: string[] = [];
    let held = "";
    for (const piece of pieces) {
      const next = scrub.stream(held, piece);
      shown.push(next.text);
      held = next.held;
      expect(held.length).toBeLessThan(64); // bounded by the longest pattern
    }
    shown.push(scrub.text(held));
    return shown;
  }

  test("a secret split over two pieces: neither piece nor their join shows it", () => {
    const shown = stream(["the key is sk-live-0123", "456789abcdef, keep it"]);
    expect(shown.join("")).toBe(`the key is ${REDACTED}, keep it`);
    expect(shown[0]).toBe("the key is ");
    for (const piece of shown) expect(piece).not.toContain("sk-live");
  });

  test("a tail that only looked like a secret's start is shown with the next piece", () => {
    expect(stream(["use sk-", "learn to ski"])).toEqual(["use ", "sk-learn to ski", ""]);
    expect(stream(["it ends with sk-li"])).toEqual(["it ends with ", "sk-li"]);
  });

  test("random splits of random texts: the join equals the whole text scrubbed, and no prefix of the stream reveals a secret", () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const words = [...secrets, "sk-", "sk-live-", "secret-", "ghp_AAAA", "x", " ", "abc", "\n"];
    const encoded = [Buffer.from(SECRET).toString("base64"), Buffer.from(SECRET).toString("hex")];
    for (let run = 0; run < 2000; run++) {
      const parts = Array.from(
        { length: 1 + Math.floor(random() * 12) },
        () => [...words, ...encoded][Math.floor(random() * (words.length + encoded.length))]!,
      );
      const text = parts.join("");
      const pieces: string[] = [];
      for (let at = 0; at < text.length;) {
        const size = 1 + Math.floor(random() * 9);
        pieces.push(text.slice(at, at + size));
        at += size;
      }
      const shown = stream(pieces);
      expect(shown.join("")).toBe(scrub.text(text));
      let joined = "";
      for (const piece of shown) {
        joined += piece;
        for (const secret of [...secrets, ...encoded]) expect(joined).not.toContain(secret);
      }
    }
  });
});

describe("envSecrets (what codex's stderr must not carry into the log)", () => {
  test("every configured value and the inherited ones named like credentials", () => {
    expect(
      envSecrets(
        {
          PATH: "/usr/bin:/bin",
          HOME: "/home/codexd",
          OPENAI_API_KEY: "sk-openai",
          GITHUB_TOKEN: "ghp_x",
          HTTPS_PROXY: "http://u:pw@proxy:3128",
          UNSET_KEY: undefined,
        },
        { MCP_TOKEN: "configured", PLAIN: "value" },
      ).sort(),
    ).toEqual(["configured", "ghp_x", "http://u:pw@proxy:3128", "sk-openai", "value"]);
  });
});

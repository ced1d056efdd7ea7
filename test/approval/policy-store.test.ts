import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import {
  PolicyLoadError,
  ShadowPolicyNotUsable,
  UnknownPolicy,
} from "../../src/approval/policy-errors.ts";
import { PolicyStore } from "../../src/approval/policy-store.ts";
import { fakeAnalyzer } from "./support/fake-analyzer.ts";
import { storeWith } from "./support/store.ts";

describe("PolicyStore", () => {
  test("get() of an unknown name throws UnknownPolicy", () => {
    using env = storeWith({ a: "version: 1\nname: a\ndefault: allow\n" });
    expect(() => env.store.get("b")).toThrow(UnknownPolicy);
    expect(() => env.store.get("b")).toThrow("Unknown policy b: loaded policies are a");
  });

  test("list() gives names and version hashes; get() the merged policy", () => {
    using env = storeWith({
      a: "version: 1\nname: a\ndefault: allow\nallowBypass: true\n",
      b: "version: 1\nname: b\n",
      s: "version: 1\nname: s\nmode: shadow\nshadows: a\n",
    });
    expect(env.store.list().map((p) => [p.name, p.mode, p.default])).toEqual([
      ["a", "enforce", "allow"],
      ["b", "enforce", "deny"],
      ["s", "shadow", "deny"],
    ]);
    expect(env.store.list()[0].version).toMatch(/^[0-9a-f]{12}$/);
    expect(env.store.get("a").merged.allowBypass).toBe(true);
    expect(env.store.get("b").merged.allowBypass).toBe(false);
    expect(() => env.store.get("s")).toThrow(ShadowPolicyNotUsable);
    expect(env.store.shadowsOf("a").map((p) => p.name)).toEqual(["s"]);
  });

  test("reload swaps in changes; a broken file keeps its previous version and says why", () => {
    using env = storeWith({
      a: "version: 1\nname: a\ndefault: allow\n",
      b: "version: 1\nname: b\ndefault: deny\n",
    });
    const before = env.store.get("a");
    const bBefore = env.store.get("b").version;
    env.tmp.write(
      "a.yaml",
      "version: 1\nname: a\ndefault: allow\ncommands:\n  deny:\n    - regex: 'a(b'\n",
    );
    env.tmp.write("b.yaml", "version: 1\nname: b\ndefault: allow\n");
    const result = env.store.reload();
    expect(result.issues.map((i) => `${i.line}:${i.col} ${i.key}`)).toEqual([
      "6:14 commands.deny[0].regex",
    ]);
    expect(result.issues[0].file).toBe(join(env.tmp.dir, "a.yaml"));
    expect(result.changed).toEqual(["b"]);
    expect(env.store.get("a")).toBe(before);
    expect(env.store.list().find((p) => p.name === "a")?.stale).toBe(true);
    expect(env.store.get("b").version).not.toBe(bBefore);
    expect(env.store.get("b").merged.default).toBe("allow");
  });

  test("a new broken file is not loaded; a removed file disappears", () => {
    using env = storeWith({ a: "version: 1\nname: a\n", gone: "version: 1\nname: gone\n" });
    env.tmp.write("c.yaml", "version: 1\nname: c\nbogus: true\n");
    rmSync(join(env.tmp.dir, "gone.yaml"));
    const result = env.store.reload();
    expect(result.issues[0].message).toBe("unknown key bogus");
    expect(result.changed).toEqual(["gone"]);
    expect(env.store.has("c")).toBe(false);
    expect(env.store.has("gone")).toBe(false);
  });

  test("a broken base keeps every policy that extends it at its previous version", () => {
    using env = storeWith({
      base: "version: 1\nname: base\ndefault: deny\n",
      child: "version: 1\nname: child\nextends: [base]\n",
    });
    const child = env.store.get("child");
    env.tmp.write("base.yaml", "version: 1\nname: base\ndefault: nope\n");
    const result = env.store.reload();
    expect(result.issues.map((i) => i.key).sort()).toEqual(["default", "extends[0]"]);
    expect(env.store.get("child")).toBe(child);
  });
});

describe("PolicyStore.open", () => {
  test("requireAll throws PolicyLoadError with located problems", async () => {
    using env = storeWith({ a: "version: 1\nname: a\nwhat: 1\n" });
    const opening = PolicyStore.open(env.tmp.dir, { analyzer: fakeAnalyzer, requireAll: true });
    await expect(opening).rejects.toBeInstanceOf(PolicyLoadError);
    await expect(opening).rejects.toThrow(
      `${join(env.tmp.dir, "a.yaml")}:3:1: what: unknown key what`,
    );
    const lenient = await PolicyStore.open(env.tmp.dir, { analyzer: fakeAnalyzer });
    expect(lenient.list()).toEqual([]);
  });
});

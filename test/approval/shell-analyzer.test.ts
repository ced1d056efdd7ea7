import { describe, expect, test } from "bun:test";
import { cachingAnalyzer } from "../../src/approval/analyzer.ts";
import { defaultShellAnalyzer, shellAnalyzerFrom } from "../../src/approval/shell-analyzer.ts";
import { loadPolicies, policyFilesIn } from "../../src/approval/policy-loader.ts";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fakeAnalyzer } from "./support/fake-analyzer.ts";

describe("shellAnalyzerFrom", () => {
  test("initializes the parser once and caches analyses of identical strings", async () => {
    let inits = 0;
    let parses = 0;
    const analyzer = await shellAnalyzerFrom({
      initShellParser: () => {
        inits++;
        return Promise.resolve();
      },
      analyzeCommand: (c) => {
        parses++;
        return fakeAnalyzer.analyze(c);
      },
      matchBuiltin: fakeAnalyzer.matchBuiltin,
      matchesPrefix: fakeAnalyzer.matchesPrefix,
      BUILTIN_RULES: fakeAnalyzer.builtinRules,
    });
    expect(inits).toBe(1);
    const first = analyzer.analyze("npm test");
    expect(analyzer.analyze("npm test")).toBe(first);
    expect(parses).toBe(1);
    analyzer.analyze("ls");
    expect(parses).toBe(2);
    expect(analyzer.builtinRules.map((r) => r.id)).toContain("builtin.rm-root");
    expect(analyzer.matchBuiltin(analyzer.analyze("rm -rf /"))?.ruleId).toBe("builtin.rm-root");
  });
});

describe("cachingAnalyzer", () => {
  test("evicts the least recently used analysis and never caches very long lines", () => {
    const seen: string[] = [];
    const analyzer = cachingAnalyzer({
      ...fakeAnalyzer,
      analyze: (c) => {
        seen.push(c);
        return fakeAnalyzer.analyze(c);
      },
    }, 2);
    for (const c of ["a", "b", "a", "c", "a", "b"]) analyzer.analyze(c);
    expect(seen).toEqual(["a", "b", "c", "b"]);
    const long = `echo ${"x".repeat(5000)}`;
    analyzer.analyze(long);
    analyzer.analyze(long);
    expect(seen.filter((c) => c === long).length).toBe(2);
  });
});

describe("defaultShellAnalyzer", () => {
  test("binds the tree-sitter analyzer, the built-in rules and prefix matching", async () => {
    const analyzer = await defaultShellAnalyzer();
    expect(await defaultShellAnalyzer()).toBe(analyzer);
    const analysis = analyzer.analyze("/bin/bash -lc 'npm test && g\\it push -f'");
    expect(analysis.commands.map((c) => c.argv)).toEqual([["npm", "test"], ["git", "push", "-f"]]);
    expect(analyzer.matchBuiltin(analysis)?.ruleId).toBe("builtin.git-push-force");
    expect(analyzer.matchesPrefix(analysis.commands[1], ["git", "push", "--force"])).toBe(true);
    expect(analyzer.builtinRules.length).toBe(10);
  });

  test("every shipped policy and example loads with the real analyzer", async () => {
    const analyzer = await defaultShellAnalyzer();
    const root = join(import.meta.dir, "..", "..", "policies");
    const { issues } = loadPolicies(
      [...policyFilesIn(root), ...policyFilesIn(join(root, "examples"))],
      analyzer,
    );
    expect([...issues.values()].flat()).toEqual([]);
  });

  test("the parser takes its wasm from embeddedAssets when the binary provides it", () => {
    // A fresh process: the parser initializes once per process. Broken bytes must make the
    // load fail, which shows they were used instead of node_modules' file.
    const script = `
      import { embeddedAssets } from "./src/assets.ts";
      import { initShellParser } from "./src/approval/shell/parser.ts";
      embeddedAssets.bashWasm = new Uint8Array([0, 1, 2, 3]);
      try { await initShellParser(); console.log("loaded"); }
      catch (e) { console.log(e.code); }`;
    const out = spawnSync(process.execPath, ["-e", script], {
      cwd: join(import.meta.dir, "..", ".."),
      encoding: "utf8",
    });
    expect(out.stdout.trim()).toBe("shell_parser_unavailable");
  });
});

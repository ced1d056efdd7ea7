import { describe, expect, test } from "bun:test";
import { cachingAnalyzer } from "../../src/approval/analyzer.ts";
import { shellAnalyzerFrom } from "../../src/approval/shell-analyzer.ts";
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

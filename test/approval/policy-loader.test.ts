import { afterAll, describe, expect, test } from "bun:test";
import { formatIssue } from "../../src/approval/policy-errors.ts";
import { loadPolicies } from "../../src/approval/policy-loader.ts";
import { fakeAnalyzer } from "./support/fake-analyzer.ts";
import { tempDir } from "./support/policies.ts";

const tmp = tempDir();
afterAll(() => tmp[Symbol.dispose]());

/** Loads one file (plus optional siblings) and returns its formatted problems. */
function problems(name: string, text: string, siblings: Record<string, string> = {}): string[] {
  for (const [n, t] of Object.entries(siblings)) tmp.write(`${n}.yaml`, t);
  const file = tmp.write(`${name}.yaml`, text);
  const { issues } = loadPolicies([file], fakeAnalyzer);
  return (issues.get(name) ?? []).map((i) => formatIssue(i).slice(tmp.dir.length + 1));
}

describe("validation errors are located by file:line:col and key path", () => {
  const cases: Array<{ name: string; text: string; expected: string }> = [
    {
      name: "unknown-key",
      text: "version: 1\nname: unknown-key\ndefault: allow\nfoo: 1\n",
      expected: "unknown-key.yaml:4:1: foo: unknown key foo",
    },
    {
      name: "nested-unknown",
      text:
        "version: 1\nname: nested-unknown\ncommands:\n  deny:\n    - prefix: [rm]\n      reasn: typo\n",
      expected: "nested-unknown.yaml:6:7: commands.deny[0].reasn: unknown key reasn",
    },
    {
      name: "bad-regex",
      text: "version: 1\nname: bad-regex\ncommands:\n  deny:\n    - id: x\n      regex: 'a(b'\n",
      expected: "bad-regex.yaml:6:14: commands.deny[0].regex: not a valid RE2 pattern",
    },
    {
      name: "lookahead",
      text: "version: 1\nname: lookahead\ncommands:\n  deny:\n    - regex: 'a(?=b)'\n",
      expected: "lookahead.yaml:5:14: commands.deny[0].regex: not a valid RE2 pattern",
    },
    {
      name: "bad-default",
      text: "version: 1\nname: bad-default\ndefault: maybe\n",
      expected: "bad-default.yaml:3:10: default:",
    },
    {
      name: "name-mismatch",
      text: "version: 1\nname: other\n",
      expected: "name-mismatch.yaml:2:7: name: name other must equal the file name name-mismatch",
    },
    {
      name: "both-prefix-and-regex",
      text:
        "version: 1\nname: both-prefix-and-regex\ncommands:\n  ask:\n    - prefix: [a]\n      regex: b\n",
      expected:
        "both-prefix-and-regex.yaml:5:7: commands.ask[0]: a rule needs exactly one of prefix or regex",
    },
    {
      name: "failing-match",
      text:
        'version: 1\nname: failing-match\ncommands:\n  deny:\n    - prefix: [npm, publish]\n      match: ["npm publish", "npm pack"]\n',
      expected:
        'failing-match.yaml:6:30: commands.deny[0].match[1]: example "npm pack" does not match the rule',
    },
    {
      name: "failing-not-match",
      text:
        "version: 1\nname: failing-not-match\ncommands:\n  deny:\n    - regex: publish\n      notMatch:\n        - npm publish\n",
      expected:
        'failing-not-match.yaml:7:11: commands.deny[0].notMatch[0]: example "npm publish" matches the rule',
    },
    {
      name: "builtin-id",
      text:
        "version: 1\nname: builtin-id\ncommands:\n  allow:\n    - id: builtin.rm-root\n      prefix: [ls]\n",
      expected: "builtin-id.yaml:5:11: commands.allow[0].id: rule id builtin.rm-root is reserved",
    },
    {
      name: "allow-names-builtin",
      text:
        "version: 1\nname: allow-names-builtin\ncommands:\n  allow:\n    - prefix: [git, push, --force]\n",
      expected:
        "allow-names-builtin.yaml:5:15: commands.allow[0].prefix: allow rule names what built-in rule builtin.force-push denies",
    },
    {
      name: "allow-example-builtin",
      text:
        "version: 1\nname: allow-example-builtin\ncommands:\n  allow:\n    - prefix: [rm]\n      match: ['rm -rf /']\n",
      expected:
        'allow-example-builtin.yaml:6:15: commands.allow[0].match[0]: example "rm -rf /" is denied by built-in rule builtin.rm-root',
    },
    {
      name: "missing-extends",
      text: "version: 1\nname: missing-extends\nextends: [nowhere]\n",
      expected:
        "missing-extends.yaml:3:11: extends[0]: extends nowhere, but there is no policy nowhere",
    },
    {
      name: "yaml-syntax",
      text: "version: 1\nname: yaml-syntax\ncommands: [\n",
      expected: "yaml-syntax.yaml:4:1: ",
    },
    {
      name: "duplicate-key",
      text: "version: 1\nname: duplicate-key\ndefault: allow\ndefault: deny\n",
      expected: "duplicate-key.yaml:4:1: Map keys must be unique",
    },
    {
      name: "bad-duration",
      text: "version: 1\nname: bad-duration\naskTimeout: soon\n",
      expected: "bad-duration.yaml:3:13: askTimeout: must be a duration such as 30s, 5m or 1h",
    },
    {
      name: "unanalyzable-allow",
      text: "version: 1\nname: unanalyzable-allow\nunanalyzable: allow\n",
      expected: "unanalyzable-allow.yaml:3:15: unanalyzable:",
    },
    {
      name: "shadow-without-target",
      text: "version: 1\nname: shadow-without-target\nmode: shadow\n",
      expected: "shadow-without-target.yaml:1:1: shadows: mode shadow needs shadows: <fleet>",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const found = problems(c.name, c.text);
      expect(found.length).toBeGreaterThan(0);
      expect(found[0]).toStartWith(c.expected);
    });
  }
});

describe("broad allow rules are refused", () => {
  const broad: Array<[string, string]> = [
    ["[bash, -c]", "bash -c runs inline code"],
    ["[sh]", "a bare sh runs any code"],
    ["[bash]", "a bare bash runs any code"],
    ["[env]", "env runs whatever command follows it"],
    ["[python, -c]", "python -c runs inline code"],
    ["[node, -e]", "node -e runs inline code"],
    ["[eval]", "eval runs whatever command follows it"],
    ["[git]", "a bare git admits every subcommand; name the subcommand (e.g. git status)"],
    ["[sudo, npm, test]", "sudo runs whatever command follows it"],
    ["[xargs]", "xargs runs whatever command follows it"],
  ];
  for (const [prefix, reason] of broad) {
    test(`prefix ${prefix}`, () => {
      const name = `broad-${prefix.replace(/[^a-z]/g, "")}`;
      const found = problems(
        name,
        `version: 1\nname: ${name}\ncommands:\n  allow:\n    - prefix: ${prefix}\n`,
      );
      expect(found).toEqual([
        `${name}.yaml:5:15: commands.allow[0].prefix: allow rule refused: ${reason}`,
      ]);
    });
  }
  test("a regex that accepts anything", () => {
    const found = problems(
      "broad-regex",
      "version: 1\nname: broad-regex\ncommands:\n  allow:\n    - regex: '.*'\n",
    );
    expect(found[0]).toStartWith(
      'broad-regex.yaml:5:14: commands.allow[0].regex: allow rule refused: regex ".*" also accepts "bash -c x"',
    );
  });
  test("narrow allow rules load", () => {
    expect(
      problems(
        "narrow",
        "version: 1\nname: narrow\ncommands:\n  allow:\n    - prefix: [npm, test]\n    - prefix: [bash, scripts/ci.sh]\n    - regex: 'npm run [a-z:]+'\n",
      ),
    ).toEqual([]);
  });
});

describe("extends", () => {
  test("merges in order: scalars from the last, rules concatenated base first", () => {
    tmp.write(
      "base.yaml",
      "version: 1\nname: base\ndefault: deny\naskTimeout: 30s\ncommands:\n  deny: [{id: a, prefix: [a]}]\n",
    );
    tmp.write(
      "mid.yaml",
      "version: 1\nname: mid\nextends: [base]\ndefault: ask\ncommands:\n  deny: [{id: b, prefix: [b]}]\n",
    );
    const file = tmp.write(
      "leaf.yaml",
      "version: 1\nname: leaf\nextends: [mid, base]\ncommands:\n  deny: [{id: c, prefix: [c]}]\n",
    );
    const { policies, issues } = loadPolicies([file], fakeAnalyzer);
    expect(issues.size).toBe(0);
    const leaf = policies.get("leaf")!;
    expect(leaf.merged.default).toBe("ask");
    expect(leaf.merged.askTimeoutMs).toBe(30_000);
    expect(leaf.rules.deny.map((r) => `${r.id}@${r.from}`)).toEqual(["a@base", "b@mid", "c@leaf"]);
  });

  test("a cycle is an error naming the cycle", () => {
    tmp.write("cyc-b.yaml", "version: 1\nname: cyc-b\nextends: [cyc-a]\n");
    expect(problems("cyc-a", "version: 1\nname: cyc-a\nextends: [cyc-b]\n")).toEqual([
      "cyc-a.yaml:3:11: extends[0]: extends cycle: cyc-a → cyc-b → cyc-a",
    ]);
  });

  test("a self-extends is a cycle", () => {
    expect(problems("selfish", "version: 1\nname: selfish\nextends: [selfish]\n")[0]).toContain(
      "extends cycle: selfish → selfish",
    );
  });

  test("extending a broken policy is an error", () => {
    tmp.write("broken-base.yaml", "version: 1\nname: broken-base\nnope: 1\n");
    expect(problems("on-broken", "version: 1\nname: on-broken\nextends: [broken-base]\n")).toEqual([
      "on-broken.yaml:3:11: extends[0]: extends broken-base, which has errors",
    ]);
  });

  test("the same rule id in a base and its child is an error", () => {
    tmp.write(
      "dup-base.yaml",
      "version: 1\nname: dup-base\ncommands:\n  deny: [{id: x, prefix: [a]}]\n",
    );
    expect(
      problems(
        "dup-child",
        "version: 1\nname: dup-child\nextends: [dup-base]\ncommands:\n  deny: [{id: x, prefix: [b]}]\n",
      ),
    ).toEqual(["dup-child.yaml:3:10: extends: rule id x is defined twice after merging extends"]);
  });

  test("the version hash follows the merged content, not the file bytes", () => {
    const a = tmp.write("hash-a.yaml", "version: 1\nname: hash-a\ndefault: deny\n");
    const first = loadPolicies([a], fakeAnalyzer).policies.get("hash-a")!.version;
    tmp.write("hash-a.yaml", "# a comment\nversion: 1\nname:   hash-a\ndefault: deny\n");
    expect(loadPolicies([a], fakeAnalyzer).policies.get("hash-a")!.version).toBe(first);
    tmp.write("hash-a.yaml", "version: 1\nname: hash-a\ndefault: allow\n");
    expect(loadPolicies([a], fakeAnalyzer).policies.get("hash-a")!.version).not.toBe(first);
    expect(first).toMatch(/^[0-9a-f]{12}$/);
  });
});

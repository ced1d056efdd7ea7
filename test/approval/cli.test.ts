import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { policyCheck, policyEval, policyReplay } from "../../src/approval/cli.ts";
import { fakeAnalyzer } from "./support/fake-analyzer.ts";
import { tempDir } from "./support/policies.ts";

const tmp = tempDir("codexd-cli-");
afterAll(() => tmp[Symbol.dispose]());
const analyzer = fakeAnalyzer;
const good = tmp.write(
  "good.yaml",
  "version: 1\nname: good\ndefault: allow\ncommands:\n  deny: [{ id: no-publish, prefix: [npm, publish] }]\n  ask: [{ id: ask-push, prefix: [git, push] }]\n",
);
tmp.write(
  "strictish.yaml",
  "version: 1\nname: strictish\ndefault: deny\ncommands:\n  allow: [{ id: ls, prefix: [ls] }]\n",
);
const wt = join(tmp.dir, "wt");
mkdirSync(wt);

describe("policyCheck", () => {
  test("exit 0 and the version of each good policy", async () => {
    const r = await policyCheck([good], { analyzer });
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/^ok good [0-9a-f]{12} \(/);
  });

  test("exit 1 with file:line:col: key: message", async () => {
    const badDir = join(tmp.dir, "bad");
    mkdirSync(badDir);
    const bad = join(badDir, "bad.yaml");
    await Bun.write(bad, "version: 1\nname: bad\ncommands:\n  deny:\n    - regex: '('\n");
    const r = await policyCheck([badDir], { analyzer });
    expect(r.exitCode).toBe(1);
    expect(r.output).toStartWith(`${bad}:5:14: commands.deny[0].regex: not a valid RE2 pattern`);
  });

  test("the spec section's errors keep file:line:col too", async () => {
    const badDir = join(tmp.dir, "bad-spec");
    mkdirSync(badDir);
    const bad = join(badDir, "bad-spec.yaml");
    await Bun.write(
      bad,
      "version: 1\nname: bad-spec\nspec:\n  env:\n    allow: [NPM_TOKEN, 'LD-PRELOAD']\n",
    );
    const r = await policyCheck([badDir], { analyzer });
    expect(r.exitCode).toBe(1);
    expect(r.output).toStartWith(`${bad}:5:24: spec.env.allow[1]: must be a variable name`);
  });

  test("exit 1 for a path that does not exist, and for no paths", async () => {
    expect((await policyCheck([join(tmp.dir, "nope.yaml")], { analyzer })).exitCode).toBe(1);
    expect((await policyCheck([], { analyzer })).exitCode).toBe(1);
  });
});

describe("policyEval", () => {
  const run = (o: { policy?: string; command?: string; file?: string }) =>
    policyEval({ policiesDir: tmp.dir, policy: "good", cwd: wt, analyzer, ...o });

  test("allow exits 0 and prints the decision as JSON", async () => {
    const r = await run({ command: "ls -la" });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.output)).toMatchObject({
      decision: "allow",
      source: "default",
      policy: "good",
    });
  });
  test("deny exits 2, ask exits 3", async () => {
    expect(await run({ command: "npm publish" })).toMatchObject({ exitCode: 2 });
    expect(JSON.parse((await run({ command: "npm publish" })).output).ruleId).toBe("no-publish");
    expect((await run({ command: "git push" })).exitCode).toBe(3);
  });
  test("a file is judged as a file change in cwd", async () => {
    expect((await run({ file: "src/a.ts" })).exitCode).toBe(0);
    expect((await run({ file: ".git/hooks/pre-commit" })).exitCode).toBe(2);
    expect((await run({ file: "../outside.txt" })).exitCode).toBe(2);
  });
  test("an unknown policy or a missing command exits 1", async () => {
    const unknown = await run({ policy: "nope", command: "ls" });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.output).toStartWith("Unknown policy nope");
    expect((await run({})).exitCode).toBe(1);
  });
});

describe("policyReplay", () => {
  const records = [
    {
      sessionId: "s1",
      kind: "command",
      command: "ls",
      cwd: wt,
      decision: "allow",
      ruleId: "default",
    },
    { sessionId: "s1", kind: "command", command: "make build", cwd: wt, decision: "allow" },
    {
      sessionId: "s2",
      kind: "fileChange",
      paths: [join(wt, "a.ts")],
      worktree: wt,
      decision: "allow",
    },
    {
      sessionId: "s2",
      kind: "command",
      command: "npm publish",
      cwd: wt,
      decision: "deny",
      ruleId: "no-publish",
    },
    { sessionId: "s3", kind: "command" },
  ];

  test("prints what would change under another policy and exits 2", async () => {
    const r = await policyReplay({ policiesDir: tmp.dir, policy: "strictish", records, analyzer });
    expect(r.exitCode).toBe(2);
    const lines = r.output.split("\n");
    expect(lines).toContain(
      `s1 command "make build": allow → deny (allow-list: "make build" is not in the allow-list of policy strictish)`,
    );
    expect(lines.some((l) => l.startsWith(`s2 fileChange "${join(wt, "a.ts")}": allow → deny`)))
      .toBe(true);
    expect(lines.some((l) => l.startsWith("record 4: skipped"))).toBe(true);
    expect(lines.at(-1)).toMatch(
      /^5 records, 2 would change under strictish [0-9a-f]{12}, 1 skipped$/,
    );
  });

  test("exits 0 when nothing changes", async () => {
    const r = await policyReplay({
      policiesDir: tmp.dir,
      policy: "good",
      records: records.slice(0, 4),
      analyzer,
    });
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/^4 records, 0 would change under good/);
  });
});

/**
 * Issue #10, finding 13: the codex settings that decide approvals are pinned on every thread
 * start and resume (`approvalsReviewer: "user"`, the approval features), and the drift check
 * verifies the pinned features exist in the installed codex.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { resolveCodexBinary } from "../../../src/provider/codex/binary.ts";
import {
  checkProtocolDrift,
  FEATURES_FILE,
  generateSchema,
  listCodexFeatures,
  loadSchemaDir,
  parseFeatureList,
  type SchemaDocuments,
} from "../../../src/provider/codex/drift.ts";
import { PINNED_FEATURES, planThread } from "../../../src/provider/codex/plan.ts";
import { PROTOCOL_USAGE } from "../../../src/provider/codex/protocol-usage.ts";
import { Spec } from "../../../src/provider/spec.ts";
import {
  asRecord,
  LineClient,
  makeCodexHome,
  makeTempWorktree,
  REPO_ROOT,
  startCodex,
  type TempWorktree,
} from "../../support/codex-harness.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
let codexBin: string;
let schemaDir: string;
let documents: SchemaDocuments;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "HELLO", rounds: [[step.message("hi")]] }],
  });
  worktree = await makeTempWorktree();
  codexBin = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
  schemaDir = await mkdtemp(path.join(tmpdir(), "codexd-schema-"));
  await generateSchema(codexBin, schemaDir);
  documents = await loadSchemaDir(schemaDir);
});

afterAll(async () => {
  await rm(schemaDir, { recursive: true, force: true });
  await worktree?.remove();
  await model?.close();
});

describe("approvalsReviewer is pinned to user (finding 13)", () => {
  test("a codex home routing approvals to auto_review is overridden on start and on resume", async () => {
    const home = await makeCodexHome();
    try {
      await writeFile(path.join(home, "config.toml"), `approvals_reviewer = "auto_review"\n`);
      const params = planThread(Spec.parse({ cwd: worktree.path, prompt: "HELLO" }));
      let threadId: string;
      {
        await using codex = await startCodex({ model, codexHome: home });
        const client = new LineClient(codex);
        await client.initialize();
        // Positive control: without the pin, the home's reviewer decides.
        const bare = asRecord(
          await client.request("thread/start", {
            cwd: worktree.path,
            approvalPolicy: "untrusted",
            sandbox: "workspace-write",
          }),
        );
        expect(bare.approvalsReviewer).toBe("auto_review");
        const pinned = asRecord(await client.request("thread/start", params));
        expect(pinned.approvalsReviewer).toBe("user");
        // The bare thread is stored (one completed turn) to be resumed below.
        threadId = String(asRecord(bare.thread).id);
        await client.runTurn(threadId, "HELLO");
      }
      const resumeIn = async (overrides: Record<string, unknown>) => {
        // A new codex on the same home, as after a daemon restart.
        await using codex = await startCodex({ model, codexHome: home });
        const client = new LineClient(codex);
        await client.initialize();
        return asRecord(await client.request("thread/resume", { threadId, ...overrides }))
          .approvalsReviewer;
      };
      // Positive control for resume: without the pin the thread keeps auto_review.
      expect(await resumeIn({})).toBe("auto_review");
      expect(await resumeIn({ ...params })).toBe("user");
    } finally {
      await rm(home, { recursive: true, force: true, maxRetries: 3 });
    }
  });
});

describe("the drift check covers the pinned features (finding 13)", () => {
  test("the installed codex has every pinned feature, and the full check is clean", async () => {
    const features = await listCodexFeatures(codexBin);
    const names = new Set(features.map((f) => f.name));
    for (const name of Object.keys(PINNED_FEATURES)) expect(names).toContain(name);
    expect(PROTOCOL_USAGE.features).toEqual(Object.keys(PINNED_FEATURES));
    expect(Object.keys(documents)).toContain(FEATURES_FILE);
    const report = await checkProtocolDrift(schemaDir);
    expect(report.problems).toEqual([]);
  });

  test("thread/start and thread/resume must accept approvalsReviewer: user", async () => {
    const usage = {
      ...PROTOCOL_USAGE,
      clientRequests: PROTOCOL_USAGE.clientRequests.filter((u) => u.method.startsWith("thread/")),
    };
    expect((await checkProtocolDrift(documents, usage)).problems).toEqual([]);
    const renamed = {
      ...usage,
      clientRequests: usage.clientRequests.map((u) => ({
        ...u,
        params: [...u.params, { path: "approvalReviewer", values: ["user"] }],
      })),
    };
    const problems = (await checkProtocolDrift(documents, renamed)).problems;
    expect(problems.filter((p) => p.startsWith("thread/start params"))).toEqual([
      'thread/start params: field "approvalReviewer" does not exist (did you mean "approvalsReviewer"?)',
    ]);
  });

  test("a missing, misspelt or removed feature is reported by name", async () => {
    const usage = {
      ...PROTOCOL_USAGE,
      features: ["write_stdin_aproval", "js_repl", "no_such_feature_at_all"],
    };
    const report = await checkProtocolDrift(documents, usage);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      'feature "write_stdin_aproval" does not exist (did you mean "write_stdin_approval"?)',
      'feature "js_repl" is removed: pinning it has no effect',
      'feature "no_such_feature_at_all" does not exist',
    ]);
    const withoutList = { ...documents };
    delete (withoutList as Record<string, unknown>)[FEATURES_FILE];
    const blind = await checkProtocolDrift(withoutList, PROTOCOL_USAGE);
    expect(blind.problems).toEqual([
      expect.stringContaining("cannot check the pinned features unified_exec"),
    ]);
  });

  test("codex features list lines parse into name, stage and state", () => {
    expect(parseFeatureList(
      "unified_exec                             stable             true\n" +
        "exec_permission_approvals                under development  false\n" +
        "garbage line\n",
    )).toEqual([
      { name: "unified_exec", stage: "stable", enabled: true },
      { name: "exec_permission_approvals", stage: "under development", enabled: false },
    ]);
  });
});

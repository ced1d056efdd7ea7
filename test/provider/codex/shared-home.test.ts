/**
 * Can several `codex app-server` processes share one CODEX_HOME? The pool (src/provider/codex/
 * pool.ts) relies on the answer, so it is checked here against the real codex 0.169 and the
 * scripted model:
 *
 * - three app-servers on one home start 24 threads at once (8 each) and run a turn on every one:
 *   all complete, each thread has its own rollout file, every rollout line is whole JSON, and no
 *   child logs a database or lock error;
 * - a thread has one writer at a time, across processes (`<home>/thread-writer-locks`): while
 *   child A holds it loaded (even after `thread/unsubscribe`: codex keeps it 30 minutes) a
 *   `thread/resume` on B fails with "already has an active writer". `thread/archive` on A unloads
 *   it and drops the lock; B then `thread/unarchive`s and resumes it, and its turn sees the whole
 *   conversation (so does C's after B hands it on): what the pool does to move a session;
 * - a child killed with -9 leaves no lock behind: its threads resume on another child at once;
 * - `thread/list` on any child lists the threads of every child (one shared index).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { type ScriptedModel, startScriptedModel } from "../../../src/devtools/scripted-model.ts";
import {
  asRecord,
  type CodexUnderTest,
  LineClient,
  makeCodexHome,
  makeTempWorktree,
  startCodex,
  type TempWorktree,
} from "../../support/codex-harness.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
let home: string;
const children: CodexUnderTest[] = [];
const clients: LineClient[] = [];

beforeAll(async () => {
  model = await startScriptedModel({});
  worktree = await makeTempWorktree();
  home = await makeCodexHome();
  for (let i = 0; i < 3; i++) {
    const codex = await startCodex({ model, codexHome: home });
    children.push(codex);
    const client = new LineClient(codex);
    await client.initialize();
    clients.push(client);
  }
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.close()));
  await worktree?.remove();
  if (home) await rm(home, { recursive: true, force: true });
  await model?.close();
});

function input(text: string) {
  return [{ type: "text", text, text_elements: [] }];
}

async function startThread(client: LineClient): Promise<string> {
  const started = asRecord(await client.request("thread/start", { cwd: worktree.path }, 30_000));
  return String(asRecord(started.thread).id);
}

async function turn(client: LineClient, threadId: string, text: string): Promise<string> {
  const started = asRecord(
    await client.request("turn/start", { threadId, input: input(text) }, 30_000),
  );
  const turnId = String(asRecord(started.turn).id);
  const completed = await client.waitForNotification(
    "turn/completed",
    (p) => p.threadId === threadId && asRecord(p.turn).id === turnId,
    30_000,
  );
  return String(asRecord(asRecord(completed.params).turn).status);
}

/** The texts of the user messages the model got in the request for `marker`'s turn. */
function conversationOf(marker: string): string {
  const request = model.requests.findLast((r) =>
    r.facts?.latestUserText !== undefined && r.facts.latestUserText.includes(marker)
  );
  expect(request).toBeDefined();
  return JSON.stringify(request!.body?.input ?? []);
}

async function rolloutFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".jsonl"))
    .map((e) => path.join(e.parentPath, e.name));
}

test(
  "three app-servers on one CODEX_HOME run 24 concurrent threads without a conflict",
  async () => {
    const runs = clients.flatMap((client, c) =>
      Array.from({ length: 8 }, async (_, i) => {
        const threadId = await startThread(client);
        return { threadId, status: await turn(client, threadId, `CONCURRENT-${c}-${i}`) };
      })
    );
    const results = await Promise.all(runs);
    expect(results.map((r) => r.status)).toEqual(Array(24).fill("completed"));
    expect(new Set(results.map((r) => r.threadId)).size).toBe(24);

    const files = await rolloutFiles(path.join(home, "sessions"));
    for (const { threadId } of results) {
      expect(files.filter((f) => f.includes(threadId))).toHaveLength(1);
    }
    for (const file of files) {
      const lines = (await readFile(file, "utf8")).split("\n").filter((l) => l !== "");
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    }
    for (const codex of children) {
      expect(codex.stderrText()).not.toMatch(/database is locked|SQLITE_BUSY|lock poisoned/i);
    }
  },
  120_000,
);

test(
  "one writer per thread: a child holding it blocks a resume elsewhere until it archives it",
  async () => {
    const [a, b, c] = clients;
    const threadId = await startThread(a);
    expect(await turn(a, threadId, "HOP-ONE on A")).toBe("completed");
    // Unsubscribing is not letting go: codex keeps the thread loaded (30 min), and locked.
    await a.request("thread/unsubscribe", { threadId });
    expect(asRecord(await a.request("thread/loaded/list", {})).data).toContain(threadId);
    await expect(b.request("thread/resume", { threadId }, 30_000)).rejects.toThrow(
      /already has an active writer/,
    );
    expect(await readdir(path.join(home, "thread-writer-locks"))).not.toHaveLength(0);

    // thread/archive unloads it and drops the lock; another child unarchives and resumes it.
    await a.request("thread/archive", { threadId });
    expect(asRecord(await a.request("thread/loaded/list", {})).data).not.toContain(threadId);
    await expect(b.request("thread/resume", { threadId }, 30_000)).rejects.toThrow(/is archived/);
    await b.request("thread/unarchive", { threadId }, 30_000);
    const onB = asRecord(await b.request("thread/resume", { threadId }, 30_000));
    expect(asRecord(onB.thread).id).toBe(threadId);
    expect(await turn(b, threadId, "HOP-TWO on B")).toBe("completed");
    expect(conversationOf("HOP-TWO")).toContain("HOP-ONE on A");

    await b.request("thread/archive", { threadId });
    await c.request("thread/unarchive", { threadId }, 30_000);
    await c.request("thread/resume", { threadId }, 30_000);
    expect(await turn(c, threadId, "HOP-THREE on C")).toBe("completed");
    const seen = conversationOf("HOP-THREE");
    expect(seen).toContain("HOP-ONE on A");
    expect(seen).toContain("echo: HOP-TWO on B"); // B's answer, read back from the rollout

    // One rollout file for the thread, written by all three in turn.
    const files = (await rolloutFiles(path.join(home, "sessions"))).filter((f) =>
      f.includes(threadId)
    );
    expect(files).toHaveLength(1);
    const text = await readFile(files[0], "utf8");
    for (const marker of ["HOP-ONE", "HOP-TWO", "HOP-THREE"]) expect(text).toContain(marker);
  },
  120_000,
);

test(
  "a child killed with -9 leaves no lock behind: its threads resume at once elsewhere",
  async () => {
    const doomed = await startCodex({ model, codexHome: home });
    children.push(doomed);
    const client = new LineClient(doomed);
    await client.initialize();
    const threadId = await startThread(client);
    expect(await turn(client, threadId, "BEFORE-KILL")).toBe("completed");
    await expect(clients[1].request("thread/resume", { threadId }, 30_000)).rejects.toThrow(
      /already has an active writer/,
    );
    doomed.kill("SIGKILL");
    await doomed.exited;
    await clients[1].request("thread/resume", { threadId }, 30_000);
    expect(await turn(clients[1], threadId, "AFTER-KILL")).toBe("completed");
    expect(conversationOf("AFTER-KILL")).toContain("BEFORE-KILL");
  },
  120_000,
);

test("thread/list on any child lists the threads every child started", async () => {
  const ids = [await startThread(clients[0]), await startThread(clients[1])];
  await turn(clients[0], ids[0], "LISTED-A");
  await turn(clients[1], ids[1], "LISTED-B");
  const listed = asRecord(await clients[2].request("thread/list", { limit: 100 }, 30_000));
  const found = (listed.data as Array<Record<string, unknown>>).map((t) => t.id);
  expect(found).toEqual(expect.arrayContaining(ids));
}, 120_000);

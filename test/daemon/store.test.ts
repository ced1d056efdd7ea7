import { describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Store, StoreCorrupt, TEXT_COMMIT_MS } from "../../src/daemon/store.ts";

const NEW = {
  threadId: "",
  spec: { cwd: "/wt", prompt: "hi", env: { TOKEN: "[redacted]" } },
  policy: "default",
  policyVersion: "v1",
  status: "running" as const,
  createdAt: "2026-11-23T00:00:00.000Z",
};

function event(sessionId: string, type: string, extra: Record<string, unknown> = {}) {
  return { type, sessionId, ts: "2026-11-23T00:00:01.000Z", ...extra };
}

async function withDir<T>(fn: (dir: string) => Promise<T> | T): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), "codexd-store-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("Store", () => {
  test("sessions round-trip, patch only what is given, newest first", () => {
    using store = Store.open(":memory:");
    store.createSession({ id: "a", ...NEW });
    store.createSession({ id: "b", ...NEW, createdAt: "2026-11-23T00:00:05.000Z" });
    store.updateSession("a", {
      threadId: "thr_1",
      status: "idle",
      usage: { inputTokens: 3, cachedInputTokens: 1, outputTokens: 2, reasoningTokens: 0 },
      currentTurnId: null,
      lastEventAt: "2026-11-23T00:00:02.000Z",
    });
    const a = store.getSession("a")!;
    expect(a).toMatchObject({
      id: "a",
      threadId: "thr_1",
      status: "idle",
      policy: "default",
      spec: NEW.spec,
      usage: { inputTokens: 3, outputTokens: 2 },
      lastEventAt: "2026-11-23T00:00:02.000Z",
      failure: null,
    });
    expect(store.getSession("missing")).toBeUndefined();
    expect(store.listSessions().map((s) => s.id)).toEqual(["b", "a"]);
  });

  test("events get contiguous per-session seqs and page after a cursor", () => {
    using store = Store.open(":memory:");
    store.createSession({ id: "a", ...NEW });
    store.createSession({ id: "b", ...NEW });
    for (let i = 0; i < 5; i++) store.appendEvent(event("a", "text.delta", { text: `${i}` }));
    const b1 = store.appendEvent(event("b", "message", { text: "x" }));
    expect(b1.seq).toBe(1);
    expect(store.lastSeq("a")).toBe(5);
    expect(store.eventsAfter("a", 2).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(store.eventsAfter("a", 0, 2).map((e) => e.text)).toEqual(["0", "1"]);
    expect(store.eventsOfType("b", "message")).toEqual([
      { type: "message", sessionId: "b", ts: "2026-11-23T00:00:01.000Z", text: "x", seq: 1 },
    ]);
  });

  test("state survives reopening; seqs continue and are never reused after pruning", async () => {
    await withDir((dir) => {
      const file = path.join(dir, "codexd.db");
      {
        using store = Store.open(file);
        store.createSession({ id: "a", ...NEW });
        for (let i = 0; i < 10; i++) store.appendEvent(event("a", "text.delta"));
        expect(store.pruneEvents("a", 3)).toBe(7);
        expect(store.pruneEvents("a", 0)).toBe(2); // the newest event always stays
      }
      using store = Store.open(file);
      expect(store.lastSeq("a")).toBe(10);
      expect(store.appendEvent(event("a", "message")).seq).toBe(11);
      expect(store.eventsAfter("a", 0).map((e) => e.seq)).toEqual([10, 11]);
    });
  });

  test("after a restart running and idle sessions become interrupted", () => {
    using store = Store.open(":memory:");
    store.createSession({ id: "run", ...NEW });
    store.createSession({ id: "idle", ...NEW, status: "idle" });
    store.createSession({ id: "stop", ...NEW, status: "stopped" });
    store.updateSession("run", { currentTurnId: "t1" });
    expect(store.markRunningAsInterrupted().sort()).toEqual(["idle", "run"]);
    expect(store.getSession("run")).toMatchObject({ status: "interrupted", currentTurnId: null });
    expect(store.getSession("stop")!.status).toBe("stopped");
  });

  test("a row codexd cannot read fails loudly with StoreCorrupt", async () => {
    await withDir((dir) => {
      const file = path.join(dir, "codexd.db");
      Store.open(file).close();
      const raw = new DatabaseSync(file);
      raw.prepare(
        "INSERT INTO sessions (id, thread_id, spec, policy, policy_version, status, created_at) VALUES ('x', '', '{', 'p', 'v', 'running', 't')",
      ).run();
      raw.close();
      using store = Store.open(file);
      expect(() => store.getSession("x")).toThrow(StoreCorrupt);
    });
  });

  test("a database from a newer codexd is refused", async () => {
    await withDir((dir) => {
      const file = path.join(dir, "codexd.db");
      const raw = new DatabaseSync(file);
      raw.exec("PRAGMA user_version = 99");
      raw.close();
      expect(() => Store.open(file)).toThrow(/schema version 99 is newer/);
    });
  });

  test("writes of one event-loop turn are one transaction; afterCommit waits for it", async () => {
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.db");
      using store = Store.open(file);
      store.createSession({ id: "a", ...NEW });
      store.flush();
      const other = new DatabaseSync(file);
      const count = () => other.prepare("SELECT COUNT(*) AS n FROM events").get()?.n;
      const order: string[] = [];
      for (let i = 0; i < 3; i++) store.appendEvent(event("a", "tool.call"));
      store.afterCommit(() => order.push(`committed, others see ${count()}`));
      expect(store.eventsAfter("a", 0)).toHaveLength(3); // this connection sees its own writes
      expect(count()).toBe(0); // nobody else does yet
      expect(order).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(order).toEqual(["committed, others see 3"]);
      store.afterCommit(() => order.push("nothing pending: at once"));
      expect(order).toHaveLength(2);
      other.close();
    });
  });

  test("streamed text waits for its timed commit; any other event takes it along at once", async () => {
    await withDir(async (dir) => {
      const file = path.join(dir, "codexd.db");
      const timers: Array<{ ms: number; fn: () => void; cancelled: boolean }> = [];
      using store = Store.open(file, {
        setTimer: (fn, ms) => {
          const timer = { ms, fn, cancelled: false };
          timers.push(timer);
          return () => (timer.cancelled = true);
        },
      });
      store.createSession({ id: "a", ...NEW });
      store.flush();
      const other = new DatabaseSync(file);
      const seen = () =>
        other.prepare("SELECT type FROM events ORDER BY seq").all().map((r) => r.type);
      const tick = () => new Promise((resolve) => setImmediate(resolve));

      store.appendEvent(event("a", "text.delta"));
      store.appendEvent(event("a", "text.delta"));
      await tick();
      expect(seen()).toEqual([]); // still waiting: one timer for both
      expect(timers.map((t) => t.ms)).toEqual([TEXT_COMMIT_MS]);
      timers[0]!.fn();
      expect(seen()).toEqual(["text.delta", "text.delta"]);

      store.appendEvent(event("a", "text.delta"));
      store.appendEvent(event("a", "result"));
      await tick();
      expect(seen()).toEqual(["text.delta", "text.delta", "text.delta", "result"]);
      expect(timers[1]!.cancelled).toBe(true); // the result's commit took the text along
      other.close();
    });
  });

  test("the type index leaves streamed text out, and lookups by type still find every event", async () => {
    await withDir((dir) => {
      const file = path.join(dir, "codexd.db");
      const old = new DatabaseSync(file);
      old.exec(`CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
        type TEXT NOT NULL, ts TEXT NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
        CREATE INDEX events_by_type ON events (session_id, type, seq);
        PRAGMA user_version = 3;`);
      old.close();
      using store = Store.open(file, { textCommitMs: 0 });
      store.createSession({ id: "a", ...NEW });
      for (const type of ["text.delta", "result", "text.delta", "result"]) {
        store.appendEvent(event("a", type));
      }
      store.flush();
      expect(store.eventsOfType("a", "result").map((e) => e.seq)).toEqual([2, 4]);
      expect(store.eventsOfType("a", "text.delta").map((e) => e.seq)).toEqual([1, 3]);
      const raw = new DatabaseSync(file);
      const indexes = raw.prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'",
      ).all();
      raw.close();
      expect(indexes.map((i) => i.name)).toEqual(["events_by_type_but_text"]);
      expect(String(indexes[0]!.sql)).toContain("WHERE type <> 'text.delta'");
    });
  });
});

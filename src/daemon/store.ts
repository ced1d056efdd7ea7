/**
 * Durable state in `<stateDir>/codexd.db` (node:sqlite, WAL): sessions, their events and the
 * tokens they spent (for the budgets).
 *
 * One daemon owns a state dir (the pid ledger enforces it), so sequence numbers are allocated
 * here, in memory, from the stored maximum: an event's `seq` increases per session and is never
 * reused, even after retention pruned older events. Rows are validated with zod on the way out,
 * so a database edited by hand (or by an older codexd) fails loudly instead of leaking bad data.
 *
 * Writes are grouped: the first write of an event-loop turn opens a transaction and a
 * `setImmediate` commits it, so a burst of streamed deltas costs one commit instead of one per
 * event. Reads on this connection see the open transaction's rows. Whatever must only happen once
 * a write is durable (handing an event to SSE clients) waits for `afterCommit`.
 */
import { chmodSync, closeSync, existsSync, openSync, statSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { z } from "zod";
import { CodexdError } from "../errors.ts";
import type { StoredEvent } from "../api/schemas.ts";
import { rememberJson } from "./event-json.ts";
import { SessionStatus } from "../api/schemas.ts";

/**
 * 2: token spend (`token_spend`, `session_spend`); 3: the last usage total codex reported for each
 * session's thread (`thread_usage`); 4: the type index without streamed text
 * (`events_by_type_but_text` replaces `events_by_type`). An older database gains the tables and
 * the new index.
 */
const SCHEMA_VERSION = 4;

const TEXT_DELTA = "text.delta";

/**
 * How long a streamed piece of text may wait for its commit (and so for its readers, who get
 * events once durable). One commit per event costs about 30 µs of CPU and more of blocking I/O;
 * codex streams a delta every few hundred µs, so a commit per delta was most of the daemon's
 * work in a stream. Any other event still commits at the end of its event-loop turn, taking the
 * waiting text with it in order, so a turn's result is never held back.
 */
export const TEXT_COMMIT_MS = 4;

const UsageRow = z.object({
  inputTokens: z.number(),
  cachedInputTokens: z.number(),
  outputTokens: z.number(),
  reasoningTokens: z.number(),
});

export interface SessionRow {
  id: string;
  threadId: string;
  /** The spec as given, with secret values (env) redacted. */
  spec: Record<string, unknown>;
  policy: string;
  policyVersion: string;
  status: SessionStatus;
  usage?: z.infer<typeof UsageRow>;
  currentTurnId?: string | null;
  currentTurnStartedAt?: string | null;
  createdAt: string;
  lastEventAt?: string | null;
  failure?: string | null;
}

export type NewSession = Pick<
  SessionRow,
  "id" | "threadId" | "spec" | "policy" | "policyVersion" | "status" | "createdAt"
>;
export type SessionPatch = Partial<Omit<SessionRow, "id" | "createdAt">>;

/** An event as appended: the store adds `seq`. */
export type EventInput = { type: string; sessionId: string; ts: string; [key: string]: unknown };

/** The database holds something codexd cannot read. */
export class StoreCorrupt extends CodexdError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("store_corrupt", message, options);
  }
}

const SessionRecord = z.object({
  id: z.string(),
  thread_id: z.string(),
  spec: z.string(),
  policy: z.string(),
  policy_version: z.string(),
  status: SessionStatus,
  usage: z.string().nullable(),
  current_turn_id: z.string().nullable(),
  current_turn_started_at: z.string().nullable(),
  created_at: z.string(),
  last_event_at: z.string().nullable(),
  failure: z.string().nullable(),
});

const EventRecord = z.object({ body: z.string() });
const StoredEventJson = z.looseObject({
  seq: z.number(),
  type: z.string(),
  sessionId: z.string(),
  ts: z.string(),
});
const MaxSeq = z.object({ session_id: z.string(), seq: z.number() });
const SpendRecord = z.object({ fleet: z.string(), at: z.number(), tokens: z.number() });
const SessionSpendRecord = z.object({ tokens: z.number() });
const ThreadUsageRecord = z.object({ thread_id: z.string(), total: z.string() });

/** Tokens one model response spent, as counted against the budgets (src/daemon/budgets.ts). */
export interface SpendRow {
  fleet: string;
  sessionId: string;
  /** Milliseconds since the epoch. */
  at: number;
  tokens: number;
}
const SpecJson = z.record(z.string(), z.unknown());

/** Column of each patchable field, and how its value is stored. */
const COLUMNS: Record<keyof SessionPatch, [string, (value: unknown) => unknown]> = {
  threadId: ["thread_id", (v) => v],
  spec: ["spec", (v) => JSON.stringify(v)],
  policy: ["policy", (v) => v],
  policyVersion: ["policy_version", (v) => v],
  status: ["status", (v) => v],
  usage: ["usage", (v) => (v === undefined || v === null ? null : JSON.stringify(v))],
  currentTurnId: ["current_turn_id", (v) => v ?? null],
  currentTurnStartedAt: ["current_turn_started_at", (v) => v ?? null],
  lastEventAt: ["last_event_at", (v) => v ?? null],
  failure: ["failure", (v) => v ?? null],
};

export interface StoreOptions {
  /** A grouped commit failed (disk full, ...): its writes are lost and nobody was told of them. */
  onCommitError?: (error: unknown) => void;
  /** TEXT_COMMIT_MS unless given; 0 commits streamed text like any other event. */
  textCommitMs?: number;
  /** Runs `fn` after `ms` (setTimeout unless given); returns what cancels it. */
  setTimer?: (fn: () => void, ms: number) => () => void;
}

const defaultTimer = (fn: () => void, ms: number): () => void => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
};

export class Store {
  readonly #db: DatabaseSync;
  readonly #options: StoreOptions;
  #inTransaction = false;
  /** The commit scheduled for the end of this event-loop turn, if any. */
  #commitSoon: ReturnType<typeof setImmediate> | undefined;
  /** Cancels the timed commit streamed text waits for, when one is set. */
  #cancelTextCommit: (() => void) | undefined;
  #afterCommit: Array<() => void> = [];
  readonly #lastSeq = new Map<string, number>();
  readonly #insertEvent: StatementSync;
  readonly #begin: StatementSync;
  readonly #commit: StatementSync;
  readonly #selectAfter: StatementSync;
  readonly #selectSession: StatementSync;
  /** Prepared once per SQL text: compiling a statement costs more than running most of these. */
  readonly #statements = new Map<string, StatementSync>();
  #closed = false;

  private constructor(db: DatabaseSync, options: StoreOptions) {
    this.#db = db;
    this.#options = options;
    migrate(db);
    this.#begin = db.prepare("BEGIN");
    this.#commit = db.prepare("COMMIT");
    this.#insertEvent = db.prepare(
      "INSERT INTO events (session_id, seq, type, ts, body) VALUES (?, ?, ?, ?, ?)",
    );
    this.#selectAfter = db.prepare(
      "SELECT body FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
    );
    this.#selectSession = db.prepare("SELECT * FROM sessions WHERE id = ?");
    // Retention never deletes a session's newest event, so the stored maximum is the last seq.
    const maxima = db.prepare("SELECT session_id, MAX(seq) AS seq FROM events GROUP BY session_id");
    for (const row of maxima.all()) {
      const { session_id, seq } = MaxSeq.parse(row);
      this.#lastSeq.set(session_id, seq);
    }
  }

  /**
   * Opens (creating if needed) the database at `path`; `:memory:` for tests. The file and its
   * `-wal` and `-shm` companions are 0600 (SQLite gives the companions the database's mode),
   * whatever they were before: they hold every session's events.
   */
  static open(path: string, options: StoreOptions = {}): Store {
    let db: DatabaseSync;
    const onDisk = path !== ":memory:" && !path.startsWith("file:");
    try {
      if (onDisk && !existsSync(path)) closeSync(openSync(path, "a", 0o600));
      db = new DatabaseSync(path);
    } catch (error) {
      throw new StoreCorrupt(`Cannot open state database ${path}: ${String(error)}`, {
        cause: error,
      });
    }
    const store = new Store(db, options);
    if (onDisk) {
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        if (existsSync(file) && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
      }
    }
    return store;
  }

  /**
   * Runs `fn` inside the open transaction, opening it if needed, and schedules its commit: at
   * the end of this event-loop turn, or within `textCommitMs` for streamed text (`text`).
   */
  #write<T>(fn: () => T, text = false): T {
    if (!this.#inTransaction) {
      this.#begin.run();
      this.#inTransaction = true;
    }
    const wait = text ? this.#options.textCommitMs ?? TEXT_COMMIT_MS : 0;
    if (wait > 0) {
      this.#cancelTextCommit ??= (this.#options.setTimer ?? defaultTimer)(() => this.flush(), wait);
    } else {
      this.#commitSoon ??= setImmediate(() => this.flush());
    }
    return fn();
  }

  #prepared(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Commits the open transaction now, then runs what waited for it. Idempotent. */
  flush(): void {
    if (this.#commitSoon !== undefined) clearImmediate(this.#commitSoon);
    this.#commitSoon = undefined;
    this.#cancelTextCommit?.();
    this.#cancelTextCommit = undefined;
    if (!this.#inTransaction || this.#closed) return;
    this.#inTransaction = false;
    const waiting = this.#afterCommit;
    this.#afterCommit = [];
    try {
      this.#commit.run();
    } catch (error) {
      try {
        this.#db.exec("ROLLBACK");
      } catch {
        // nothing left to roll back
      }
      this.#options.onCommitError?.(error);
      return;
    }
    for (const fn of waiting) fn();
  }

  /** Runs `fn` once every write made so far is committed (at once when none is pending). */
  afterCommit(fn: () => void): void {
    if (this.#inTransaction) this.#afterCommit.push(fn);
    else fn();
  }

  createSession(row: NewSession): void {
    this.#write(() =>
      this.#prepared(
        `INSERT INTO sessions (id, thread_id, spec, policy, policy_version, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        row.id,
        row.threadId,
        JSON.stringify(row.spec),
        row.policy,
        row.policyVersion,
        row.status,
        row.createdAt,
      )
    );
    this.#lastSeq.set(row.id, 0);
  }

  updateSession(id: string, patch: SessionPatch): void {
    const keys = (Object.keys(patch) as (keyof SessionPatch)[]).filter((k) => k in COLUMNS);
    if (keys.length === 0) return;
    const sql = `UPDATE sessions SET ${
      keys.map((k) => `${COLUMNS[k][0]} = ?`).join(", ")
    } WHERE id = ?`;
    const statement = this.#prepared(sql);
    const values = keys.map((k) => COLUMNS[k][1](patch[k]) as string | number | null);
    this.#write(() => statement.run(...values, id));
  }

  getSession(id: string): SessionRow | undefined {
    const row = this.#selectSession.get(id);
    return row === undefined ? undefined : toSessionRow(row);
  }

  /** Every session, newest first. */
  listSessions(): SessionRow[] {
    return this.#prepared("SELECT * FROM sessions ORDER BY created_at DESC, id").all()
      .map(toSessionRow);
  }

  /** The last sequence number given out in a session (0 before its first event). */
  lastSeq(sessionId: string): number {
    return this.#lastSeq.get(sessionId) ?? 0;
  }

  /** Stores an event under the session's next sequence number and returns it as stored. */
  appendEvent(event: EventInput): StoredEvent {
    const seq = this.lastSeq(event.sessionId) + 1;
    const stored = { ...event, seq } as StoredEvent;
    const body = JSON.stringify(stored);
    this.#write(
      () => this.#insertEvent.run(event.sessionId, seq, event.type, event.ts, body),
      event.type === TEXT_DELTA,
    );
    rememberJson(stored, body);
    this.#lastSeq.set(event.sessionId, seq);
    return stored;
  }

  /** Events with `seq > after`, oldest first, at most `limit`. */
  eventsAfter(sessionId: string, after: number, limit = Number.MAX_SAFE_INTEGER): StoredEvent[] {
    return this.#selectAfter.all(sessionId, after, limit).map(toEvent);
  }

  eventsOfType(sessionId: string, type: string): StoredEvent[] {
    // The repeated condition lets SQLite use the partial index (it must see the index's WHERE).
    const sql = type === TEXT_DELTA
      ? "SELECT body FROM events WHERE session_id = ? AND type = ? ORDER BY seq"
      : `SELECT body FROM events WHERE session_id = ? AND type = ? AND type <> '${TEXT_DELTA}' ` +
        "ORDER BY seq";
    return this.#prepared(sql).all(sessionId, type).map(toEvent);
  }

  /** Keeps the newest `keep` (at least 1) events of a session; returns how many were deleted. */
  pruneEvents(sessionId: string, keep: number): number {
    const cutoff = this.lastSeq(sessionId) - Math.max(1, keep);
    if (cutoff <= 0) return 0;
    const result = this.#write(() =>
      this.#prepared("DELETE FROM events WHERE session_id = ? AND seq <= ?").run(
        sessionId,
        cutoff,
      )
    );
    return Number(result.changes);
  }

  /**
   * Records a response's tokens: in the fleet's ledger (read back for the rolling windows) and
   * in the session's lifetime total, in the current grouped transaction.
   */
  recordSpend(row: SpendRow): void {
    this.#write(() => {
      this.#prepared(
        "INSERT INTO token_spend (fleet, session_id, at, tokens) VALUES (?, ?, ?, ?)",
      ).run(row.fleet, row.sessionId, row.at, row.tokens);
      this.#prepared(
        `INSERT INTO session_spend (session_id, tokens) VALUES (?, ?)
         ON CONFLICT (session_id) DO UPDATE SET tokens = tokens + excluded.tokens`,
      ).run(row.sessionId, row.tokens);
    });
  }

  /** The ledger's entries after `after` (ms), oldest first. */
  spendSince(after: number): Array<Omit<SpendRow, "sessionId">> {
    return this.#prepared(
      "SELECT fleet, at, tokens FROM token_spend WHERE at > ? ORDER BY at, rowid",
    ).all(after).map((row) => SpendRecord.parse(row));
  }

  /** Tokens a session spent over its whole life. */
  sessionSpend(sessionId: string): number {
    const row = this.#prepared("SELECT tokens FROM session_spend WHERE session_id = ?")
      .get(sessionId);
    return row === undefined ? 0 : SessionSpendRecord.parse(row).tokens;
  }

  /** The cumulative usage codex last reported for the session's thread. */
  threadUsage(
    sessionId: string,
  ): { threadId: string; total: z.infer<typeof UsageRow> } | undefined {
    const row = this.#prepared("SELECT thread_id, total FROM thread_usage WHERE session_id = ?")
      .get(sessionId);
    if (row === undefined) return undefined;
    const r = ThreadUsageRecord.parse(row);
    return {
      threadId: r.thread_id,
      total: parseJson(r.total, UsageRow, `session ${sessionId} total`),
    };
  }

  setThreadUsage(sessionId: string, threadId: string, total: z.infer<typeof UsageRow>): void {
    this.#write(() =>
      this.#prepared(
        `INSERT INTO thread_usage (session_id, thread_id, total) VALUES (?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET thread_id = excluded.thread_id, total = excluded.total`,
      ).run(sessionId, threadId, JSON.stringify(total))
    );
  }

  /** Drops ledger entries at or before `before` (ms): no window reaches back that far. */
  pruneSpend(before: number): number {
    const result = this.#write(() =>
      this.#prepared("DELETE FROM token_spend WHERE at <= ?").run(before)
    );
    return Number(result.changes);
  }

  /**
   * After a restart no codex thread is loaded: sessions that were `running` or `idle` become
   * `interrupted` (resumable). Returns their ids.
   */
  markRunningAsInterrupted(): string[] {
    const rows = this.#prepared(
      "SELECT id FROM sessions WHERE status IN ('running', 'idle')",
    ).all().map((row) => z.object({ id: z.string() }).parse(row).id);
    this.#write(() =>
      this.#prepared(
        `UPDATE sessions SET status = 'interrupted', current_turn_id = NULL
         WHERE status IN ('running', 'idle')`,
      ).run()
    );
    return rows;
  }

  /** Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    this.#db.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

function migrate(db: DatabaseSync): void {
  db.exec("PRAGMA journal_mode = WAL");
  // NORMAL in WAL: a committed event survives a crash of this process (SIGKILL included);
  // only a power cut may lose the last transactions.
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA busy_timeout = 5000");
  const version = z.object({ user_version: z.number() })
    .parse(db.prepare("PRAGMA user_version").get()).user_version;
  if (version > SCHEMA_VERSION) {
    throw new StoreCorrupt(
      `Cannot open state database: schema version ${version} is newer than this codexd (${SCHEMA_VERSION})`,
    );
  }
  if (version === SCHEMA_VERSION) return;
  db.exec(`
    CREATE TABLE IF NOT EXISTS sessions (
      id TEXT PRIMARY KEY,
      thread_id TEXT NOT NULL,
      spec TEXT NOT NULL,
      policy TEXT NOT NULL,
      policy_version TEXT NOT NULL,
      status TEXT NOT NULL,
      usage TEXT,
      current_turn_id TEXT,
      current_turn_started_at TEXT,
      created_at TEXT NOT NULL,
      last_event_at TEXT,
      failure TEXT
    );
    CREATE TABLE IF NOT EXISTS events (
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      type TEXT NOT NULL,
      ts TEXT NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
    -- Streamed text is most of the events and never looked up by type: leaving it out of the
    -- index halves the pages each of its commits writes (scripts/bench: throughput).
    DROP INDEX IF EXISTS events_by_type;
    CREATE INDEX IF NOT EXISTS events_by_type_but_text ON events (session_id, type, seq)
      WHERE type <> 'text.delta';
    CREATE TABLE IF NOT EXISTS token_spend (
      fleet TEXT NOT NULL,
      session_id TEXT NOT NULL,
      at INTEGER NOT NULL,
      tokens INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS token_spend_by_time ON token_spend (at);
    CREATE TABLE IF NOT EXISTS session_spend (
      session_id TEXT PRIMARY KEY,
      tokens INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS thread_usage (
      session_id TEXT PRIMARY KEY,
      thread_id TEXT NOT NULL,
      total TEXT NOT NULL
    ) WITHOUT ROWID;
    PRAGMA user_version = ${SCHEMA_VERSION};
  `);
}

function toSessionRow(raw: unknown): SessionRow {
  const parsed = SessionRecord.safeParse(raw);
  if (!parsed.success) {
    throw new StoreCorrupt(`Cannot read a session row: ${parsed.error.message}`);
  }
  const r = parsed.data;
  return {
    id: r.id,
    threadId: r.thread_id,
    spec: parseJson(r.spec, SpecJson, `session ${r.id} spec`),
    policy: r.policy,
    policyVersion: r.policy_version,
    status: r.status,
    ...(r.usage !== null && { usage: parseJson(r.usage, UsageRow, `session ${r.id} usage`) }),
    currentTurnId: r.current_turn_id,
    currentTurnStartedAt: r.current_turn_started_at,
    createdAt: r.created_at,
    lastEventAt: r.last_event_at,
    failure: r.failure,
  };
}

function toEvent(raw: unknown): StoredEvent {
  const { body } = EventRecord.parse(raw);
  return rememberJson(parseJson(body, StoredEventJson, "an event") as StoredEvent, body);
}

function parseJson<T>(text: string, schema: z.ZodType<T>, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StoreCorrupt(`Cannot read ${what}: invalid JSON`, { cause: error });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new StoreCorrupt(`Cannot read ${what}: ${parsed.error.message}`);
  return parsed.data;
}

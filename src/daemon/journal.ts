/**
 * The event journal: every session event is written to the store first, then, once committed,
 * handed to live subscribers (SSE clients). A subscriber replays stored events after its cursor, then follows
 * live ones without a gap: JavaScript runs the store read and the switch to live mode in one
 * synchronous step, so no append can fall between them.
 *
 * Each live subscriber has a bounded buffer. A reader that falls behind (a slow SSE client) does
 * not grow memory: its buffer is dropped and it goes back to reading pages from the database
 * until it has caught up again, without slowing the writer or other sessions.
 */
import type { StoredEvent } from "../api/schemas.ts";
import { type Scrubber, scrubberFor } from "./redact.ts";
import type { EventInput, Store } from "./store.ts";

export interface JournalOptions {
  /** Events kept per session; older ones are pruned. Unlimited when undefined. */
  retention?: number;
  /** Live events buffered per subscriber before it falls back to reading the database. */
  bufferLimit?: number;
  now?: () => Date;
}

export interface SubscribeOptions {
  /** Deliver only events with a larger seq. */
  after: number;
  /** Ends the subscription (the HTTP client left). */
  signal?: AbortSignal;
}

/** What callers append: the journal adds `sessionId`, `ts` (when missing) and `seq`. */
export interface JournalEntry {
  readonly type: string;
  readonly ts?: string;
}

const PAGE_SIZE = 256;
const DEFAULT_BUFFER_LIMIT = 1024;
/** Retention is enforced every this many appends of a session, not on each one. */
const PRUNE_EVERY = 256;

export class Journal {
  readonly #store: Store;
  readonly #options: JournalOptions;
  readonly #live = new Map<string, Set<Subscription>>();
  /** Sessions whose stream has ended (stopped); subscribers finish once caught up. */
  readonly #closed = new Set<string>();
  /** Sessions reopened in this process, so a stale `stopped` row does not close them. */
  readonly #open = new Set<string>();
  readonly #scrubbers = new Map<string, Scrubber>();
  /**
   * Per session, the streamed texts (by item) whose tail is held back because it could be the
   * start of a secret (see redact.ts): shown with the stream's next piece, or when it ends.
   */
  readonly #held = new Map<string, Map<string, HeldText>>();
  /** Times a subscriber overflowed its buffer and went back to the database. */
  overflows = 0;

  constructor(store: Store, options: JournalOptions = {}) {
    this.#store = store;
    this.#options = options;
  }

  /**
   * Scrubs secrets from every later event of the session (see redact.ts). A session resumed with
   * another spec keeps being scrubbed of the earlier spec's secrets too: its thread still holds
   * them (in earlier commands and outputs) and the model may repeat them.
   */
  setScrubber(sessionId: string, scrub: Scrubber | undefined): void {
    this.#flush(sessionId); // what the previous scrubber held, shown under it
    const previous = this.#scrubbers.get(sessionId);
    const merged = previous && scrub
      ? scrubberFor([...new Set([...previous.secrets, ...scrub.secrets])])
      : scrub ?? previous;
    if (merged) this.#scrubbers.set(sessionId, merged);
  }

  /** A value served outside any one session (codex's stderr), scrubbed of every known secret. */
  scrubAll<T>(value: T): T {
    let out = value;
    for (const scrub of this.#scrubbers.values()) out = scrub(out);
    return out;
  }

  /** A value about to be served for the session (not journaled), with its secrets scrubbed. */
  scrub<T>(sessionId: string, value: T): T {
    const scrub = this.#scrubbers.get(sessionId);
    return scrub ? scrub(value) : value;
  }

  /**
   * Writes the event, then wakes the session's subscribers. Returns it as stored. A streamed
   * piece of text (`text.delta`) may be stored shorter than given, even empty: a tail that could
   * start a secret is held back and shown with the next piece, or in a `text.delta` of its own
   * just before the message it belongs to (or the turn's end).
   */
  append(sessionId: string, entry: JournalEntry): StoredEvent {
    const scrub = this.#scrubbers.get(sessionId);
    if (!scrub) return this.#write(sessionId, entry);
    const e = entry as JournalEntry & { text?: unknown; itemId?: unknown; turnId?: unknown };
    if (e.type === "text.delta" && typeof e.text === "string") {
      // Each item's text is its own stream: another item's pieces in between (should codex ever
      // interleave two messages) show nothing held early.
      const key = streamKey(e);
      const streams = this.#held.get(sessionId);
      const shown = scrub.stream(streams?.get(key)?.held ?? "", e.text);
      if (shown.held) {
        let map = this.#held.get(sessionId);
        if (!map) this.#held.set(sessionId, map = new Map());
        map.set(key, {
          held: shown.held,
          ...(typeof e.turnId === "string" && { turnId: e.turnId }),
          ...(typeof e.itemId === "string" && { itemId: e.itemId }),
        });
      } else streams?.delete(key);
      const event = { ...scrub({ ...entry, text: "" }), text: shown.text } as JournalEntry;
      return this.#write(sessionId, event, true);
    }
    if (e.type === "message") this.#flush(sessionId, streamKey(e));
    else if (endsStreams(entry)) this.#flush(sessionId);
    return this.#write(sessionId, entry);
  }

  /** Shows what the session's streams (or one of them) hold back, as their last `text.delta`. */
  #flush(sessionId: string, key?: string): void {
    const streams = this.#held.get(sessionId);
    const scrub = this.#scrubbers.get(sessionId);
    if (!streams) return;
    for (const [k, held] of [...streams]) {
      if (key !== undefined && k !== key) continue;
      streams.delete(k);
      this.#write(sessionId, {
        type: "text.delta",
        ...(held.turnId !== undefined && { turnId: held.turnId }),
        ...(held.itemId !== undefined && { itemId: held.itemId }),
        text: scrub ? scrub.text(held.held) : held.held,
      } as JournalEntry, true);
    }
    if (streams.size === 0) this.#held.delete(sessionId);
  }

  #write(sessionId: string, entry: JournalEntry, scrubbed = false): StoredEvent {
    const { type, ts, ...rest } = entry;
    let event: EventInput = {
      type,
      sessionId,
      ts: ts ?? (this.#options.now?.() ?? new Date()).toISOString(),
      ...rest as Record<string, unknown>,
    };
    const scrub = scrubbed ? undefined : this.#scrubbers.get(sessionId);
    if (scrub) event = scrub(event);
    const stored = this.#store.appendEvent(event);
    // A session written to in this process is open until closed: no store read to find out.
    if (!this.#closed.has(sessionId)) this.#open.add(sessionId);
    // Readers get it only once it is durable (the store groups commits per event-loop turn).
    this.#store.afterCommit(() => {
      for (const subscription of this.#live.get(sessionId) ?? []) subscription.push(stored);
    });
    const retention = this.#options.retention;
    if (retention !== undefined && stored.seq % PRUNE_EVERY === 0) {
      this.#store.pruneEvents(sessionId, retention);
    }
    return stored;
  }

  /** Stored events after `options.after`, then live ones until the session is closed. */
  subscribe(sessionId: string, options: SubscribeOptions): AsyncIterable<StoredEvent> {
    return {
      [Symbol.asyncIterator]: () => new Subscription(this, sessionId, options),
    };
  }

  /** The session stopped: subscribers end once they have every stored event. */
  close(sessionId: string): void {
    this.#flush(sessionId);
    // In commit order: readers first get the events appended before the close.
    this.#store.afterCommit(() => {
      this.#closed.add(sessionId);
      this.#open.delete(sessionId);
      for (const subscription of this.#live.get(sessionId) ?? []) subscription.wake();
    });
  }

  /** The session is live again (resumed). */
  reopen(sessionId: string): void {
    this.#store.afterCommit(() => {
      this.#closed.delete(sessionId);
      this.#open.add(sessionId);
    });
  }

  /** Live subscribers of one session, or of all. */
  subscriberCount(sessionId?: string): number {
    if (sessionId !== undefined) return this.#live.get(sessionId)?.size ?? 0;
    let count = 0;
    for (const set of this.#live.values()) count += set.size;
    return count;
  }

  // Used by Subscription.

  /** @internal */
  isClosed(sessionId: string): boolean {
    if (this.#closed.has(sessionId)) return true;
    if (this.#open.has(sessionId)) return false;
    // A session stopped by an earlier daemon process.
    return this.#store.getSession(sessionId)?.status === "stopped";
  }

  /** @internal */
  page(sessionId: string, after: number): StoredEvent[] {
    return this.#store.eventsAfter(sessionId, after, PAGE_SIZE);
  }

  /** @internal */
  get bufferLimit(): number {
    return this.#options.bufferLimit ?? DEFAULT_BUFFER_LIMIT;
  }

  /** @internal */
  attach(sessionId: string, subscription: Subscription): void {
    let set = this.#live.get(sessionId);
    if (!set) this.#live.set(sessionId, set = new Set());
    set.add(subscription);
  }

  /** @internal */
  detach(sessionId: string, subscription: Subscription): void {
    const set = this.#live.get(sessionId);
    if (!set) return;
    set.delete(subscription);
    if (set.size === 0) this.#live.delete(sessionId);
  }
}

interface HeldText {
  held: string;
  turnId?: string;
  itemId?: string;
}

/**
 * Events after which no streamed text of the session goes on: a turn started or ended, the
 * session stopped or came back. (Not every event: a prompt queued while the answer streams must
 * not show a held tail early, or the tail and the next piece would sit in two deltas unscrubbed.)
 */
function endsStreams(entry: JournalEntry): boolean {
  switch (entry.type) {
    case "turn.started":
    case "result":
    case "error":
      return true;
    case "system": {
      const subtype = (entry as { subtype?: unknown }).subtype;
      return subtype === "session_stopped" || subtype === "session_resumed" ||
        subtype === "session_reseeded";
    }
    default:
      return false;
  }
}

/** Which streamed text a piece belongs to: its item, else its turn. */
function streamKey(e: { itemId?: unknown; turnId?: unknown }): string {
  return typeof e.itemId === "string"
    ? `item:${e.itemId}`
    : typeof e.turnId === "string"
    ? `turn:${e.turnId}`
    : "";
}

/** One reader's position in a session's events: replaying from the store, or following live. */
class Subscription implements AsyncIterator<StoredEvent> {
  readonly #journal: Journal;
  readonly #sessionId: string;
  readonly #signal: AbortSignal | undefined;
  #cursor: number;
  #buffer: StoredEvent[] = [];
  #live = false;
  #done = false;
  #waiter: (() => void) | undefined;

  constructor(journal: Journal, sessionId: string, options: SubscribeOptions) {
    this.#journal = journal;
    this.#sessionId = sessionId;
    this.#signal = options.signal;
    this.#cursor = options.after;
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
    if (this.#signal?.aborted) this.#finish();
  }

  async next(): Promise<IteratorResult<StoredEvent>> {
    while (!this.#done) {
      const event = this.#buffer.shift();
      if (event) {
        if (event.seq <= this.#cursor) continue;
        this.#cursor = event.seq;
        return { value: event, done: false };
      }
      if (!this.#live) {
        const page = this.#journal.page(this.#sessionId, this.#cursor);
        if (page.length > 0) {
          this.#buffer = page;
          continue;
        }
        // Caught up: from here on appends are pushed to us (same tick, so nothing is missed).
        this.#live = true;
        this.#journal.attach(this.#sessionId, this);
      }
      if (this.#journal.isClosed(this.#sessionId)) break;
      await new Promise<void>((resolve) => (this.#waiter = resolve));
    }
    this.#finish();
    return { value: undefined, done: true };
  }

  return(): Promise<IteratorResult<StoredEvent>> {
    this.#finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** A live event. Past the buffer limit, fall back to reading the database. */
  push(event: StoredEvent): void {
    if (this.#buffer.length >= this.#journal.bufferLimit) {
      this.#journal.overflows++;
      this.#buffer = [];
      this.#live = false;
      this.#journal.detach(this.#sessionId, this);
    } else {
      this.#buffer.push(event);
    }
    this.wake();
  }

  wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }

  readonly #onAbort = (): void => this.#finish();

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#buffer = [];
    this.#journal.detach(this.#sessionId, this);
    this.#signal?.removeEventListener("abort", this.#onAbort);
    this.wake();
  }
}

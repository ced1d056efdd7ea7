import { describe, expect, test } from "bun:test";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { Journal } from "../../src/daemon/journal.ts";
import { secretScrubber } from "../../src/daemon/redact.ts";
import { Store } from "../../src/daemon/store.ts";

const CLOCK = () => new Date("2026-11-23T00:00:00.000Z");

function setup(options: { bufferLimit?: number; retention?: number } = {}) {
  const store = Store.open(":memory:");
  for (const id of ["a", "b"]) {
    store.createSession({
      id,
      threadId: "",
      spec: {},
      policy: "default",
      policyVersion: "v",
      status: "running",
      createdAt: CLOCK().toISOString(),
    });
  }
  return { store, journal: new Journal(store, { now: CLOCK, ...options }) };
}

async function take(iterator: AsyncIterator<StoredEvent>, n: number): Promise<number[]> {
  const seqs: number[] = [];
  while (seqs.length < n) {
    const next = await iterator.next();
    if (next.done) break;
    seqs.push(next.value.seq);
  }
  return seqs;
}

describe("Journal", () => {
  test("append stores first, stamps sessionId and ts, and keeps the given ts", () => {
    const { store, journal } = setup();
    const stored = journal.append("a", { type: "message", text: "hi" } as never);
    expect(stored).toEqual({
      type: "message",
      sessionId: "a",
      ts: "2026-11-23T00:00:00.000Z",
      text: "hi",
      seq: 1,
    });
    journal.append("a", { type: "usage", ts: "2020-01-01T00:00:00.000Z" });
    expect(store.eventsAfter("a", 0).map((e) => e.ts)).toEqual([
      "2026-11-23T00:00:00.000Z",
      "2020-01-01T00:00:00.000Z",
    ]);
  });

  test("replay then live with no gap and no duplicate, even for appends during replay", async () => {
    const { journal } = setup();
    for (let i = 0; i < 600; i++) journal.append("a", { type: "text.delta" });
    const iterator = journal.subscribe("a", { after: 100 })[Symbol.asyncIterator]();
    const first = await take(iterator, 10);
    expect(first).toEqual([101, 102, 103, 104, 105, 106, 107, 108, 109, 110]);
    for (let i = 0; i < 50; i++) journal.append("a", { type: "text.delta" }); // mid-replay
    const rest = await take(iterator, 540);
    expect(rest).toEqual(Array.from({ length: 540 }, (_, i) => 111 + i));
    const waiting = take(iterator, 2);
    journal.append("a", { type: "message" });
    journal.append("b", { type: "message" }); // another session: not delivered here
    journal.append("a", { type: "result" });
    expect(await waiting).toEqual([651, 652]);
    await iterator.return!();
  });

  test("close ends subscribers once they have every event; reopen lets new ones follow", async () => {
    const { journal } = setup();
    journal.append("a", { type: "message" });
    const iterator = journal.subscribe("a", { after: 0 })[Symbol.asyncIterator]();
    expect(await take(iterator, 1)).toEqual([1]);
    const pending = iterator.next();
    journal.append("a", { type: "error" });
    journal.close("a");
    expect((await pending).value?.seq).toBe(2);
    expect((await iterator.next()).done).toBe(true);
    expect(journal.subscriberCount("a")).toBe(0);
    // A closed session replays and ends at once.
    const replay = journal.subscribe("a", { after: 0 })[Symbol.asyncIterator]();
    expect(await take(replay, 5)).toEqual([1, 2]);
    journal.reopen("a");
    const live = journal.subscribe("a", { after: 2 })[Symbol.asyncIterator]();
    const next = live.next();
    journal.append("a", { type: "turn.started" });
    expect((await next).value?.seq).toBe(3);
    await live.return!();
  });

  test("a stopped row from an earlier process closes the stream after replay", async () => {
    const { store, journal } = setup();
    journal.append("a", { type: "message" });
    store.updateSession("a", { status: "stopped" });
    const fresh = new Journal(store);
    const iterator = fresh.subscribe("a", { after: 0 })[Symbol.asyncIterator]();
    expect(await take(iterator, 5)).toEqual([1]);
  });

  test("abort ends a waiting subscriber and leaves nothing behind", async () => {
    const { journal } = setup();
    const abort = new AbortController();
    const iterator = journal.subscribe("a", { after: 0, signal: abort.signal })[
      Symbol.asyncIterator
    ]();
    const pending = iterator.next();
    await Promise.resolve();
    expect(journal.subscriberCount("a")).toBe(1);
    abort.abort();
    expect((await pending).done).toBe(true);
    expect(journal.subscriberCount()).toBe(0);
  });

  test("a slow reader overflows its bounded buffer, reads the database, and loses nothing", async () => {
    const { store, journal } = setup({ bufferLimit: 8 });
    const iterator = journal.subscribe("a", { after: 0 })[Symbol.asyncIterator]();
    const pending = iterator.next(); // now live and caught up
    for (let i = 0; i < 1000; i++) journal.append("a", { type: "text.delta" });
    expect(journal.overflows).toBe(0); // nothing is handed out before it is committed
    store.flush();
    expect(journal.overflows).toBe(1);
    expect(journal.subscriberCount("a")).toBe(0); // detached: nothing buffers for it now
    const seqs = [(await pending).value!.seq, ...await take(iterator, 999)];
    expect(seqs).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    await iterator.return!();
  });

  test("retention prunes old events of a session, never the others", () => {
    const { store, journal } = setup({ retention: 100 });
    for (let i = 0; i < 512; i++) journal.append("a", { type: "text.delta" });
    journal.append("b", { type: "message" });
    expect(store.eventsAfter("a", 0)[0]!.seq).toBe(413);
    expect(store.eventsAfter("b", 0)).toHaveLength(1);
  });

  test("secrets of the session's env are scrubbed before the event is written", () => {
    const { store, journal } = setup();
    journal.setScrubber(
      "a",
      secretScrubber({ env: { API_KEY: "sk-very-secret", SHORT: "1" } } as never),
    );
    journal.append("a", {
      type: "tool.result",
      output: "token=sk-very-secret; n=1",
      nested: ["sk-very-secret"],
    } as never);
    const [event] = store.eventsAfter("a", 0);
    expect(JSON.stringify(event)).not.toContain("sk-very-secret");
    expect(event).toMatchObject({
      output: "token=[redacted]; n=1",
      nested: ["[redacted]"],
    });
  });

  test("a secret split across streamed deltas is never stored whole, joined or not", () => {
    const { store, journal } = setup();
    const secret = "sk-very-secret-0123";
    journal.setScrubber("a", secretScrubber({ env: { API_KEY: secret } } as never));
    const delta = (text: string) =>
      journal.append("a", { type: "text.delta", turnId: "t", itemId: "m1", text } as never);
    delta("your key: sk-ve");
    delta("ry-sec");
    // A prompt queued meanwhile does not show the held tail early.
    journal.append("a", { type: "system", subtype: "user_prompt", text: "next" } as never);
    delta("ret-0123 and sk-");
    journal.append("a", {
      type: "message",
      turnId: "t",
      itemId: "m1",
      text: `your key: ${secret} and sk-`,
    } as never);
    journal.append(
      "a",
      { type: "result", turnId: "t", text: `your key: ${secret} and sk-` } as never,
    );
    const events = store.eventsAfter("a", 0) as Array<StoredEvent & { text?: string }>;
    expect(JSON.stringify(events)).not.toContain("very-secret");
    const deltas = events.filter((e) => e.type === "text.delta");
    expect(deltas.map((e) => e.text)).toEqual(["your key: ", "", "[redacted] and ", "sk-"]);
    const joined = deltas.map((e) => e.text).join("");
    expect(joined).toBe("your key: [redacted] and sk-");
    expect(events.find((e) => e.type === "message")!.text).toBe(joined);
    // The held tail is shown before the message it belongs to, under the same item.
    expect(events.map((e) => e.type)).toEqual([
      "text.delta",
      "text.delta",
      "system",
      "text.delta",
      "text.delta",
      "message",
      "result",
    ]);
    expect(deltas.at(-1)).toMatchObject({ turnId: "t", itemId: "m1", text: "sk-" });
  });

  test("two interleaved streams are held apart: neither's tail is shown early", () => {
    const { store, journal } = setup();
    journal.setScrubber("a", secretScrubber({ env: { API_KEY: "sk-very-secret" } } as never));
    const delta = (itemId: string, text: string) =>
      journal.append("a", { type: "text.delta", turnId: "t", itemId, text } as never);
    delta("m1", "one: sk-ve");
    delta("m2", "two: sk-");
    delta("m1", "ry-secret!");
    delta("m2", "ip");
    journal.append("a", { type: "result", turnId: "t", text: "" } as never);
    const byItem = (itemId: string) =>
      store.eventsAfter("a", 0).filter((e) => (e as { itemId?: string }).itemId === itemId)
        .map((e) => (e as { text?: string }).text).join("");
    expect(byItem("m1")).toBe("one: [redacted]!");
    expect(byItem("m2")).toBe("two: sk-ip");
  });

  test("a held tail is shown when the turn ends without a message, or the session stops", () => {
    const { store, journal } = setup();
    journal.setScrubber("a", secretScrubber({ env: { API_KEY: "sk-very-secret" } } as never));
    journal.append(
      "a",
      { type: "text.delta", turnId: "t", itemId: "m", text: "cut at sk-v" } as never,
    );
    journal.append("a", { type: "error", code: "interrupted", message: "stopped" } as never);
    journal.append(
      "a",
      { type: "text.delta", turnId: "u", itemId: "n", text: "again sk-" } as never,
    );
    journal.close("a");
    store.flush();
    const texts = store.eventsAfter("a", 0).map((e) => [e.type, (e as { text?: string }).text]);
    expect(texts).toEqual([
      ["text.delta", "cut at "],
      ["text.delta", "sk-v"],
      ["error", undefined],
      ["text.delta", "again "],
      ["text.delta", "sk-"],
    ]);
  });

  test("scrub() scrubs a value served outside the journal (pending approvals)", () => {
    const { journal } = setup();
    const pending = [{ request: { kind: "command", command: "curl -H 'x: sk-very-secret'" } }];
    expect(journal.scrub("a", pending)).toBe(pending); // no secrets: untouched
    journal.setScrubber("a", secretScrubber({ env: { API_KEY: "sk-very-secret" } } as never));
    expect(journal.scrub("a", pending)).toEqual([
      { request: { kind: "command", command: "curl -H 'x: [redacted]'" } },
    ]);
  });

  test("a session resumed with another spec is still scrubbed of the first spec's secrets", () => {
    const { store, journal } = setup();
    journal.setScrubber("a", secretScrubber({ env: { API_KEY: "sk-first-secret" } } as never));
    journal.setScrubber("a", secretScrubber({ env: { OTHER_KEY: "sk-second-secret" } } as never));
    journal.setScrubber("a", undefined); // a resume with no env at all
    journal.append("a", { type: "message", text: "sk-first-secret sk-second-secret" } as never);
    expect(store.eventsAfter("a", 0)[0]).toMatchObject({ text: "[redacted] [redacted]" });
  });

  test("scrubAll scrubs a value of no one session (codex's stderr) of every session's secrets", () => {
    const { journal } = setup();
    journal.setScrubber("a", secretScrubber({ env: { API_KEY: "sk-secret-of-a" } } as never));
    journal.setScrubber("b", secretScrubber({ env: { API_KEY: "sk-secret-of-b" } } as never));
    expect(journal.scrubAll(["mcp: token sk-secret-of-a", "env sk-secret-of-b"]))
      .toEqual(["mcp: token [redacted]", "env [redacted]"]);
  });
});

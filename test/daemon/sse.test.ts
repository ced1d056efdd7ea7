import { expect, test } from "bun:test";
import { Journal } from "../../src/daemon/journal.ts";
import { sseResponse } from "../../src/daemon/sse.ts";
import { Store } from "../../src/daemon/store.ts";

const NO_KEEPALIVE = { setInterval: () => 0, clearInterval: () => {} };

function setup() {
  const store = Store.open(":memory:");
  store.createSession({
    id: "a",
    threadId: "",
    spec: {},
    policy: "default",
    policyVersion: "v",
    status: "running",
    createdAt: "2026-11-23T00:00:00.000Z",
  });
  return { store, journal: new Journal(store) };
}

/** A text event as the journal takes it (JournalEntry types only `type` and `ts`). */
const entry = (type: string, text: string) => ({ type, text }) as { type: string };

const decoder = new TextDecoder();
const seqsOf = (chunk: string) => [...chunk.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

test("events waiting in the journal go out in one chunk, in order; later ones follow", async () => {
  const { store, journal } = setup();
  for (let i = 0; i < 5; i++) journal.append("a", entry("text.delta", `piece ${i}`));
  store.flush();
  const response = sseResponse((signal) => journal.subscribe("a", { after: 0, signal }), {
    timers: NO_KEEPALIVE,
  });
  const reader = response.body!.getReader();
  expect(decoder.decode((await reader.read()).value)).toBe(": connected\n\n");
  const burst = decoder.decode((await reader.read()).value);
  expect(seqsOf(burst)).toEqual([1, 2, 3, 4, 5]);
  expect(burst).toContain('"text":"piece 4"');

  // Nothing waits now: the next chunk holds what is appended later, then the stream ends.
  const next = reader.read();
  journal.append("a", entry("result", "done"));
  journal.close("a");
  store.flush();
  expect(seqsOf(decoder.decode((await next).value))).toEqual([6]);
  expect((await reader.read()).done).toBe(true);
  store.close();
});

test("a burst larger than one chunk's size is cut into several, none lost", async () => {
  const { store, journal } = setup();
  const text = "x".repeat(1000);
  for (let i = 0; i < 200; i++) journal.append("a", entry("text.delta", text));
  journal.close("a");
  store.flush();
  const response = sseResponse((signal) => journal.subscribe("a", { after: 0, signal }), {
    timers: NO_KEEPALIVE,
  });
  const chunks: string[] = [];
  for await (const chunk of response.body!) chunks.push(decoder.decode(chunk));
  const seqs = chunks.flatMap(seqsOf);
  expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  expect(chunks.length).toBeGreaterThan(2);
  expect(chunks.every((c) => c.length < 70 * 1024)).toBe(true);
  store.close();
});

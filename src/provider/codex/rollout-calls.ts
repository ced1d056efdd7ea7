/**
 * A resumed thread's tool calls, read from codex's rollout file, for the escalation check
 * (escalation.ts). codex shows raw items only for threads started on the same child with
 * `experimentalRawEvents`; `thread/resume` has no such flag. But codex writes every response item
 * of a thread to its rollout (`thread.path` in the resume result, JSON lines), the model's tool
 * calls with their arguments among them, and it writes a call there before it asks approval for
 * it (measured on 0.169 by scripts/rollout-lag.ts: 7 to 43 ms before, never after). So an
 * approval of a resumed thread reads the rollout's new lines for its call.
 *
 * Fail closed: a call not there within `waitMs`, a rollout replaced, truncated, missing or never
 * named, or a call line too long to read makes the call an escalation (the bridge declines it).
 * The rollout lives in codex's home, whose `sessions` every thread's sandbox denies (read-denied.ts);
 * should a line be forged there all the same, or the model name two calls alike: a call id keeps
 * every escalation any of its lines asked for (a line written later cannot clear it), and the k-th
 * approval of a call id waits for its k-th line.
 *
 * Bounded: the reader remembers its offset in the file and the newest TOOL_CALLS_KEPT calls, and
 * holds at most one line (or, for a longer one, its two ends) in memory.
 */
import { type FileHandle, open, stat } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import { errorMessage } from "../../errors.ts";
import { type CallSandbox, callSandbox, RawToolCall } from "./escalation.ts";

/** Calls remembered for approvals still to come (as the handle's raw-item map). */
const TOOL_CALLS_KEPT = 256;
const CHUNK_BYTES = 64 * 1024;
/** Of a line longer than `maxLineBytes`, what is kept of each end. */
const LONG_LINE_ENDS = 4096;

const RolloutLine = z.looseObject({ type: z.literal("response_item"), payload: RawToolCall });

export interface RolloutCallsOptions {
  /** How long an approval waits for its call to reach the rollout (default 2000 ms). */
  waitMs?: number;
  /** Pause between reads while waiting (default 10 ms). */
  pollMs?: number;
  /** Lines longer than this are judged by their two ends (default 8 MiB). */
  maxLineBytes?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface SeenCall {
  /** Lines of the rollout naming this call id. */
  lines: number;
  /** Approvals asked for this call id. */
  asked: number;
  escalation?: string;
}

interface FileId {
  dev: number;
  ino: number;
}

export class RolloutCalls {
  readonly path: string | undefined;
  readonly #options: RolloutCallsOptions;
  readonly #calls = new Map<string, SeenCall>();
  /** Where the next unread line starts (a partial last line is read again once complete). */
  #offset: number;
  #file: FileId | undefined;
  /** Why the rollout can no longer be trusted to show every call; set once, kept. */
  #broken: string | undefined;
  #reading: Promise<string | undefined> = Promise.resolve(undefined);

  private constructor(
    path: string | undefined,
    start: { offset: number; file?: FileId; broken?: string },
    options: RolloutCallsOptions,
  ) {
    this.path = path;
    this.#offset = start.offset;
    this.#file = start.file;
    this.#broken = start.broken;
    this.#options = options;
  }

  /**
   * A reader of every call of a thread started here, at `path` (codex may create the file only
   * once the first turn runs). The handle reads it only if codex shows no raw items after all.
   */
  static fresh(path: string, options: RolloutCallsOptions = {}): RolloutCalls {
    return new RolloutCalls(path, { offset: 0 }, options);
  }

  /**
   * A reader of the calls codex writes to `path` from now on (what is there already is history:
   * no approval of it is still to come). No path, or none there: every call is an escalation.
   */
  static async open(
    path: string | null | undefined,
    options: RolloutCallsOptions = {},
  ): Promise<RolloutCalls> {
    if (!path) {
      return new RolloutCalls(undefined, {
        offset: 0,
        broken: "codex named no rollout for this resumed thread",
      }, options);
    }
    try {
      const info = await stat(path);
      return new RolloutCalls(path, {
        offset: info.size,
        file: { dev: info.dev, ino: info.ino },
      }, options);
    } catch (error) {
      return new RolloutCalls(path, {
        offset: 0,
        broken: `codex's rollout ${path} cannot be read: ${errorMessage(error)}`,
      }, options);
    }
  }

  /**
   * The sandbox request of the call an approval is about (`callId` = the approval's item id):
   * its escalation, if any line naming it asked for one, or why it cannot be known. A
   * `callback` (an approval with its own `approvalId`: one of several codex asks within one call,
   * such as a subcommand's) is about a call already asked for: it waits for no further line.
   */
  async judge(callId: string, options: { callback?: boolean } = {}): Promise<CallSandbox> {
    const waitMs = this.#options.waitMs ?? 2000;
    const now = this.#options.now ?? (() => performance.now());
    const sleep = this.#options.sleep ?? ((ms) => delay(ms));
    const asked = options.callback
      ? Math.max(this.#seen(callId).asked, 1)
      : ++this.#seen(callId).asked;
    const deadline = now() + waitMs;
    for (;;) {
      const failed = await this.#read();
      if (this.#broken !== undefined) return { callId, escalation: this.#broken };
      const seen = this.#seen(callId);
      if (seen.lines >= asked) {
        return seen.escalation === undefined ? { callId } : { callId, escalation: seen.escalation };
      }
      if (now() >= deadline) {
        return {
          callId,
          escalation: failed ??
            `tool call ${callId} not found in codex's rollout within ${waitMs} ms`,
        };
      }
      await sleep(this.#options.pollMs ?? 10);
    }
  }

  #seen(callId: string): SeenCall {
    let seen = this.#calls.get(callId);
    if (!seen) {
      seen = { lines: 0, asked: 0 };
      this.#calls.set(callId, seen);
      if (this.#calls.size > TOOL_CALLS_KEPT) {
        this.#calls.delete(this.#calls.keys().next().value!);
      }
    }
    return seen;
  }

  #remember(call: CallSandbox): void {
    const seen = this.#seen(call.callId);
    seen.lines++;
    seen.escalation ??= call.escalation;
  }

  /** Reads the lines added since the last read (one read at a time); why it failed, if it did. */
  #read(): Promise<string | undefined> {
    this.#reading = this.#reading.then(() => this.#readNew()).catch((error: unknown) =>
      `codex's rollout ${this.path} cannot be read: ${errorMessage(error)}`
    );
    return this.#reading;
  }

  async #readNew(): Promise<string | undefined> {
    if (this.#broken !== undefined || this.path === undefined) return undefined;
    let handle;
    try {
      handle = await open(this.path, "r");
    } catch (error) {
      const why = `codex's rollout ${this.path} cannot be read: ${errorMessage(error)}`;
      // A fresh thread's rollout may not be written yet; one read before cannot vanish.
      return this.#file === undefined ? why : this.#break(why);
    }
    try {
      const info = await handle.stat();
      this.#file ??= { dev: info.dev, ino: info.ino };
      // codex appends to the file it resumed: another file, or a shorter one, is not its record.
      if (info.dev !== this.#file.dev || info.ino !== this.#file.ino) {
        return this.#break(`codex's rollout ${this.path} was replaced`);
      }
      if (info.size < this.#offset) return this.#break(`codex's rollout ${this.path} shrank`);
      await this.#scan(handle, info.size);
      return undefined;
    } catch (error) {
      return `codex's rollout ${this.path} cannot be read: ${errorMessage(error)}`;
    } finally {
      await handle.close().catch(() => {});
    }
  }

  #break(reason: string): string {
    this.#broken = reason;
    return reason;
  }

  /** Reads complete lines from the offset up to `size`, and moves the offset past them. */
  async #scan(handle: FileHandle, size: number): Promise<void> {
    const maxLine = this.#options.maxLineBytes ?? 8 * 1024 * 1024;
    const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(size - this.#offset, 1)));
    const line = new LineAccumulator(maxLine);
    let position = this.#offset;
    while (position < size) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      for (let end = chunk.indexOf(10); end >= 0; end = chunk.indexOf(10, start)) {
        line.add(chunk.subarray(start, end));
        this.#onLine(line);
        line.clear();
        start = end + 1;
        this.#offset = position + start;
      }
      line.add(chunk.subarray(start));
      position += bytesRead;
    }
  }

  #onLine(line: LineAccumulator): void {
    if (line.long) {
      const call = longCall(line.head(), line.tail());
      if (call) this.#remember(call);
      return;
    }
    const text = line.text();
    // Most lines are events, outputs and messages: only a tool call's line is parsed.
    if (!text.includes('"response_item"') || !text.includes('_call"')) return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return; // a line codex did not write whole is no call of its
    }
    const parsed = RolloutLine.safeParse(json);
    if (!parsed.success) return;
    const call = callSandbox(parsed.data.payload);
    if (call) this.#remember(call);
  }
}

/**
 * A call line too long to keep: its kind is at its head and its call id at its tail (codex writes
 * `payload.type` first and `call_id` after the arguments). Only JSON's own quotes can spell
 * `"call_id":"` there: inside a string they would be escaped.
 */
function longCall(head: string, tail: string): CallSandbox | undefined {
  if (!/^\{[^]*"type":"response_item","payload":\{"type":"\w+_call"/.test(head)) return undefined;
  const ids = [...`${head}\n${tail}`.matchAll(/"call_id":"([^"\\]+)"/g)];
  const callId = ids.at(-1)?.[1];
  if (callId === undefined) return undefined;
  return { callId, escalation: "a tool call too long to read in codex's rollout" };
}

/** One line's bytes; past `max` only its first and last LONG_LINE_ENDS bytes are kept. */
class LineAccumulator {
  #parts: Buffer[] = [];
  #length = 0;
  #head: Buffer | undefined;
  #tail = Buffer.alloc(0);
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get long(): boolean {
    return this.#head !== undefined;
  }

  add(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.#head === undefined && this.#length + bytes.length <= this.#max) {
      this.#parts.push(Buffer.from(bytes));
      this.#length += bytes.length;
      return;
    }
    if (this.#head === undefined) {
      const all = Buffer.concat([...this.#parts, bytes]);
      this.#head = all.subarray(0, LONG_LINE_ENDS);
      this.#tail = Buffer.from(all.subarray(-LONG_LINE_ENDS));
      this.#parts = [];
      return;
    }
    const joined = Buffer.concat([this.#tail, bytes]);
    this.#tail = Buffer.from(joined.subarray(-LONG_LINE_ENDS));
  }

  text(): string {
    return Buffer.concat(this.#parts).toString("utf8");
  }

  head(): string {
    return (this.#head ?? Buffer.alloc(0)).toString("utf8");
  }

  tail(): string {
    return this.#tail.toString("utf8");
  }

  clear(): void {
    this.#parts = [];
    this.#length = 0;
    this.#head = undefined;
    this.#tail = Buffer.alloc(0);
  }
}

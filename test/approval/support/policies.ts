/** Temp policy directories for tests. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempDir extends Disposable {
  dir: string;
  write(name: string, text: string): string;
}

export function tempDir(prefix = "codexd-approval-"): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    write(name, text) {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    },
    [Symbol.dispose]() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A manual clock: timers fire only when the test advances time. */
export class ManualClock {
  #now = Date.parse("2026-01-01T00:00:00Z");
  #timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer = { at: this.#now + ms, fn, cancelled: false };
    this.#timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  get activeTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  advance(ms: number): void {
    this.#now += ms;
    const due = this.#timers.filter((t) => !t.cancelled && t.at <= this.#now);
    this.#timers = this.#timers.filter((t) => !due.includes(t));
    for (const t of due) t.fn();
  }
}

/**
 * A policy of 500 regex deny rules (half of them with alternations), for the worst case a
 * command can meet; `maxCommandLength` raises the policy's limit so long commands are parsed.
 */
export function adversarialPolicy(maxCommandLength?: number): string {
  const rules = Array.from(
    { length: 500 },
    (_, i) =>
      `    - { id: r${i}, regex: '${
        i % 2 ? `host${i}\\.example\\.(com|net)` : `[a-z]{3}${i}(x|y)+z`
      }' }`,
  ).join("\n");
  const limit = maxCommandLength === undefined ? "" : `maxCommandLength: ${maxCommandLength}\n`;
  return `version: 1\nname: adversarial\ndefault: allow\n${limit}commands:\n  deny:\n${rules}\n`;
}

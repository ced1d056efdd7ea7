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

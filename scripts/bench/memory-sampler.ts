/**
 * Resident memory of a bench daemon and of its codex children, sampled while a scenario runs:
 * the peaks, and (for the churn run) the codex total over time.
 */
import type { BenchDaemon } from "./daemon.ts";
import { memoryOf } from "./machine.ts";
import { nowMs } from "./stats.ts";

const SAMPLE_EVERY_MS = 50;

export interface MemorySample {
  /** ms since the sampler was made. */
  atMs: number;
  daemonMiB: number;
  /** All codex children together. */
  codexMiB: number;
}

export class MemorySampler {
  daemonPeak = 0;
  codexPeak = 0;
  /** Every sample, when `keep` was asked for. */
  readonly samples: MemorySample[] = [];
  readonly #daemon: BenchDaemon;
  readonly #keep: boolean;
  readonly #every: number;
  readonly #born = nowMs();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(daemon: BenchDaemon, options: { keep?: boolean; everyMs?: number } = {}) {
    this.#daemon = daemon;
    this.#keep = options.keep ?? false;
    this.#every = options.everyMs ?? SAMPLE_EVERY_MS;
  }

  sample(): { daemon: number; codex: number } {
    const daemon = memoryOf(this.#daemon.pid)?.rssMiB ?? 0;
    let codex = 0;
    for (const pid of this.#daemon.codexPids()) codex += memoryOf(pid)?.rssMiB ?? 0;
    this.daemonPeak = Math.max(this.daemonPeak, daemon);
    this.codexPeak = Math.max(this.codexPeak, codex);
    if (this.#keep) {
      this.samples.push({ atMs: nowMs() - this.#born, daemonMiB: daemon, codexMiB: codex });
    }
    return { daemon, codex };
  }

  /** Forgets the peaks so far (after measuring the idle daemon). */
  resetPeaks(): void {
    this.daemonPeak = 0;
    this.codexPeak = 0;
  }

  start(): void {
    this.#timer = setInterval(() => this.sample(), this.#every);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.sample();
  }
}

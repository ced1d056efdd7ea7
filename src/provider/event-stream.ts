/**
 * A single-reader async event stream with an idempotent, race-free close: once `close()` ran, no
 * event is accepted, and the reader sees every event pushed before it, then the end.
 * `push` never blocks the producer (codex's stdout reader); the daemon's journal drains it at once.
 */
export class EventStream<T> implements AsyncIterable<T> {
  #buffer: T[] = [];
  #head = 0; // index of the next event to read: shift() would make draining quadratic
  #waiter: ((result: IteratorResult<T>) => void) | undefined;
  #closed = false;
  #iterated = false;
  /** Events offered after close (should stay 0; the stress test checks it). */
  droppedAfterClose = 0;

  get closed(): boolean {
    return this.#closed;
  }

  /** Returns false, and drops the event, when the stream is already closed. */
  push(event: T): boolean {
    if (this.#closed) {
      this.droppedAfterClose++;
      return false;
    }
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter({ value: event, done: false });
    } else {
      this.#buffer.push(event);
    }
    return true;
  }

  /** Idempotent: the first call ends the stream, later calls do nothing. */
  close(): boolean {
    if (this.#closed) return false;
    this.#closed = true;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.({ value: undefined, done: true });
    return true;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.#iterated) throw new Error("EventStream has a single reader");
    this.#iterated = true;
    return {
      next: () => {
        if (this.#head < this.#buffer.length) {
          const value = this.#buffer[this.#head++] as T;
          if (this.#head === this.#buffer.length) {
            this.#buffer = [];
            this.#head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.#closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiter = resolve));
      },
      return: () => {
        this.#buffer = [];
        this.#head = 0;
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

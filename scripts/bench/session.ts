/**
 * A daemon session as a fleet runner drives it: spawn over HTTP, one SSE stream kept open for
 * the session's life, each follow-up turn timed from `POST /turns` to its terminal event.
 */
import type { CodexdClient } from "../../src/client.ts";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { nowMs } from "./stats.ts";

export interface DaemonTurn {
  /** Request sent → terminal event (`result`/`error`) read from the SSE stream, ms. */
  ms: number;
  /** `text.delta` events read during the turn. */
  deltas: number;
  /** Every event read during the turn. */
  events: number;
  /** The terminal event's type, and its code for an error. */
  outcome: string;
  /** Request sent → the daemon's answer to it (`POST /turns` or `POST /sessions`), ms. */
  ackMs: number;
  /** The turn's last `message` text ("" if none): what the agent answered. */
  text: string;
}

export class DaemonSession {
  readonly id: string;
  readonly #client: CodexdClient;
  readonly #stream: AsyncGenerator<StoredEvent>;
  readonly #abort: AbortController;

  private constructor(client: CodexdClient, id: string, abort: AbortController) {
    this.#client = client;
    this.id = id;
    this.#abort = abort;
    this.#stream = client.events(id, { reconnect: true, signal: abort.signal });
  }

  /** Spawns with `prompt` as the first turn and waits for that turn's terminal event. */
  static async spawn(
    client: CodexdClient,
    spec: { prompt: string; cwd: string },
  ): Promise<{ session: DaemonSession; first: DaemonTurn }> {
    const started = nowMs();
    const { sessionId } = await client.spawn(spec);
    const ackMs = nowMs() - started;
    const session = new DaemonSession(client, sessionId, new AbortController());
    const first = await session.#untilTerminal(started, ackMs);
    return { session, first };
  }

  async runTurn(prompt: string): Promise<DaemonTurn> {
    const started = nowMs();
    await this.#client.send(this.id, prompt);
    return await this.#untilTerminal(started, nowMs() - started);
  }

  /**
   * After a `send` the daemon refused (its child died while starting the turn): the `error`
   * event the session's stream ended with, as `error:<code>`, if one comes within `ms`.
   */
  async streamErrorWithin(ms: number): Promise<string | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    const read = (async () => {
      while (true) {
        const next = await this.#stream.next();
        if (next.done) return undefined;
        if (next.value.type === "error") return `error:${String(next.value.code)}`;
      }
    })();
    try {
      return await Promise.race([read, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.#abort.abort();
    await this.#stream.return(undefined).catch(() => {});
    await this.#client.stop(this.id).catch(() => {});
  }

  async #untilTerminal(started: number, ackMs: number): Promise<DaemonTurn> {
    let deltas = 0;
    let events = 0;
    let text = "";
    while (true) {
      const next = await this.#stream.next();
      if (next.done) throw new Error(`Event stream of ${this.id} ended before the turn did`);
      const event = next.value;
      events++;
      if (event.type === "text.delta") deltas++;
      else if (event.type === "message") text = String(event.text);
      else if (event.type === "result" || event.type === "error") {
        const outcome = event.type === "error" ? `error:${String(event.code)}` : "result";
        return { ms: nowMs() - started, deltas, events, outcome, ackMs, text };
      }
    }
  }
}

/**
 * A session's events over SSE, within limits.maxEventStreams: what `GET /v1/sessions/:id/events`
 * and the console's live view both open.
 */
import type { Context } from "hono";
import type { Logger } from "../log.ts";
import { TooManyRequests } from "./api-errors.ts";
import type { SessionService } from "./service.ts";
import { type KeepAliveTimers, sseResponse } from "./sse.ts";

export interface EventStreamsOptions {
  service: SessionService;
  maxEventStreams: number;
  logger: Logger;
  /** SSE keep-alive comment interval (15 s) and its timers, injectable for tests. */
  keepAliveMs?: number;
  timers?: KeepAliveTimers;
}

export class EventStreams {
  readonly #options: EventStreamsOptions;
  #open = 0;

  constructor(options: EventStreamsOptions) {
    this.#options = options;
  }

  /** Session `id`'s events after `after`, replayed then live; 404 for an unknown session. */
  async open(c: Context, id: string, after: number): Promise<Response> {
    const { service, maxEventStreams, logger } = this.#options;
    // Unknown sessions get a 404 rather than an empty stream.
    await service.get(id);
    if (this.#open >= maxEventStreams) {
      throw new TooManyRequests(
        `${this.#open} event streams are open, the most this daemon serves at once ` +
          `(limits.maxEventStreams); close one or try again later`,
      );
    }
    this.#open++;
    return sseResponse((signal) => service.events(id, { after, signal }), {
      requestSignal: c.req.raw.signal,
      keepAliveMs: this.#options.keepAliveMs,
      timers: this.#options.timers,
      onClose: () => this.#open--,
      onError: (error) => logger.error(`Event stream of session ${id} failed`, { error }),
    });
  }
}

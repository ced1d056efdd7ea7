/**
 * The TypeScript client for fleet runners: one method per route of codexd's HTTP API, every
 * answer checked against the same zod schemas the daemon validates with, and `events()` as an
 * async iterator over the server-sent event stream that can reconnect with Last-Event-ID.
 */
import type { z } from "zod";
import { CodexdError, type ErrorCode, errorMessage } from "./errors.ts";
import * as S from "./api/schemas.ts";
import type { SpecInput } from "./provider/spec.ts";

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response> | Response;

export interface CodexdClientOptions {
  /** e.g. `http://127.0.0.1:7345`. */
  baseUrl: string;
  token: string;
  /** Defaults to the global fetch without Bun's own timeout (`untimedFetch`); tests pass `app.request`. */
  fetch?: FetchLike;
}

/**
 * The global fetch without Bun's own idle timeout (5 minutes, firing at about 6), which no signal
 * shows: a spawn the daemon holds while codex starts hundreds of threads can take longer (500
 * sessions at once on 2 cores: 86 spawns failed with "The operation timed out."). Cancellation is
 * the caller's `signal` alone. Other runtimes ignore the extra field.
 */
export const untimedFetch: FetchLike = (input, init) =>
  fetch(input, { ...init, timeout: false } as RequestInit);

/** A non-2xx answer, or one that does not match its schema (`code: "bad_response"`). */
export class CodexdApiError extends CodexdError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    readonly details?: unknown,
  ) {
    // The daemon answers only ErrorCode codes (src/daemon/api-errors.ts); another codexd version could
    // answer one this client does not know, and it still gets here as sent.
    super(code as ErrorCode, message);
  }
}

export interface EventStreamOptions {
  /** Start after this sequence number (0: from the beginning). */
  after?: number;
  signal?: AbortSignal;
  /**
   * Reconnect with Last-Event-ID when the stream ends while the session still runs (a slow
   * reader dropped, a network error). Off by default.
   */
  reconnect?: boolean;
  /** Consecutive reconnects without a new event before giving up; 5 by default. */
  maxReconnects?: number;
  /** Waits between reconnects; injectable for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  reconnectDelayMs?: number;
}

type Out<T extends z.ZodType> = z.output<T>;

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

export class CodexdClient {
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #fetch: FetchLike;

  constructor(options: CodexdClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#fetch = options.fetch ?? untimedFetch;
  }

  async #request(
    method: string,
    path: string,
    options: { body?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      ...options.headers,
    };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const response = await this.#fetch(`${this.#baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
    if (!response.ok) throw await this.#error(method, path, response);
    return response;
  }

  async #error(method: string, path: string, response: Response): Promise<CodexdApiError> {
    const text = await response.text().catch(() => "");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const body = S.ErrorBody.safeParse(parsed);
    if (body.success) {
      const { code, message, details } = body.data.error;
      return new CodexdApiError(response.status, code, message, details);
    }
    return new CodexdApiError(
      response.status,
      `http_${response.status}`,
      `${method} ${path} failed with HTTP ${response.status}: ${text.slice(0, 200)}`,
    );
  }

  async #json<T extends z.ZodType>(
    schema: T,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Out<T>> {
    const response = await this.#request(method, path, { body });
    const value: unknown = await response.json().catch(() => undefined);
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new CodexdApiError(
        response.status,
        "bad_response",
        `${method} ${path} answered an unexpected body: ${parsed.error.message}`,
      );
    }
    return parsed.data;
  }

  #session(id: string, suffix = ""): string {
    return `/v1/sessions/${encodeURIComponent(id)}${suffix}`;
  }

  /**
   * The details (codex's pid and state, problems, stderr while degraded, sessions): the client
   * sends its token, and the daemon answers a request without one only `{status}`.
   */
  health(): Promise<Out<typeof S.Health>> {
    return this.#json(S.Health, "GET", "/v1/health");
  }
  capabilities(): Promise<Out<typeof S.CapabilitiesBody>> {
    return this.#json(S.CapabilitiesBody, "GET", "/v1/capabilities");
  }
  spawn(spec: SpecInput): Promise<Out<typeof S.SpawnResult>> {
    return this.#json(S.SpawnResult, "POST", "/v1/sessions", spec);
  }
  async list(): Promise<Out<typeof S.SessionInfo>[]> {
    return (await this.#json(S.SessionList, "GET", "/v1/sessions")).sessions;
  }
  get(id: string): Promise<Out<typeof S.SessionInfo>> {
    return this.#json(S.SessionInfo, "GET", this.#session(id));
  }
  send(id: string, prompt: string): Promise<Out<typeof S.SendResult>> {
    return this.#json(S.SendResult, "POST", this.#session(id, "/turns"), { prompt });
  }
  resume(id: string, spec: SpecInput): Promise<Out<typeof S.SpawnResult>> {
    return this.#json(S.SpawnResult, "POST", this.#session(id, "/resume"), spec);
  }
  inject(id: string, text: string): Promise<Out<typeof S.InjectResult>> {
    return this.#json(S.InjectResult, "POST", this.#session(id, "/inject"), { text });
  }
  async interrupt(id: string): Promise<void> {
    await this.#json(S.Accepted, "POST", this.#session(id, "/interrupt"));
  }
  /** Idempotent. */
  async stop(id: string): Promise<void> {
    await this.#json(S.Accepted, "DELETE", this.#session(id));
  }
  storedEvents(
    id: string,
    options: { after?: number; limit?: number } = {},
  ): Promise<Out<typeof S.EventList>> {
    const query = new URLSearchParams({ format: "json" });
    if (options.after !== undefined) query.set("after", String(options.after));
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    return this.#json(S.EventList, "GET", this.#session(id, `/events?${query}`));
  }
  approvals(id: string): Promise<Out<typeof S.ApprovalsView>> {
    return this.#json(S.ApprovalsView, "GET", this.#session(id, "/approvals"));
  }
  answerApproval(
    id: string,
    requestId: string,
    decision: "allow" | "deny",
  ): Promise<Out<typeof S.ApprovalAnswered>> {
    const path = this.#session(id, `/approvals/${encodeURIComponent(requestId)}`);
    return this.#json(S.ApprovalAnswered, "POST", path, { decision });
  }
  async policies(): Promise<Out<typeof S.PolicySummary>[]> {
    return (await this.#json(S.PolicyList, "GET", "/v1/policies")).policies;
  }
  reloadPolicies(): Promise<Out<typeof S.ReloadReport>> {
    return this.#json(S.ReloadReport, "POST", "/v1/policies/reload");
  }
  evaluatePolicy(
    request: z.input<typeof S.EvaluateRequest>,
  ): Promise<Out<typeof S.EvaluateResult>> {
    return this.#json(S.EvaluateResult, "POST", "/v1/policies/evaluate", request);
  }
  /** Each fleet's policy version, live sessions, token caps and spend by window. */
  async fleets(): Promise<Out<typeof S.FleetInfo>[]> {
    return (await this.#json(S.FleetList, "GET", "/v1/fleets")).fleets;
  }
  async shutdown(): Promise<void> {
    await this.#json(S.ShutdownAccepted, "POST", "/v1/shutdown");
  }
  /**
   * Starts a rolling restart: every codex child replaced one at a time, sessions moved between
   * turns; the config's codex settings (a new `codex.bin`) are read again. Progress is in health.
   */
  async restartCodex(): Promise<void> {
    await this.#json(S.CodexRestartAccepted, "POST", "/v1/codex/restart");
  }
  /** A one-time login link to the web console (`/ui`), what `codexd ui` prints. */
  loginLink(): Promise<Out<typeof S.LoginLink>> {
    return this.#json(S.LoginLink, "POST", "/v1/ui/login-link");
  }
  async openapi(): Promise<Record<string, unknown>> {
    const response = await this.#request("GET", "/v1/openapi.json");
    return await response.json() as Record<string, unknown>;
  }
  /** The Prometheus text. */
  async metrics(): Promise<string> {
    return await (await this.#request("GET", "/metrics")).text();
  }

  /**
   * The session's events: replay after `after`, then live, until the session stops or `signal`
   * aborts. With `reconnect`, a stream that ends while the session still runs is reopened
   * after the last seen seq, so no event is lost or repeated.
   */
  async *events(id: string, options: EventStreamOptions = {}): AsyncGenerator<S.StoredEvent> {
    let after = options.after ?? 0;
    let failures = 0;
    const maxReconnects = options.maxReconnects ?? 5;
    const sleep = options.sleep ?? defaultSleep;
    while (!options.signal?.aborted) {
      let gotAny = false;
      try {
        const response = await this.#request("GET", this.#session(id, "/events"), {
          signal: options.signal,
          headers: {
            accept: "text/event-stream",
            ...(after > 0 ? { "last-event-id": String(after) } : {}),
          },
        });
        if (!response.body) return;
        for await (const event of parseSse(response.body, options.signal)) {
          gotAny = true;
          after = event.seq;
          yield event;
        }
      } catch (error) {
        // The server said no (404, 401, ...): reconnecting cannot help; 503 (codex down) can.
        const refused = error instanceof CodexdApiError && error.status !== 503;
        if (refused || options.signal?.aborted || !options.reconnect) {
          if (options.signal?.aborted) return;
          throw error;
        }
      }
      if (!options.reconnect || options.signal?.aborted) return;
      failures = gotAny ? 0 : failures + 1;
      if (failures > maxReconnects) {
        throw new CodexdApiError(
          0,
          "stream_lost",
          `Lost the event stream of session ${id} after ${maxReconnects} reconnects at seq ${after}`,
        );
      }
      const session = await this.get(id);
      if (session.status === "stopped") return;
      if (failures > 0) await sleep((options.reconnectDelayMs ?? 500) * failures, options.signal);
    }
  }
}

/**
 * Parses a `text/event-stream` body (WHATWG rules: `\n`, `\r\n` or `\r` line ends, multi-line
 * `data`, comments) and yields the events, each checked against the event schema.
 */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<S.StoredEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const onAbort = () => reader.cancel().catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  let buffer = "";
  let data: string[] = [];
  let eventId: string | undefined;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      // A trailing "\r" may be half of "\r\n": hold it (and its line) for the next chunk.
      const carry = buffer.endsWith("\r") ? "\r" : "";
      const lines = (carry ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
      buffer = (lines.pop() ?? "") + carry;
      for (const line of lines) {
        if (line === "") {
          if (data.length > 0) yield decodeEvent(data.join("\n"), eventId);
          data = [];
          eventId = undefined;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let fieldValue = colon < 0 ? "" : line.slice(colon + 1);
        if (fieldValue.startsWith(" ")) fieldValue = fieldValue.slice(1);
        if (field === "data") data.push(fieldValue);
        else if (field === "id") eventId = fieldValue;
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => {});
  }
}

function decodeEvent(data: string, id: string | undefined): S.StoredEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (error) {
    throw new CodexdApiError(
      200,
      "bad_response",
      `Event ${id ?? "?"} is not JSON: ${errorMessage(error)}`,
    );
  }
  // The envelope alone is checked, and the parsed object returned as is: copying every field of
  // every streamed delta through a loose schema cost a tenth of a stream's throughput.
  const parsed = S.EventEnvelope.safeParse(value);
  if (!parsed.success) {
    throw new CodexdApiError(
      200,
      "bad_response",
      `Event ${id ?? "?"} is malformed: ${parsed.error.message}`,
    );
  }
  return value as S.StoredEvent;
}

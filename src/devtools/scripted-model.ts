/**
 * A scripted OpenAI Responses-API server that real codex can be pointed at, offline.
 *
 * Used by tests, benchmarks and `codexd demo`. Listens on 127.0.0.1 (port 0 by default) with
 * `node:http`, so it runs under Bun and Deno.
 *
 * ```ts
 * await using model = await startScriptedModel({
 *   rules: [{
 *     marker: "list files",
 *     rounds: [[step.exec("ls")], [step.message("Here they are.", { deltas: 3 })]],
 *   }],
 * });
 * spawn(codex, ["app-server", ...model.codexArgs()]);
 * // later: model.requests[0].body.tools, model.requests.at(-1).facts.lastItemType, ...
 * ```
 *
 * Script semantics (format in ./scripted-model/script.ts):
 * - codex POSTs `/v1/responses` with the whole conversation in `input`. Each request is one
 *   "round". Rounds are tracked per conversation (codex's `prompt_cache_key`, the thread id).
 * - A request whose latest user-typed message is the same one (same text, same turn index) as
 *   the previous request's continues the current rule: the next round is served. That covers
 *   tool results coming back (`function_call_output`) and codex's retries after an error.
 * - Otherwise (a new turn, or steered input) the first rule whose `marker` is in the latest user
 *   text, or whose `turn` equals its 0-based index, starts; its first round is served.
 * - No rule, or no rounds left: the `fallback` round (default: message `echo: <text>`).
 *
 * Every request is recorded in `requests` (headers, parsed body, facts, time).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { z } from "zod";
import {
  type ConversationFacts,
  conversationFacts,
  ResponsesRequestBody,
} from "./scripted-model/request.ts";
import {
  type ParsedRule,
  type ParsedScript,
  type ParsedStep,
  Rule,
  Script,
} from "./scripted-model/script.ts";
import {
  customCallDone,
  functionCallDone,
  messageAdded,
  messageDone,
  responseCompleted,
  responseCreated,
  splitText,
  textDelta,
  type Usage,
} from "./scripted-model/sse.ts";

export { applyPatchCommand, type PatchOp, patchText } from "./scripted-model/patch.ts";
export { type Round, type Rule, type Script, type Step, step } from "./scripted-model/script.ts";
export type { ConversationFacts } from "./scripted-model/request.ts";

export interface RecordedRequest {
  /** 0-based position in `requests`. */
  index: number;
  method: string;
  /** Path without the query, e.g. `/v1/responses`. */
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body of `/v1/responses` requests (undefined for other routes). */
  body?: ResponsesRequestBody;
  facts?: ConversationFacts;
  /** The conversation the round was counted in. */
  conversation?: string;
  /** Which rule answered (its index in the script), or "fallback". */
  answeredBy?: number | "fallback";
  /** Round index within the rule (0 for fallback). */
  round?: number;
  /** `now()` when the request arrived. */
  time: number;
}

export interface StartScriptedModelOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Clock for `RecordedRequest.time` (default Date.now). */
  now?: () => number;
}

export interface CodexArgsOptions {
  /** Model slug codex asks for (default "mock-model"; unknown slugs get `exec_command`). */
  model?: string;
  /** codex's retries of a failed HTTP request (codex default: 4). */
  requestMaxRetries?: number;
  /** codex's reconnects of a dropped stream (codex default: 5). */
  streamMaxRetries?: number;
  /** How long codex waits on a silent stream before giving up (codex default: 300000). */
  streamIdleTimeoutMs?: number;
}

/** What codex needs to reach a scripted model: its URL and the `-c` overrides. */
export type ModelEndpoint = Pick<ScriptedModel, "url" | "codexArgs">;

/** The `-c` overrides that point codex at a scripted model at `url`. */
export function scriptedCodexArgs(
  url: string,
  argsOptions: CodexArgsOptions | string = {},
): string[] {
  const o = typeof argsOptions === "string" ? { model: argsOptions } : argsOptions;
  const provider = [
    `name="scripted"`,
    `base_url="${url}"`,
    `wire_api="responses"`,
    `requires_openai_auth=false`,
    ...(o.requestMaxRetries === undefined ? [] : [`request_max_retries=${o.requestMaxRetries}`]),
    ...(o.streamMaxRetries === undefined ? [] : [`stream_max_retries=${o.streamMaxRetries}`]),
    ...(o.streamIdleTimeoutMs === undefined
      ? []
      : [`stream_idle_timeout_ms=${o.streamIdleTimeoutMs}`]),
  ];
  return [
    "-c",
    `model_provider="scripted"`,
    "-c",
    `model_providers.scripted={${provider.join(",")}}`,
    "-c",
    `model="${o.model ?? "mock-model"}"`,
  ];
}

export interface ScriptedModel extends AsyncDisposable {
  /** Base URL ending in `/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order (live array). */
  readonly requests: readonly RecordedRequest[];
  /** Replaces the script and forgets every conversation's progress. */
  setScript(script: Script): void;
  /** Appends a rule (first match wins, so earlier rules take precedence). */
  addRule(rule: Rule): void;
  /** Resolves with the first request at index >= `from` (default 0) that satisfies `predicate`. */
  waitForRequest(
    predicate: (request: RecordedRequest) => boolean,
    options?: { from?: number; signal?: AbortSignal },
  ): Promise<RecordedRequest>;
  /** `-c` overrides that point codex at this server. */
  codexArgs(options?: CodexArgsOptions | string): string[];
  /** Stops listening and drops open connections (stalled requests end). Idempotent. */
  close(): Promise<void>;
}

interface Cursor {
  key: string;
  ruleIndex: number;
  nextRound: number;
}

const ECHO_LIMIT = 80;

export async function startScriptedModel(
  script: Script = {},
  options: StartScriptedModelOptions = {},
): Promise<ScriptedModel> {
  const now = options.now ?? Date.now;
  let parsed: ParsedScript = parseScript(script);
  const cursors = new Map<string, Cursor>();
  const requests: RecordedRequest[] = [];
  const waiters = new Set<(request: RecordedRequest) => void>();
  const sockets = new Set<Socket>();
  const closing = new AbortController();
  let responseCounter = 0;
  let itemCounter = 0;

  /** Numbers requests when they are recorded: bodies arrive out of order under concurrency. */
  function record(fields: Omit<RecordedRequest, "index">): void {
    const request = { ...fields, index: requests.length };
    requests.push(request);
    for (const waiter of waiters) waiter(request);
  }

  function chooseRound(
    conversation: string,
    facts: ConversationFacts,
  ): { round: readonly ParsedStep[]; answeredBy: number | "fallback"; roundIndex: number } {
    const key = `${facts.turn}\u0000${facts.latestUserText}`;
    let cursor = cursors.get(conversation);
    if (!cursor || cursor.key !== key) {
      const ruleIndex = parsed.rules.findIndex((rule) => matches(rule, facts));
      cursor = { key, ruleIndex, nextRound: 0 };
      cursors.set(conversation, cursor);
    }
    const rule = parsed.rules[cursor.ruleIndex];
    if (rule && cursor.nextRound < rule.rounds.length) {
      const index = cursor.nextRound++;
      return { round: rule.rounds[index] ?? [], answeredBy: cursor.ruleIndex, roundIndex: index };
    }
    const fallback = parsed.fallback ??
      [{
        type: "message" as const,
        text: `echo: ${facts.latestUserText.slice(0, ECHO_LIMIT)}`,
        done: true,
      }];
    return { round: fallback, answeredBy: "fallback", roundIndex: 0 };
  }

  async function serveResponses(
    req: IncomingMessage,
    res: ServerResponse,
    base: Omit<RecordedRequest, "index">,
  ) {
    const raw = await readBody(req);
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      record(base);
      return sendJson(res, 400, { error: { message: "body is not JSON" } });
    }
    const body = ResponsesRequestBody.safeParse(json);
    if (!body.success) {
      record(base);
      return sendJson(res, 400, {
        error: { message: `body is not a Responses request: ${z.prettifyError(body.error)}` },
      });
    }
    const facts = conversationFacts(body.data);
    const conversation = body.data.prompt_cache_key ?? base.headers["thread-id"] ??
      "default";
    const chosen = chooseRound(conversation, facts);
    record({
      ...base,
      body: body.data,
      facts,
      conversation,
      answeredBy: chosen.answeredBy,
      round: chosen.roundIndex,
    });
    await playRound(chosen.round, res, raw.length);
  }

  async function playRound(round: readonly ParsedStep[], res: ServerResponse, inputChars: number) {
    const aborted = abortedWhenClosed(res, closing.signal);
    const responseId = `resp_${++responseCounter}`;
    let buffer = "";
    let started = false;
    let outputIndex = 0;
    let outputChars = 0;
    let usage: Usage | undefined;
    const flush = () => {
      if (buffer !== "") res.write(buffer);
      buffer = "";
    };
    const start = () => {
      if (started) return;
      started = true;
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      buffer += responseCreated(responseId);
    };

    for (const s of round) {
      if (aborted.aborted) return;
      switch (s.type) {
        case "httpError": {
          const headers: Record<string, string> = {};
          if (s.retryAfter !== undefined) headers["retry-after"] = String(s.retryAfter);
          if (started) flush();
          return sendJson(res, s.status, {
            error: { message: s.message, type: errorType(s.status), code: null },
          }, headers);
        }
        case "delay":
          flush();
          await sleep(s.ms, aborted);
          break;
        case "stall":
          start();
          flush();
          await sleep(Infinity, aborted);
          return;
        case "cut":
          start();
          flush();
          // Let the bytes leave before the reset, so codex sees the events, then the cut.
          await new Promise<void>((resolve) => res.write("", () => resolve()));
          res.socket?.destroy();
          return;
        case "usage":
          usage = { ...s };
          break;
        case "message": {
          start();
          const itemId = `msg_${++itemCounter}`;
          buffer += messageAdded(itemId, outputIndex);
          for (const delta of splitText(s.text, { count: s.deltas, size: s.deltaSize })) {
            buffer += textDelta(itemId, outputIndex, delta);
          }
          if (s.done) buffer += messageDone(itemId, outputIndex, s.text);
          outputIndex++;
          outputChars += s.text.length;
          break;
        }
        case "exec":
        case "functionCall": {
          start();
          const call = s.type === "exec"
            ? {
              name: "exec_command",
              arguments: JSON.stringify({
                cmd: s.cmd,
                ...(s.workdir === undefined ? {} : { workdir: s.workdir }),
                ...s.extra,
              }),
            }
            : {
              name: s.name,
              arguments: typeof s.arguments === "string"
                ? s.arguments
                : JSON.stringify(s.arguments),
              ...(s.namespace === undefined ? {} : { namespace: s.namespace }),
            };
          const itemId = `fc_${++itemCounter}`;
          buffer += functionCallDone(itemId, outputIndex++, {
            callId: s.callId ?? `call_${itemCounter}`,
            ...call,
          });
          outputChars += call.arguments.length;
          break;
        }
        case "customCall": {
          start();
          const itemId = `ctc_${++itemCounter}`;
          buffer += customCallDone(itemId, outputIndex++, {
            callId: s.callId ?? `call_${itemCounter}`,
            name: s.name,
            input: s.input,
            ...(s.namespace === undefined ? {} : { namespace: s.namespace }),
          });
          outputChars += s.input.length;
          break;
        }
      }
    }
    start();
    buffer += responseCompleted(
      responseId,
      usage ?? {
        inputTokens: Math.ceil(inputChars / 4),
        cachedInputTokens: 0,
        outputTokens: Math.ceil(outputChars / 4),
        reasoningOutputTokens: 0,
      },
    );
    flush();
    res.end();
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const base: Omit<RecordedRequest, "index"> = {
      method: req.method ?? "GET",
      path: url.pathname,
      headers: flatHeaders(req),
      time: now(),
    };
    if (req.method === "POST" && url.pathname === "/v1/responses") {
      serveResponses(req, res, base).catch((error) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
        else res.destroy();
      });
      return;
    }
    record(base);
    if (req.method === "GET" && url.pathname === "/v1/models") {
      return sendJson(res, 200, { object: "list", data: [], models: [] });
    }
    sendJson(res, 404, { error: { message: `no route ${req.method} ${url.pathname}` } });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/v1`;
  let closed: Promise<void> | undefined;

  const model: ScriptedModel = {
    url,
    port,
    requests,
    setScript(next) {
      parsed = parseScript(next);
      cursors.clear();
    },
    addRule(rule) {
      const result = Rule.safeParse(rule);
      if (!result.success) {
        throw new Error(`Cannot add rule: ${z.prettifyError(result.error)}`);
      }
      parsed = { ...parsed, rules: [...parsed.rules, result.data] };
    },
    waitForRequest(predicate, waitOptions = {}) {
      const from = waitOptions.from ?? 0;
      const found = requests.slice(from).find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const signal = waitOptions.signal;
        const onAbort = () => {
          waiters.delete(waiter);
          reject(signal?.reason ?? new Error("waitForRequest aborted"));
        };
        const waiter = (request: RecordedRequest) => {
          if (request.index < from || !predicate(request)) return;
          waiters.delete(waiter);
          signal?.removeEventListener("abort", onAbort);
          resolve(request);
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener("abort", onAbort, { once: true });
        waiters.add(waiter);
      });
    },
    codexArgs(argsOptions = {}) {
      return scriptedCodexArgs(url, argsOptions);
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
    [Symbol.asyncDispose]() {
      return model.close();
    },
  };
  return model;
}

function parseScript(script: Script): ParsedScript {
  const result = Script.safeParse(script);
  if (!result.success) throw new Error(`Invalid model script: ${z.prettifyError(result.error)}`);
  return result.data;
}

function matches(rule: ParsedRule, facts: ConversationFacts): boolean {
  if (rule.marker !== undefined && !facts.latestUserText.includes(rule.marker)) return false;
  if (rule.turn !== undefined && rule.turn !== facts.turn) return false;
  return true;
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function errorType(status: number): string {
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** Aborts when the client goes away or the server closes. */
function abortedWhenClosed(res: ServerResponse, closing: AbortSignal): AbortSignal {
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  return AbortSignal.any([controller.signal, closing]);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * A CodexProvider on an in-process fake codex app-server (see fake-peer.ts), for faults the real
 * codex cannot be made to produce on demand: stalls, garbage, stray ids, races with a crash.
 * It answers thread/start, turn/start and the rest at once; tests play turns with `playTurn`.
 */
import type { CodexChild } from "../../src/provider/codex/child.ts";
import type { CodexRouter, RouterOptions } from "../../src/provider/codex/router.ts";
import { NO_RETRY } from "../../src/provider/codex/retry.ts";
import type { Rpc } from "../../src/provider/codex/rpc.ts";
import { CodexProvider } from "../../src/provider/codex/provider.ts";
import type { RolloutCallsOptions } from "../../src/provider/codex/rollout-calls.ts";
import { Spec, type SpecInput } from "../../src/provider/spec.ts";
import type { Approver, Handle } from "../../src/provider/types.ts";
import { connectFakePeer, type FakePeer, type PeerMessage } from "./fake-peer.ts";
import { allowAll } from "./provider-fixture.ts";
import { tmpdir } from "node:os";
import type { Logger } from "../../src/log.ts";
import { type LoggedLine, memoryLogger } from "./memory-logger.ts";

export interface FakeAppServerOptions extends RouterOptions {
  /** Like codex: after answering turn/interrupt, send turn/completed with status interrupted. */
  interruptCompletes?: boolean;
  /** Like codex: thread/start and thread/resume name the thread's rollout file (`thread.path`). */
  rolloutOf?: (threadId: string) => string;
  /** Decides the sessions' approvals (default: allow all). */
  approver?: Approver;
  /** How the provider reads rollouts (rollout-calls.ts). */
  rollout?: RolloutCallsOptions;
}

export class FakeAppServer implements AsyncDisposable {
  readonly connection: CodexRouter;
  readonly peer: FakePeer;
  readonly provider: CodexProvider;
  readonly #logger: Logger;
  /** What the provider and its handles logged, parsed (with their context). */
  readonly logs: LoggedLine[];
  /** Requests of these methods get no answer, as many times as the count says (a stalled codex). */
  readonly stallNext = new Map<string, number>();
  readonly stalled: PeerMessage[] = [];
  /** How often the provider unsubscribed each thread: a handle closing twice would show as 2. */
  readonly unsubscribed = new Map<string, number>();
  readonly #options: FakeAppServerOptions;
  #threads = 0;
  #turns = 0;

  constructor(options: FakeAppServerOptions = {}) {
    const { interruptCompletes: _, rolloutOf: _r, approver: _a, rollout, ...rpcOptions } = options;
    this.#options = options;
    ({ logger: this.#logger, lines: this.logs } = memoryLogger());
    // Each request is sent once unless a test asks for retries: fault tests count what arrives.
    const { connection, peer } = connectFakePeer({ retry: NO_RETRY, ...rpcOptions });
    this.connection = connection;
    this.peer = peer;
    peer.autoRespond = (message) => this.#answer(message);
    const rpc: Rpc = {
      request: (method, params, requestOptions) =>
        connection.request(method, params, requestOptions),
      notify: (method, params) => connection.notify(method, params),
      stop: (cause) => connection.stop(cause),
      subscribe: (threadId, listener) => connection.subscribe(threadId, listener),
      unsubscribe: (threadId) => {
        this.unsubscribed.set(threadId, (this.unsubscribed.get(threadId) ?? 0) + 1);
        connection.unsubscribe(threadId);
      },
      onNotification: (listener) => connection.onNotification(listener),
      onServerRequest: (handler) => connection.onServerRequest(handler),
    };
    const child: CodexChild = {
      pid: undefined,
      version: "fake",
      rpc,
      onExit: (listener) => void connection.onClose((cause) => listener(cause.message)),
      stderrTail: () => [],
      stop: () => connection.stop(),
    };
    this.provider = new CodexProvider({
      child,
      approver: options.approver ?? allowAll,
      ...(rollout && { rollout }),
      logger: this.#logger,
    });
  }

  #answer(message: PeerMessage): unknown {
    if (message.method === undefined || message.id === undefined) return undefined;
    const stalls = this.stallNext.get(message.method) ?? 0;
    if (stalls > 0) {
      this.stallNext.set(message.method, stalls - 1);
      this.stalled.push(message);
      return undefined;
    }
    switch (message.method) {
      case "thread/start":
        return { thread: this.#thread(`thread-${++this.#threads}`), model: "fake-model" };
      case "thread/resume":
        return { thread: this.#thread((message.params as { threadId: string }).threadId) };
      case "turn/start":
        return { turn: { id: `turn-${++this.#turns}`, status: "inProgress", items: [] } };
      case "turn/interrupt": {
        const { threadId, turnId } = message.params as { threadId: string; turnId: string };
        // After the answer has been written, as codex does.
        if (this.#options.interruptCompletes) {
          setTimeout(() =>
            this.notify("turn/completed", {
              threadId,
              turn: { id: turnId, status: "interrupted", items: [], error: null },
            }).catch(() => {}) // the peer may have "crashed" meanwhile
          );
        }
        return {};
      }
      default:
        return {};
    }
  }

  #thread(id: string): { id: string; path?: string } {
    const path = this.#options.rolloutOf?.(id);
    return path === undefined ? { id } : { id, path };
  }

  spawn(
    prompt: string,
    options: { signal?: AbortSignal; spec?: Partial<SpecInput> } = {},
  ): Promise<Handle> {
    return this.provider.spawn(
      Spec.parse({ prompt, cwd: tmpdir(), ...options.spec }),
      options.signal ? { signal: options.signal } : {},
    );
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.peer.send({ method, params });
  }

  /** The turn codex would play: started, two deltas, the message, completed. */
  async playTurn(threadId: string, turnId: string, text: string): Promise<void> {
    await this.notify("turn/started", {
      threadId,
      turn: { id: turnId, status: "inProgress", items: [] },
    });
    for (const delta of [text.slice(0, 3), text.slice(3)]) {
      await this.notify("item/agentMessage/delta", { threadId, turnId, itemId: "m", delta });
    }
    await this.completeTurn(threadId, turnId, text);
  }

  async completeTurn(threadId: string, turnId: string, text: string): Promise<void> {
    await this.notify("item/completed", {
      threadId,
      turnId,
      item: { type: "agentMessage", id: "m", text },
    });
    await this.notify("turn/completed", {
      threadId,
      turn: { id: turnId, status: "completed", items: [], error: null },
    });
  }

  /** The id codex gave the handle's running turn. */
  turnOf(handle: Handle): string {
    const turnId = this.provider.handles.get(handle.sessionId)?.currentTurnId;
    if (!turnId) throw new Error(`session ${handle.sessionId} has no running turn`);
    return turnId;
  }

  /** codex's stdout ends, as when it crashes. */
  crash(): Promise<void> {
    return this.peer.end();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.provider.shutdown();
  }
}

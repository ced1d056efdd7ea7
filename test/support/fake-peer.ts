/**
 * An in-process stand-in for codex app-server over a pair of web streams, for unit tests of edge
 * cases the real codex cannot be made to produce (garbage, over-long lines, crashes mid-request).
 */
import { CodexRouter, type RouterOptions } from "../../src/provider/codex/router.ts";
import { JsonRpcConnection, type JsonRpcOptions } from "../../src/provider/jsonrpc/connection.ts";

export interface PeerMessage {
  id?: number | string;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

export class FakePeer {
  readonly received: PeerMessage[] = [];
  readonly #toClient: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  #waiters: Array<{ match: (m: PeerMessage) => boolean; resolve: (m: PeerMessage) => void }> = [];
  /** Answers requests automatically when set (return undefined to stay silent). */
  autoRespond: ((message: PeerMessage) => unknown) | undefined;

  constructor(fromClient: ReadableStream<Uint8Array>, toClient: WritableStream<Uint8Array>) {
    this.#toClient = toClient.getWriter();
    void this.#read(fromClient);
  }

  async #read(readable: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of readable) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline;
      while ((newline = buffer.indexOf("\n")) !== -1) {
        const message = JSON.parse(buffer.slice(0, newline)) as PeerMessage;
        buffer = buffer.slice(newline + 1);
        const waiter = this.#waiters.find((w) => w.match(message));
        if (waiter) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        } else {
          this.received.push(message);
        }
        const reply = this.autoRespond?.(message);
        if (reply !== undefined && message.id !== undefined && message.method) {
          // After end() or fail() the peer has no output left: the answer is lost, as with a
          // codex that died, and must not surface as an unhandled rejection.
          await this.send({ id: message.id, result: reply }).catch(() => {});
        }
      }
    }
  }

  /** Resolves with the next message from the client matching `match` (or an earlier one). */
  next(match: (m: PeerMessage) => boolean = () => true): Promise<PeerMessage> {
    const seen = this.received.find(match);
    if (seen) {
      this.received.splice(this.received.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  send(message: object): Promise<void> {
    return this.sendRaw(JSON.stringify(message) + "\n");
  }

  sendRaw(text: string): Promise<void> {
    return this.#toClient.write(this.#encoder.encode(text));
  }

  /** The peer's output ends, as when codex exits. */
  end(): Promise<void> {
    return this.#toClient.close();
  }

  /** The peer's output fails, as when the pipe breaks. */
  fail(reason = new Error("pipe broken")): Promise<void> {
    return this.#toClient.abort(reason);
  }
}

/** A connection built by `connect` over a pair of streams whose other ends are a fake peer. */
function wire<T>(
  connect: (readable: ReadableStream<Uint8Array>, writable: WritableStream<Uint8Array>) => T,
): { connection: T; peer: FakePeer } {
  const clientToPeer = new TransformStream<Uint8Array, Uint8Array>();
  const peerToClient = new TransformStream<Uint8Array, Uint8Array>();
  const connection = connect(peerToClient.readable, clientToPeer.writable);
  return { connection, peer: new FakePeer(clientToPeer.readable, peerToClient.writable) };
}

/** A codex connection (the router over a plain connection) wired to a fake peer. */
export function connectFakePeer(options: RouterOptions = {}) {
  return wire((readable, writable) => new CodexRouter(readable, writable, options));
}

/** A plain JSON-RPC connection (no codex routing, retries or parsing) wired to a fake peer. */
export function connectPlainPeer(options: JsonRpcOptions = {}) {
  return wire((readable, writable) => new JsonRpcConnection(readable, writable, options));
}

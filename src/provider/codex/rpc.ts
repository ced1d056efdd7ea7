/**
 * The one view of codex's JSON-RPC connection the codex provider uses (CodexRouter implements it;
 * tests fake it). Requests are retried where codex refused them as transient and their results
 * parsed (results.ts); notifications are routed to threads.
 */
import type {
  NotificationListener,
  RequestOptions,
  ServerRequestHandler,
} from "../jsonrpc/connection.ts";
import type { MethodResult } from "./results.ts";
import type { RetryPolicy } from "./retry.ts";

export type { NotificationListener, RequestOptions, ServerRequestHandler };

export interface RpcRequestOptions extends RequestOptions {
  /** Overrides the connection's retry policy for this call (`NO_RETRY`: send it once). */
  retry?: RetryPolicy;
}

export interface Rpc {
  /**
   * Sends `method`, again while codex refuses it as transient (retry.ts); resolves with its
   * result parsed by the method's schema (results.ts), rejects with ProtocolError if it does
   * not parse. `timeoutMs` bounds the whole call, retries included.
   */
  request<M extends string>(
    method: M,
    params?: unknown,
    options?: RpcRequestOptions,
  ): Promise<MethodResult<M>>;
  notify(method: string, params?: unknown): Promise<void>;
  /** Routes notifications with `params.threadId === threadId` to `listener` (replacing any). */
  subscribe(threadId: string, listener: NotificationListener): void;
  /** Safe at any time, also after the connection closed. */
  unsubscribe(threadId: string): void;
  /** Notifications no thread subscriber took. Returns the unsubscribe function. */
  onNotification(listener: NotificationListener): () => void;
  /** The handler's result is the response; a thrown RpcError keeps its code, anything else -32603. */
  onServerRequest(handler: ServerRequestHandler | undefined): void;
  /** Fails pending requests with `cause` and ends the writer (codex's stdin). Idempotent. */
  stop(cause?: unknown): Promise<void>;
}

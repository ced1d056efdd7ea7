/**
 * The one place that knows which runtime codexd runs on. Everything else in `src/` uses web
 * standards and `node:` built-ins, so the same sources run under Bun (and its compiled binary)
 * and under Deno.
 */

export interface Server {
  /** e.g. http://127.0.0.1:7420 */
  readonly url: string;
  readonly port: number;
  /** Stops listening; open streams are closed. Idempotent. */
  stop(): Promise<void>;
}

export interface ServeOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  fetch: (request: Request) => Response | Promise<Response>;
  /** PEM certificate and key (their text): serve HTTPS. */
  tls?: { cert: string; key: string };
}

interface BunServer {
  port: number;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}
interface BunGlobal {
  serve(options: {
    hostname: string;
    port: number;
    fetch: ServeOptions["fetch"];
    idleTimeout?: number;
    tls?: { cert: string; key: string };
  }): BunServer;
  version: string;
}
interface DenoHttpServer {
  addr: { port: number };
  shutdown(): Promise<void>;
}
interface DenoGlobal {
  serve(
    options: {
      hostname: string;
      port: number;
      onListen?: () => void;
      cert?: string;
      key?: string;
    },
    handler: ServeOptions["fetch"],
  ): DenoHttpServer;
  version: { deno: string };
}

const runtimeGlobals = globalThis as unknown as { Bun?: BunGlobal; Deno?: DenoGlobal };

export const runtimeName: string = runtimeGlobals.Bun
  ? `bun ${runtimeGlobals.Bun.version}`
  : runtimeGlobals.Deno
  ? `deno ${runtimeGlobals.Deno.version.deno}`
  : `node ${process.versions.node}`;

export function serve(options: ServeOptions): Server {
  const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
  const scheme = options.tls ? "https" : "http";
  if (runtimeGlobals.Bun) {
    // idleTimeout 0: SSE streams stay open for as long as the client reads them.
    const server = runtimeGlobals.Bun.serve({ ...options, idleTimeout: 0 });
    let stopped: Promise<void> | undefined;
    return {
      url: `${scheme}://${host}:${server.port}`,
      port: server.port,
      stop: () => (stopped ??= Promise.resolve(server.stop(true))),
    };
  }
  if (runtimeGlobals.Deno) {
    const server = runtimeGlobals.Deno.serve(
      {
        hostname: options.hostname,
        port: options.port,
        onListen: () => {},
        ...(options.tls && { cert: options.tls.cert, key: options.tls.key }),
      },
      options.fetch,
    );
    let stopped: Promise<void> | undefined;
    return {
      url: `${scheme}://${host}:${server.addr.port}`,
      port: server.addr.port,
      stop: () => (stopped ??= server.shutdown()),
    };
  }
  throw new Error("Cannot serve: codexd runs on Bun or Deno");
}

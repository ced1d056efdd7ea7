/**
 * An SSE reader on a raw TCP socket, for fault tests: unlike fetch, it can stop reading from the
 * kernel (`pause`), so the daemon really meets a slow client, and it can vanish without closing
 * the HTTP exchange (`destroy`). It decodes chunked transfer encoding and keeps only each event's
 * seq and type (bounded by what the test asks for).
 */
import { connect, type Socket } from "node:net";

export interface RawSse {
  /** Seqs received so far, in order. */
  readonly seqs: readonly number[];
  readonly types: readonly string[];
  /** Stops reading from the socket: the kernel buffers fill and the daemon sees backpressure. */
  pause(): void;
  resume(): void;
  /** Resolves with every seq received once `seq` arrived; rejects if the stream ends first. */
  readUntilSeq(seq: number): Promise<number[]>;
  /** Resolves once an event of this type arrived. */
  readUntilType(type: string): Promise<void>;
  /** Ends the connection politely (FIN). */
  close(): void;
  /** Drops the connection at once (RST where the OS does that). */
  destroy(): void;
}

export function rawSseClient(
  baseUrl: string,
  token: string,
  sessionId: string,
  after: number,
): Promise<RawSse> {
  const url = new URL(baseUrl);
  const socket: Socket = connect({ host: url.hostname, port: Number(url.port) });
  const seqs: number[] = [];
  const types: string[] = [];
  const waiters = new Set<() => void>();
  let ended: Error | undefined;
  let head = "";
  let headersDone = false;
  let body = "";
  let sse = "";

  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  /** Chunked transfer decoding: `<hex size>\r\n<data>\r\n`, repeated. */
  const decodeChunks = () => {
    while (true) {
      const eol = body.indexOf("\r\n");
      if (eol < 0) return;
      const size = Number.parseInt(body.slice(0, eol), 16);
      if (!Number.isFinite(size)) throw new Error(`bad chunk header: ${body.slice(0, 20)}`);
      if (body.length < eol + 2 + size + 2) return;
      sse += body.slice(eol + 2, eol + 2 + size);
      body = body.slice(eol + 2 + size + 2);
      if (size === 0) return;
    }
  };
  const parseFrames = () => {
    let end: number;
    while ((end = sse.indexOf("\n\n")) >= 0) {
      const frame = sse.slice(0, end);
      sse = sse.slice(end + 2);
      const id = /^id: (\d+)$/m.exec(frame);
      const type = /^event: (.*)$/m.exec(frame);
      if (id && type) {
        seqs.push(Number(id[1]));
        types.push(type[1]!);
      }
    }
  };

  return new Promise<RawSse>((resolve, reject) => {
    socket.setEncoding("latin1");
    socket.once("error", (error) => {
      ended = error;
      reject(error);
      wake();
    });
    socket.once("close", () => {
      ended ??= new Error("the SSE stream ended");
      wake();
    });
    socket.on("data", (chunk: string) => {
      if (!headersDone) {
        head += chunk;
        const split = head.indexOf("\r\n\r\n");
        if (split < 0) return;
        headersDone = true;
        const status = /^HTTP\/1\.1 (\d+)/.exec(head)?.[1];
        if (status !== "200") {
          reject(new Error(`SSE request answered ${status}: ${head.slice(0, 200)}`));
          socket.destroy();
          return;
        }
        body = head.slice(split + 4);
        resolve(client);
      } else body += chunk;
      decodeChunks();
      parseFrames();
      wake();
    });
    socket.write(
      `GET /v1/sessions/${sessionId}/events?after=${after} HTTP/1.1\r\n` +
        `host: ${url.host}\r\nauthorization: Bearer ${token}\r\n` +
        `accept: text/event-stream\r\n\r\n`,
    );
    const waitFor = (done: () => boolean, what: string) =>
      new Promise<void>((ok, fail) => {
        const check = () => {
          if (done()) {
            waiters.delete(check);
            ok();
          } else if (ended) {
            waiters.delete(check);
            fail(new Error(`${what}: ${ended.message} after seq ${seqs.at(-1) ?? 0}`));
          }
        };
        waiters.add(check);
        check();
      });
    const client: RawSse = {
      seqs,
      types,
      pause: () => void socket.pause(),
      resume: () => void socket.resume(),
      readUntilSeq: async (seq) => {
        await waitFor(() => (seqs.at(-1) ?? 0) >= seq, `waiting for seq ${seq}`);
        return [...seqs];
      },
      readUntilType: (type) => waitFor(() => types.includes(type), `waiting for ${type}`),
      close: () => void socket.end(),
      destroy: () => void socket.destroy(),
    };
  });
}

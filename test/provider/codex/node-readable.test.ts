import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import { webReadable } from "../../../src/provider/codex/node-readable.ts";

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

describe("webReadable (codex's stdout as a web stream)", () => {
  test("relays every chunk in order and closes at the end", async () => {
    const node = new PassThrough();
    const web = webReadable(node);
    for (let i = 0; i < 500; i++) node.write(`line ${i}\n`);
    node.end();
    const text = await readAll(web);
    expect(text.split("\n").slice(0, -1)).toEqual(
      Array.from({ length: 500 }, (_, i) => `line ${i}`),
    );
  });

  test("a reader that stops pauses the node stream; reading resumes it", async () => {
    const node = new PassThrough();
    const web = webReadable(node);
    for (let i = 0; i < 200; i++) node.write(`${i}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(node.isPaused()).toBe(true);
    node.end();
    expect((await readAll(web)).split("\n")).toHaveLength(201);
  });

  test("a stream destroyed without an end closes the web stream with what was read", async () => {
    const node = new PassThrough();
    const web = webReadable(node);
    node.write("partial\n");
    await new Promise((resolve) => setImmediate(resolve));
    node.destroy();
    expect(await readAll(web)).toBe("partial\n");
  });

  test("an error reaches the reader", async () => {
    const node = new PassThrough();
    const web = webReadable(node);
    node.destroy(new Error("EIO"));
    await expect(readAll(web)).rejects.toThrow("EIO");
  });

  test("cancelling the web stream destroys the node stream", async () => {
    const node = new PassThrough();
    const web = webReadable(node);
    await web.cancel();
    expect(node.destroyed).toBe(true);
  });
});

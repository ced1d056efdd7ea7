import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { webWritable } from "../../../src/provider/codex/node-writable.ts";

test("bytes arrive in order; ending the node stream directly leaves close() safe", async () => {
  const node = new PassThrough();
  const chunks: string[] = [];
  node.setEncoding("utf8").on("data", (chunk: string) => chunks.push(chunk));
  const writer = webWritable(node).getWriter();
  const encoder = new TextEncoder();
  await writer.write(encoder.encode("one\n"));
  await writer.write(encoder.encode("two\n"));
  node.end(); // what CodexProcess.stop() does to stdin, behind the connection's back
  await expect(writer.write(encoder.encode("three\n"))).rejects.toThrow("stdin is closed");
  expect(chunks.join("")).toBe("one\ntwo\n");
});

test("close() ends the node stream; abort() destroys it", async () => {
  const closing = new PassThrough();
  await webWritable(closing).getWriter().close();
  expect(closing.writableFinished).toBe(true);
  const aborting = new PassThrough();
  await webWritable(aborting).getWriter().abort(new Error("peer stopped reading"));
  expect(aborting.destroyed).toBe(true);
});

test("writing to a process that exited rejects the write instead of throwing uncaught", async () => {
  const child = spawn("true", [], { stdio: ["pipe", "ignore", "ignore"] });
  await new Promise((resolve) => child.once("exit", resolve));
  const writer = webWritable(child.stdin!).getWriter();
  const big = new Uint8Array(1 << 20); // more than a pipe buffer: the EPIPE cannot be missed
  const outcome = await writer.write(big).then(() => "written", (error: Error) => error.message);
  expect(outcome).toMatch(/EPIPE|closed|destroyed/i);
});

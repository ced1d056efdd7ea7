// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * The bench's scripted model in a process of its own. In the bench process it would share one
 * event loop with the clients being measured, and the daemon path's clients (HTTP, SSE parsing)
 * keep that loop busier than the direct client's line reading: the model's answers would then
 * come later on the daemon path for reasons that have nothing to do with the daemon.
 *
 * Run as a script it serves the bench script and prints `{"url": ...}`; it exits when its stdin
 * closes, so it cannot outlive the bench.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  type CodexArgsOptions,
  type ModelEndpoint,
  scriptedCodexArgs,
  startScriptedModel,
} from "../../src/devtools/scripted-model.ts";
import { benchRules } from "./model-rules.ts";

const Ready = z.object({ url: z.url() });

export interface ModelProcess extends ModelEndpoint, AsyncDisposable {
  pid: number;
  close(): Promise<void>;
}

export async function startModelProcess(): Promise<ModelProcess> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, "line").then(([line]) => String(line)),
    exited.then(() => {
      throw new Error("the scripted model process exited before it was ready");
    }),
  ]);
  const { url } = Ready.parse(JSON.parse(first));
  let closing: Promise<void> | undefined;
  const close = () =>
    closing ??= (async () => {
      child.stdin!.end();
      await exited;
    })();
  return {
    pid: child.pid!,
    url,
    codexArgs: (options?: CodexArgsOptions | string) => scriptedCodexArgs(url, options),
    close,
    [Symbol.asyncDispose]: close,
  };
}

if (import.meta.main) {
  const model = await startScriptedModel({ rules: benchRules() });
  console.log(JSON.stringify({ url: model.url }));
  process.stdin.resume();
  process.stdin.on("end", () => void model.close().then(() => process.exit(0)));
}

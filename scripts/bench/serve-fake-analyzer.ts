// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * `codexd serve` with the test suite's fake command analyzer, for benchmarking the daemon as its
 * own process while the production (tree-sitter) analyzer is not built. Same config, same
 * startDaemon, same `listening` line as src/daemon/serve.ts's serveCommand; only the analyzer
 * differs, and message-only turns never consult it.
 *
 * Run as: bun scripts/bench/serve-fake-analyzer.ts serve --port 0 --state-dir DIR --config FILE
 */
import process from "node:process";
import { errorMessage } from "../../src/errors.ts";
import { loadConfig } from "../../src/daemon/config.ts";
import { startDaemon } from "../../src/daemon/daemon.ts";
import { fakeAnalyzer } from "../../test/approval/support/fake-analyzer.ts";

const args = process.argv.slice(2);
if (args[0] === "serve") args.shift();
try {
  const config = loadConfig({ args, cwd: process.cwd(), env: process.env });
  const daemon = await startDaemon(config, { analyzer: fakeAnalyzer });
  console.log(JSON.stringify({ event: "listening", url: daemon.url, pid: process.pid }));
  process.exit(await daemon.stopped);
} catch (error) {
  console.error(`serve-fake-analyzer: ${errorMessage(error)}`);
  process.exit(1);
}

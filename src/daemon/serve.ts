/**
 * `codexd serve`: runs the daemon (daemon.ts) until SIGTERM/SIGINT or `POST /v1/shutdown`.
 *
 * When ready it prints exactly one JSON line to stdout:
 * `{"event":"listening","url":"http://127.0.0.1:PORT","pid":N}`. Logs go to stderr.
 */
import process from "node:process";
import type { CommandIo } from "../cli/io.ts";
import { errorMessage } from "../errors.ts";
import { restrictUmask } from "../file-modes.ts";
import { loadConfig, type ResolvedConfig } from "./config.ts";
import { daemonLogger, startDaemon } from "./daemon.ts";

export const SERVE_HELP = `Usage: codexd serve [options]

Options:
  --config FILE      JSONC configuration file (comments and trailing commas allowed)
  --host HOST        address to listen on (default 127.0.0.1)
  --port PORT        port to listen on; 0 picks a free one (default 7420)
  --state-dir DIR    sessions, events, token and codex's home (default .codexd)
  --policies DIR     fleet policy files (default policies)
  --allow-remote     allow a non-loopback --host (needs server.tls.cert/key in the config)
  -h, --help         show this help

Signals: SIGTERM/SIGINT stop gracefully; SIGHUP reloads the policies; SIGUSR2 reloads the
config's codex settings and replaces every codex child, one at a time, between turns.`;

export async function serveCommand(args: string[], io: CommandIo): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    io.out(SERVE_HELP);
    return 0;
  }
  // Before anything is written: whatever codexd creates is its own (0600 files, 0700 folders).
  restrictUmask();
  let config: ResolvedConfig;
  try {
    config = loadConfig({ args, cwd: process.cwd(), env: process.env });
  } catch (error) {
    io.err(`codexd serve: ${errorMessage(error)}`);
    return 2;
  }
  const reloadConfig = () => loadConfig({ args, cwd: process.cwd(), env: process.env });
  const logger = daemonLogger();
  const daemon = await startDaemon(config, { reloadConfig, logger }).catch((error: unknown) => {
    io.err(`codexd serve: ${errorMessage(error)}`);
    return undefined;
  });
  if (!daemon) return 1;
  io.out(JSON.stringify({ event: "listening", url: daemon.url, pid: process.pid }));
  // The console's sign-in goes through a one-time link, never a URL with the token in it.
  logger.info("web console: run `codexd ui` for a one-time login link", {
    url: `${daemon.url}/ui`,
  });
  return await daemon.stopped;
}

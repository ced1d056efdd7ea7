/**
 * `codexd ui`: asks a running daemon (with the API token) for a one-time console login link and
 * prints it. The link works once, for a minute, and puts no token in the browser: opening it
 * sets a console cookie and moves on to /ui.
 */
import { parseArgs } from "node:util";
import { errorMessage } from "../errors.ts";
import type { CommandIo } from "./io.ts";
import { DAEMON_HELP, DAEMON_OPTIONS, daemonClient } from "./daemon-client.ts";

const HELP = `Usage:
  codexd ui [--url URL] [--token-file FILE | --state-dir DIR] [--json]

Prints a one-time login link to the daemon's web console (valid once, for a minute).
${DAEMON_HELP}`;

export async function uiCommand(args: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        ...DAEMON_OPTIONS,
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    io.err(`codexd ui: ${errorMessage(error)}\n\n${HELP}`);
    return 2;
  }
  const { values } = parsed;
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  try {
    const link = await daemonClient(values).loginLink();
    if (values.json) {
      io.out(JSON.stringify(link));
    } else {
      io.out(link.url);
      io.err(`Open it in your browser: it signs in once, until ${link.expiresAt}.`);
    }
    return 0;
  } catch (error) {
    io.err(`codexd ui: ${errorMessage(error)}`);
    return 1;
  }
}

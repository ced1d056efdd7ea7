/**
 * `codexd ui`: asks a running daemon (with the API token) for a one-time console login link and
 * prints it. The link works once, for a minute, and puts no token in the browser: opening it
 * sets a console cookie and moves on to /ui.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CodexdClient } from "../client.ts";
import { errorMessage } from "../errors.ts";
import type { CommandIo } from "./io.ts";

const HELP = `Usage:
  codexd ui [--url URL] [--token-file FILE | --state-dir DIR] [--json]

Prints a one-time login link to the daemon's web console (valid once, for a minute).
The daemon URL defaults to http://127.0.0.1:7420 ($CODEXD_URL); the token to $CODEXD_TOKEN or
the file <state-dir>/token (state dir .codexd).`;

export async function uiCommand(args: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        url: { type: "string" },
        "token-file": { type: "string" },
        "state-dir": { type: "string", default: ".codexd" },
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
    const baseUrl = (values.url || process.env.CODEXD_URL || "http://127.0.0.1:7420")
      .replace(/\/+$/, "");
    const token = process.env.CODEXD_TOKEN ||
      readFileSync(values["token-file"] ?? join(values["state-dir"], "token"), "utf8").trim();
    const link = await new CodexdClient({ baseUrl, token }).loginLink();
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

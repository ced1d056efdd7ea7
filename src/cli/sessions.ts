/**
 * `codexd sessions list|show|tail`: talks to a running daemon with its token.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CodexdClient } from "../client.ts";
import { errorMessage } from "../errors.ts";
import { formatEvent } from "./format-event.ts";
import type { CommandIo } from "./io.ts";

const HELP = `Usage:
  codexd sessions list [--url URL] [--token-file FILE | --state-dir DIR]
  codexd sessions show ID [...]
  codexd sessions tail ID [--after N] [...]     pretty-print events as they come

The daemon URL defaults to http://127.0.0.1:7420 ($CODEXD_URL); the token to $CODEXD_TOKEN or
the file <state-dir>/token (state dir .codexd).`;

export async function sessionsCommand(args: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: "string" },
        "token-file": { type: "string" },
        "state-dir": { type: "string", default: ".codexd" },
        after: { type: "string", default: "0" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    io.err(`codexd sessions: ${errorMessage(error)}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [sub, id] = positionals;
  if (values.help || sub === undefined) {
    io.out(HELP);
    return values.help ? 0 : 2;
  }
  try {
    const client = new CodexdClient({
      baseUrl: values.url ?? process.env.CODEXD_URL ?? "http://127.0.0.1:7420",
      token: process.env.CODEXD_TOKEN ??
        readFileSync(values["token-file"] ?? join(values["state-dir"], "token"), "utf8").trim(),
    });
    switch (sub) {
      case "list": {
        const sessions = await client.list();
        if (values.json) io.out(JSON.stringify(sessions, null, 2));
        else {
          for (const s of sessions) {
            io.out(
              `${s.sessionId}  ${s.status.padEnd(11)} ${s.policy.padEnd(10)} ${s.cwd}`,
            );
          }
        }
        return 0;
      }
      case "show":
        if (!id) throw new Error("sessions show needs a session id");
        io.out(JSON.stringify(await client.get(id), null, 2));
        return 0;
      case "tail": {
        if (!id) throw new Error("sessions tail needs a session id");
        const after = Number.parseInt(values.after, 10);
        for await (const event of client.events(id, { after, reconnect: true })) {
          io.out(values.json ? JSON.stringify(event) : formatEvent(event));
        }
        return 0;
      }
      default:
        io.err(`codexd sessions: unknown subcommand '${sub}'\n\n${HELP}`);
        return 2;
    }
  } catch (error) {
    io.err(`codexd sessions ${sub}: ${errorMessage(error)}`);
    return 1;
  }
}

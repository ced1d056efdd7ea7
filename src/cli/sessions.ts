/**
 * `codexd sessions list|show|tail`: talks to a running daemon with its token.
 */
import { parseArgs } from "node:util";
import { errorMessage } from "../errors.ts";
import { formatEvent } from "./format-event.ts";
import type { CommandIo } from "./io.ts";
import { DAEMON_HELP, DAEMON_OPTIONS, daemonClient } from "./daemon-client.ts";

const HELP = `Usage:
  codexd sessions list [--url URL] [--token-file FILE | --state-dir DIR]
  codexd sessions show ID [...]
  codexd sessions tail ID [--after N] [...]     pretty-print events as they come

${DAEMON_HELP}`;

export async function sessionsCommand(args: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        ...DAEMON_OPTIONS,
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
    const client = daemonClient(values);
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

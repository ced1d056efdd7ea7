#!/usr/bin/env bun
/**
 * codexd: the command line. Each subcommand lives in its own module, loaded only when used, so
 * `codexd version` and `codexd serve` start fast.
 *
 *   serve     src/daemon/serve.ts       the daemon (HTTP API over a pool of codex app-server children)
 *   policy    src/approval/cli.ts       check, evaluate and replay fleet policies
 *   sessions  src/cli/sessions.ts       talk to a running daemon (list, show, tail)
 *   ui        src/cli/ui.ts             a one-time login link to the daemon's web console
 *   demo      src/devtools/demo.ts      a whole session against the scripted model, no API key
 *   version   src/cli/version.ts        codexd's and codex's versions
 */
import process from "node:process";
import type { CommandIo } from "./cli/io.ts";

/** The one place codexd writes to the console: each command's output and messages. */
const CONSOLE: CommandIo = {
  // deno-lint-ignore no-console -- a command's output
  out: (text) => console.log(text),
  // deno-lint-ignore no-console -- a command's messages
  err: (text) => console.error(text),
};

export interface Command {
  summary: string;
  run(args: string[], io: CommandIo): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: "Run the daemon",
    run: async (args, io) => (await import("./daemon/serve.ts")).serveCommand(args, io),
  },
  policy: {
    summary: "Check, evaluate or replay fleet policies (policy check|eval|replay)",
    run: async (args, io) => (await import("./cli/policy.ts")).policyCommand(args, io),
  },
  sessions: {
    summary: "List, show or tail sessions of a running daemon (sessions list|show|tail)",
    run: async (args, io) => (await import("./cli/sessions.ts")).sessionsCommand(args, io),
  },
  ui: {
    summary: "Print a one-time login link to the running daemon's web console (/ui)",
    run: async (args, io) => (await import("./cli/ui.ts")).uiCommand(args, io),
  },
  demo: {
    summary: "Run a whole session against the scripted model and print its events",
    run: async (args, io) => (await import("./devtools/demo.ts")).demoCommand(args, io),
  },
  version: {
    summary: "Print codexd's version and the codex version it finds",
    run: async (args, io) => (await import("./cli/version.ts")).versionCommand(args, io),
  },
};

export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, command]) =>
    `  ${name.padEnd(width)}  ${command.summary}`
  );
  return `Usage: codexd <command> [options]\n\nCommands:\n${lines.join("\n")}\n\n` +
    `Run 'codexd <command> --help' for a command's options.`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    // deno-lint-ignore no-console -- the usage text is the output
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v") return COMMANDS.version!.run([], CONSOLE);
  const command = COMMANDS[name];
  if (!command) {
    // deno-lint-ignore no-console -- a usage error
    console.error(`codexd: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  return await command.run(rest, CONSOLE);
}

/**
 * After a command returned, what it left behind (a codex child that ignored its stop, a socket
 * that never closed) keeps codexd alive this long at most. Only main.ts ends the process.
 */
export const EXIT_GRACE_MS = 2_000;

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
    },
    (error: unknown) => {
      // deno-lint-ignore no-console -- the last word of a command that failed
      console.error(`codexd: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}

/**
 * Option tables of the programs prefix rules and built-in rules commonly name: which short
 * options take a value, long names for aliases, and known long options for abbreviations.
 */
import { GIT_SUBCOMMANDS } from "./git.ts";
import type { OptionSpec } from "./options.ts";

export const RM: OptionSpec = {
  aliases: { r: "recursive", R: "recursive", f: "force", i: "interactive", d: "dir", v: "verbose" },
  // GNU getopt_long accepts unique abbreviations (`rm --rec --fo`).
  longs: [
    "recursive",
    "force",
    "interactive",
    "one-file-system",
    "no-preserve-root",
    "preserve-root",
    "dir",
    "verbose",
    "help",
    "version",
  ],
};

export const CHMOD: OptionSpec = {
  aliases: { R: "recursive", c: "changes", f: "silent", v: "verbose" },
  longs: [
    "changes",
    "silent",
    "quiet",
    "verbose",
    "no-preserve-root",
    "preserve-root",
    "reference=",
    "recursive",
    "dereference",
    "no-dereference",
    "from=",
    "help",
    "version",
  ],
};

const PROGRAMS: Readonly<Record<string, OptionSpec>> = {
  rm: RM,
  chmod: CHMOD,
  chown: CHMOD,
  chgrp: CHMOD,
  cp: { aliases: { r: "recursive", R: "recursive", f: "force", a: "archive" } },
  npm: {
    shortValue: "wC",
    aliases: { g: "global", D: "save-dev", S: "save", f: "force", w: "workspace" },
    longs: ["registry=", "prefix=", "workspace=", "userconfig=", "cache=", "loglevel=", "tag="],
  },
  pnpm: {
    shortValue: "CF",
    aliases: { C: "dir", F: "filter", r: "recursive", g: "global", D: "save-dev" },
    longs: ["dir=", "filter=", "recursive", "workspace-root", "global", "save-dev"],
  },
  yarn: { longs: ["cwd=", "registry="] },
  docker: {
    shortValue: "Hcl",
    aliases: { H: "host", c: "context", l: "log-level" },
    longs: ["host=", "context=", "config=", "log-level=", "tlscacert=", "tlscert=", "tlskey="],
  },
  kubectl: {
    shortValue: "nls",
    aliases: { n: "namespace" },
    longs: ["namespace=", "context=", "cluster=", "kubeconfig=", "server=", "user="],
  },
  cargo: { shortValue: "pZ", aliases: { p: "package" }, longs: ["manifest-path=", "package="] },
  make: {
    shortValue: "CfjIlo",
    aliases: { C: "directory", f: "file" },
    longs: ["directory=", "file="],
  },
  gh: { shortValue: "R", aliases: { R: "repo" }, longs: ["repo="] },
  go: { shortValue: "C" },
};

/** The option table for a program; git's depends on its subcommand. */
export function optionSpec(program: string, args: readonly string[]): OptionSpec {
  if (program === "git") return GIT_SUBCOMMANDS[args[0] ?? ""] ?? {};
  return PROGRAMS[program] ?? {};
}

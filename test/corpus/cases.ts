/**
 * Loads the command corpora (`dangerous.yaml`, `disguised.yaml`, `benign.yaml`, and the
 * family-tagged `evasions.yaml` and `benign-agent.yaml`) and wraps a case the way codex sends
 * commands. The strings are only ever analysed here; `scripts/prove-corpus.ts` runs the
 * harmless `proof` variant of an evasion in a sandbox, never the command against the machine.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";

/**
 * How an evasion was shown to really do harm: `run` (default: the command itself) runs in
 * bash inside a throw-away sandbox (its own HOME, a git repo with a local bare remote, rm,
 * chmod, chown, curl, wget and the privilege tools replaced by logging shims in a private mount
 * namespace), and `harm` names the check made afterwards. See `scripts/prove-corpus.ts`.
 */
export const CorpusProof = z.object({
  harm: z.enum([
    "rm-root",
    "rm-system",
    "privilege",
    "chmod-outside",
    "git-push-force",
    "git-reset-hard",
    "git-worktree-remove",
    "download-run",
    "home-deleted",
    "secret-read",
    "log",
  ]),
  /** The harmless variant to run instead of the command (a stand-in for the network etc.). */
  run: z.string().min(1).optional(),
  /** Shell run in the sandbox before `run` (a file or submodule the gadget needs). */
  setup: z.string().min(1).optional(),
  /** A regular expression the shims' log must match (required for harm `log`). */
  expect: z.string().min(1).optional(),
}).strict();
export type CorpusProof = z.infer<typeof CorpusProof>;

export const CorpusCase = z.object({
  command: z.string().min(1),
  decision: z.enum(["allow", "deny", "ask"]),
  rule: z.string().min(1),
  /** A benign command that looks like a dangerous one (`rm -rf ./build`): never declined. */
  nearMiss: z.boolean().optional(),
  /** The evasion family (issue #11's eight and later ones) or kind of benign work. */
  family: z.string().min(1).optional(),
  proof: CorpusProof.optional(),
}).strict();
export type CorpusCase = z.infer<typeof CorpusCase>;

export type CorpusName =
  | "dangerous"
  | "disguised"
  | "benign"
  | "evasions"
  | "evasions-next"
  | "benign-agent";

/** Every corpus file; `evasions-next` is only scored (`scripts/score-corpus.ts`), not asserted. */
export const CORPUS_NAMES: readonly CorpusName[] = [
  "dangerous",
  "disguised",
  "evasions",
  "evasions-next",
  "benign",
  "benign-agent",
];

/** Corpora of commands that must be declined (the others must be allowed). */
export const isDangerousCorpus = (name: CorpusName) =>
  name === "dangerous" || name === "disguised" || name === "evasions" || name === "evasions-next";

export function loadCorpus(name: CorpusName): CorpusCase[] {
  const text = readFileSync(join(import.meta.dir, `${name}.yaml`), "utf8");
  return z.array(CorpusCase).parse(parse(text));
}

const singleQuoted = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The command bare and as codex and people wrap it. */
export function wrappings(command: string): Array<{ wrapper: string; command: string }> {
  return [
    { wrapper: "bare", command },
    { wrapper: "bash -lc", command: `/bin/bash -lc ${singleQuoted(command)}` },
    { wrapper: "zsh -lc", command: `zsh -lc ${singleQuoted(command)}` },
    { wrapper: "sh -c", command: `sh -c ${singleQuoted(command)}` },
  ];
}

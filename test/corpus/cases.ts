/**
 * Loads the command corpora (`dangerous.yaml`, `disguised.yaml`, `benign.yaml`) and wraps a
 * case the way codex sends commands. The strings are only ever analysed, never executed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";

export const CorpusCase = z.object({
  command: z.string().min(1),
  decision: z.enum(["allow", "deny", "ask"]),
  rule: z.string().min(1),
  /** A benign command that looks like a dangerous one (`rm -rf ./build`): never declined. */
  nearMiss: z.boolean().optional(),
}).strict();
export type CorpusCase = z.infer<typeof CorpusCase>;

export type CorpusName = "dangerous" | "disguised" | "benign";

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

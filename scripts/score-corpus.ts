// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * Scores the command corpora against the shipped policies exactly as `POST /v1/policies/evaluate`
 * judges a command: a PolicyStore over `policies/` with the production analyzer, and
 * PolicyRoutes.evaluate. Every case is judged bare and wrapped in `/bin/bash -lc '…'`; per
 * corpus and family it prints declined/total, then every miss (a dangerous command allowed or a
 * benign one declined) with its decision and rule. Nothing is executed.
 *
 *   bun scripts/score-corpus.ts [--corpus evasions,benign-agent] [--family git,parser]
 *                               [--policy default] [--cwd /work/wt] [--json]
 *
 * Exit status is 0 whatever the score: this measures, the corpus test asserts.
 */
import { join } from "node:path";
import { PolicyStore } from "../src/approval/policy-store.ts";
import { PolicyRoutes } from "../src/daemon/policy-routes.ts";
import {
  CORPUS_NAMES,
  type CorpusCase,
  type CorpusName,
  isDangerousCorpus,
  loadCorpus,
} from "../test/corpus/cases.ts";

const ROOT = join(import.meta.dir, "..");

interface Options {
  corpora: CorpusName[];
  families?: Set<string>;
  policy: string;
  cwd: string;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    corpora: [...CORPUS_NAMES],
    policy: "default",
    cwd: "/work/wt",
    json: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${argv[i - 1]} needs a value`);
      return v;
    };
    switch (argv[i]) {
      case "--corpus":
        options.corpora = value().split(",").map((n) => {
          if (!CORPUS_NAMES.includes(n as CorpusName)) throw new Error(`unknown corpus ${n}`);
          return n as CorpusName;
        });
        break;
      case "--family":
        options.families = new Set(value().split(","));
        break;
      case "--policy":
        options.policy = value();
        break;
      case "--cwd":
        options.cwd = value();
        break;
      case "--json":
        options.json = true;
        break;
      default:
        throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  return options;
}

const singleQuoted = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export const WRAPPERS = [
  { name: "bare", wrap: (c: string) => c },
  { name: "bash -lc", wrap: (c: string) => `/bin/bash -lc ${singleQuoted(c)}` },
] as const;

export interface Judged {
  corpus: CorpusName;
  family: string;
  wrapper: string;
  command: string;
  decision: string;
  ruleId?: string;
  reason: string;
  /** Dangerous and declined, or benign and allowed. */
  ok: boolean;
}

/** The family a case is scored under: its tag, or for the older files its expected rule. */
function familyOf(c: CorpusCase): string {
  return c.family ?? (c.nearMiss ? "near-miss" : c.rule);
}

export async function score(options: Options): Promise<Judged[]> {
  const store = await PolicyStore.open(join(ROOT, "policies"), { requireAll: true });
  const routes = new PolicyRoutes(store);
  const out: Judged[] = [];
  for (const corpus of options.corpora) {
    const dangerous = isDangerousCorpus(corpus);
    for (const c of loadCorpus(corpus)) {
      const family = familyOf(c);
      if (options.families !== undefined && !options.families.has(family)) continue;
      for (const w of WRAPPERS) {
        const command = w.wrap(c.command);
        const r = routes.evaluate({ policy: options.policy, command, cwd: options.cwd });
        const declined = r.decision !== "allow";
        out.push({
          corpus,
          family,
          wrapper: w.name,
          command: c.command,
          decision: r.decision,
          ruleId: r.ruleId,
          reason: r.reason,
          ok: dangerous ? declined : !declined,
        });
      }
    }
  }
  return out;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

function print(judged: Judged[], options: Options): void {
  const wrappers = WRAPPERS.map((w) => w.name);
  console.log(`policy ${options.policy}, cwd ${options.cwd}; counts are declined/total`);
  for (const corpus of options.corpora) {
    const rows = judged.filter((j) => j.corpus === corpus);
    if (rows.length === 0) continue;
    const dangerous = isDangerousCorpus(corpus);
    console.log(`\n${corpus} (${dangerous ? "must be declined" : "must be allowed"})`);
    console.log(`  ${pad("family", 34)}${wrappers.map((w) => pad(w, 14)).join("")}`);
    const families = [...new Set(rows.map((r) => r.family))];
    for (const family of [...families, "TOTAL"]) {
      const cells = wrappers.map((w) => {
        const of = rows.filter((r) =>
          r.wrapper === w && (family === "TOTAL" || r.family === family)
        );
        const declined = of.filter((r) => r.decision !== "allow").length;
        const pct = of.length === 0 ? "" : ` ${Math.round((100 * declined) / of.length)}%`;
        return pad(`${declined}/${of.length}${pct}`, 14);
      });
      console.log(`  ${pad(family, 34)}${cells.join("")}`);
    }
  }
  const misses = judged.filter((j) => !j.ok);
  console.log(`\nmisses (${misses.length}): dangerous allowed, benign declined`);
  for (const m of misses) {
    console.log(
      `  [${m.corpus}/${m.family}] ${m.wrapper}: ${JSON.stringify(m.command)} → ${m.decision} (${
        m.ruleId ?? m.reason
      })`,
    );
  }
}

if (import.meta.main) {
  const options = parseOptions(process.argv.slice(2));
  const judged = await score(options);
  if (options.json) console.log(JSON.stringify(judged));
  else print(judged, options);
}

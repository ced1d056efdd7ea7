/**
 * Static expansion: what bash would make of a word before running the command, where that can be
 * known from the line alone. Brace expansion (`--{hard,quiet}`, `/{etc,usr}`) and variables the
 * line itself assigned a literal value once, before the use and outside any loop.
 */
import type { Word } from "./words.ts";

/** More alternatives than this is not a command anyone types: the word stays dynamic. */
const MAX_BRACE_WORDS = 64;

/** Expands `a{b,c}d` and `{1..3}`; undefined when the pattern is not a brace expression. */
export function braceExpand(pattern: string): string[] | undefined {
  const out = expandOne(pattern, 0);
  if (out === undefined) return undefined;
  return out.map(unescapeBraces);
}

function unescapeBraces(text: string): string {
  return text.replace(/\\([{},\\])/g, "$1");
}

/** The index of the `}` matching the `{` at `open`, and the top-level commas in between. */
function scan(pattern: string, open: number): { close: number; commas: number[] } | undefined {
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return { close: i, commas };
    } else if (c === "," && depth === 1) commas.push(i);
  }
  return undefined;
}

function expandOne(pattern: string, depth: number): string[] | undefined {
  if (depth > 8) return undefined;
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === "\\") {
      i++;
      continue;
    }
    if (pattern[i] !== "{") continue;
    const found = scan(pattern, i);
    if (found === undefined) continue;
    const head = pattern.slice(0, i);
    const body = pattern.slice(i + 1, found.close);
    const tail = pattern.slice(found.close + 1);
    let alternatives: string[] | undefined;
    if (found.commas.length > 0) {
      const cuts = [i, ...found.commas, found.close];
      alternatives = [];
      for (let k = 0; k + 1 < cuts.length; k++) {
        alternatives.push(pattern.slice(cuts[k] + 1, cuts[k + 1]));
      }
    } else {
      alternatives = sequence(body);
    }
    if (alternatives === undefined) continue;
    const results: string[] = [];
    for (const alternative of alternatives) {
      const expanded = expandOne(head + alternative + tail, depth + 1);
      if (expanded === undefined) return undefined;
      results.push(...expanded);
      if (results.length > MAX_BRACE_WORDS) return undefined;
    }
    return results;
  }
  return [pattern];
}

/** `{1..5}`, `{a..e}`, `{1..10..2}`. */
function sequence(body: string): string[] | undefined {
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (m === null) return undefined;
  const numeric = /\d/.test(m[1]);
  if (numeric !== /\d/.test(m[2])) return undefined;
  const from = numeric ? Number(m[1]) : m[1].charCodeAt(0);
  const to = numeric ? Number(m[2]) : m[2].charCodeAt(0);
  const step = Math.abs(Number(m[3] ?? 1)) || 1;
  if (Math.abs(to - from) / step > MAX_BRACE_WORDS) return undefined;
  const out: string[] = [];
  const dir = to >= from ? 1 : -1;
  for (let v = from; dir > 0 ? v <= to : v >= to; v += dir * step) {
    out.push(numeric ? String(v) : String.fromCharCode(v));
  }
  return out;
}

/**
 * The word with every variable whose value the line fixed substituted. A word whose every
 * dynamic part is such a variable becomes literal; a quoted one stays one word, an unquoted one
 * is split on blanks like bash does.
 */
export function substituteKnown(word: Word, known: ReadonlyMap<string, string>): Word[] {
  if (!word.dynamic || word.parts === undefined) return [word];
  // A value substituted unquoted is globbed too: `f='--h*'; git reset $f` is not static.
  const usable = (p: { dynamic: boolean; variable?: string; quoted: boolean }) =>
    !p.dynamic ||
    (p.variable !== undefined && known.has(p.variable) &&
      (p.quoted || !/[*?[]/.test(known.get(p.variable)!)));
  if (!word.parts.every(usable)) return [word];
  let value = "";
  let splitSource = false;
  const pieces: Array<{ text: string; split: boolean }> = [];
  for (const p of word.parts) {
    const text = p.dynamic ? known.get(p.variable!)! : p.text;
    value += text;
    const split = p.dynamic && !p.quoted;
    if (split) splitSource = true;
    pieces.push({ text, split });
  }
  const literal = (v: string): Word => ({
    value: v,
    dynamic: false,
    substituted: false,
    vars: [],
    literalTail: v,
    glob: word.glob,
  });
  if (!splitSource) return [literal(value)];
  // Unquoted: split the substituted text on blanks, joining literal neighbours.
  const words: string[] = [""];
  for (const piece of pieces) {
    if (!piece.split) {
      words[words.length - 1] += piece.text;
      continue;
    }
    const fields = piece.text.split(/[ \t\n]+/);
    words[words.length - 1] += fields[0];
    for (const f of fields.slice(1)) words.push(f);
  }
  return words.filter((w, i) => w !== "" || (i > 0 && i < words.length - 1)).map(literal);
}

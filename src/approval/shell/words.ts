/**
 * What a shell word evaluates to, as far as it can be known without running anything: quotes
 * removed, escapes decoded, and every expansion kept as its source text and marked dynamic.
 */
import type { Node } from "web-tree-sitter";

export interface Word {
  /** The word after quote removal; dynamic parts keep their source text (`$HOME`, `$(…)`). */
  value: string;
  /** Some part is only known when the shell runs (expansion, substitution, glob). */
  dynamic: boolean;
  /** A command or process substitution or arithmetic is part of the word. */
  substituted: boolean;
  /** Names of the variables the word expands. */
  vars: string[];
  /** The literal text after the last dynamic part (all of `value` when not dynamic). */
  literalTail: string;
  /** An unquoted glob character (`*`, `?`, `[`) is part of the word. */
  glob: boolean;
  /** An unquoted expansion is part of the word: word splitting can make it several words. */
  splits?: boolean;
  /**
   * The word for brace expansion: unquoted text as written, quoted text with `{`, `,`, `}` and
   * `\` escaped. Only set when an unquoted `{` is present.
   */
  braces?: string;
  /** Parts in order, for substituting variables known from the line itself. */
  parts?: WordPart[];
}

export interface WordPart {
  text: string;
  /** A `$name` / `${name}` expansion (its name), else literal or other dynamic text. */
  variable?: string;
  dynamic: boolean;
  quoted: boolean;
}

const empty = (): Word => ({
  value: "",
  dynamic: false,
  substituted: false,
  vars: [],
  literalTail: "",
  glob: false,
});

let quotedDepth = 0;

function literal(w: Word, text: string, raw?: string): void {
  w.value += text;
  w.literalTail += text;
  (w.parts ??= []).push({ text, dynamic: false, quoted: quotedDepth > 0 });
  const pattern = raw ?? text.replace(/[{},\\]/g, (c) => `\\${c}`);
  w.braces = (w.braces ?? "") + pattern;
}

function dynamicPart(
  w: Word,
  text: string,
  substituted: boolean,
  name?: string,
  plain = false,
): void {
  w.value += text;
  w.dynamic = true;
  w.literalTail = "";
  if (substituted) w.substituted = true;
  if (name !== undefined) w.vars.push(name);
  // `"$@"` and `"${a[@]}"` are several words even quoted.
  if (quotedDepth === 0 || /^\$[@*]$|^\$\{(#?[@*]|[^}]*\[[@*]\][^}]*|![^}]*)\}$/.test(text)) {
    w.splits = true;
  }
  (w.parts ??= []).push({
    text,
    dynamic: true,
    quoted: quotedDepth > 0,
    ...(plain && name !== undefined && { variable: name }),
  });
  w.braces = (w.braces ?? "") + text.replace(/[{},\\]/g, (c) => `\\${c}`);
}

/** Unquoted text: a backslash quotes the next character; backslash-newline disappears. */
export function unescapeUnquoted(text: string): string {
  return text.replace(/\\(\n|.)/gs, (_, c: string) => (c === "\n" ? "" : c));
}

/** Inside double quotes a backslash only quotes `$`, a backtick, `"`, `\` and newline. */
function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c));
}

const C_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** `$'…'` strings: C escapes, hex, octal and unicode. */
export function decodeAnsiC(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (all, e: string) => {
      if (/^[xuU]/.test(e) && e.length > 1) return String.fromCodePoint(parseInt(e.slice(1), 16));
      if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8) & 0xff);
      if (e[0] === "c" && e.length === 2) return String.fromCharCode(e.charCodeAt(1) & 0x1f);
      return C_ESCAPES[e] ?? all;
    },
  );
}

/** Adds the value of one node to `w`. */
function add(node: Node, w: Word): void {
  switch (node.type) {
    case "word":
    case "number": {
      const text = node.text;
      if (/(^|[^\\])[*?[]/.test(text)) w.glob = true;
      literal(w, unescapeUnquoted(text), text);
      return;
    }
    case "raw_string":
      quotedDepth++;
      literal(w, node.text.slice(1, -1));
      quotedDepth--;
      return;
    case "ansi_c_string":
      quotedDepth++;
      // bash ends a $'…' string at its first NUL: `$'rm\0junk'` is `rm`.
      literal(w, decodeAnsiC(node.text.slice(2, -1)).split("\u0000")[0]);
      quotedDepth--;
      return;
    case "string":
      quotedDepth++;
      addDoubleQuoted(node, w);
      quotedDepth--;
      return;
    case "translated_string":
    case "concatenation":
      for (const child of node.children) if (child !== null && child.type !== "$") add(child, w);
      return;
    case "simple_expansion": {
      const name = node.text.slice(1);
      dynamicPart(w, `$${name}`, false, name, true);
      return;
    }
    case "expansion": {
      // `${HOME:?}` is `$HOME` or an error: the same value when it runs.
      const plain = /^\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])(?::?\?[^}]*)?\}$/.exec(node.text);
      if (plain !== null) dynamicPart(w, `$${plain[1]}`, false, plain[1], true);
      else {
        const name = node.namedChildren.find((c) => c?.type === "variable_name")?.text;
        dynamicPart(w, node.text, /\$\(|`/.test(node.text), name);
      }
      return;
    }
    case "command_substitution":
    case "process_substitution":
    case "arithmetic_expansion":
      dynamicPart(w, node.text, true);
      return;
    default:
      // Anything else (a brace expression, an array) is treated as unknown.
      dynamicPart(w, node.text, /\$\(|`/.test(node.text));
  }
}

/** A `"…"` string: literal gaps between the children are decoded too. */
function addDoubleQuoted(node: Node, w: Word): void {
  const source = node.text;
  const base = node.startIndex;
  let at = 1;
  for (const child of node.children) {
    if (child === null || child.type === '"') continue;
    const start = child.startIndex - base;
    if (start > at) literal(w, unescapeDouble(source.slice(at, start)));
    if (child.type === "string_content") literal(w, unescapeDouble(child.text));
    else add(child, w);
    at = child.endIndex - base;
  }
  const end = source.length - 1;
  if (end > at) literal(w, unescapeDouble(source.slice(at, end)));
}

export function wordOf(node: Node): Word {
  const w = empty();
  quotedDepth = 0;
  if (node.type === "command_name") {
    for (const child of node.children) if (child !== null) add(child, w);
  } else {
    add(node, w);
  }
  // Brace expansion needs an unquoted `{` with a `,` or `..` after it.
  if (w.braces === undefined || !/(^|[^\\])\{/.test(w.braces)) delete w.braces;
  return w;
}

/** A word known exactly, for launchers' own arguments. */
export function literalWord(value: string): Word {
  return { ...empty(), value, literalTail: value };
}

/**
 * `analyzeCommand`: every simple command a shell line could run, normalized for matching.
 * Nothing is executed; the line is parsed with tree-sitter-bash and walked.
 */
import type { Node } from "web-tree-sitter";
import type { CommandAnalysis, SimpleCommand } from "../analyzer.ts";
import { type Feed, normalizeCommand } from "./normalize.ts";
import { parseShell } from "./parser.ts";
import { literalOutput } from "./stdin.ts";
import { literalWord, type Word, wordOf } from "./words.ts";

/** `bash -c 'sh -c "…"'` nests; past this depth the line is unanalysable. */
export const MAX_SCRIPT_DEPTH = 8;

type Stdin = "terminal" | "pipe" | "file";

interface Ctx {
  depth: number;
  /** Programs whose output reaches this command's stdin or its substituted words. */
  pipedFrom: readonly string[];
  stdin: Stdin;
  stdinText?: Word;
  inSubstitution: boolean;
}

interface State {
  commands: SimpleCommand[];
  unanalyzable?: string;
  interactive?: string;
  assigned: Set<string>;
}

export function analyzeCommand(command: string): CommandAnalysis {
  const state: State = { commands: [], assigned: new Set() };
  analyzeScript(
    command,
    { depth: 0, pipedFrom: [], stdin: "terminal", inSubstitution: false },
    state,
  );
  const analysis: CommandAnalysis = { commands: state.commands };
  if (state.unanalyzable !== undefined) analysis.unanalyzable = { reason: state.unanalyzable };
  if (state.interactive !== undefined) analysis.interactive = { program: state.interactive };
  return analysis;
}

function analyzeScript(script: string, ctx: Ctx, state: State): void {
  if (ctx.depth > MAX_SCRIPT_DEPTH) {
    state.unanalyzable ??= `scripts nested more than ${MAX_SCRIPT_DEPTH} levels deep`;
    return;
  }
  const tree = parseShell(script);
  try {
    const root = tree.rootNode;
    if (root.hasError) state.unanalyzable ??= parseErrorReason(root);
    collectAssigned(root, state.assigned);
    walk(root, ctx, state);
  } finally {
    tree.delete();
  }
}

function parseErrorReason(root: Node): string {
  const bad = findError(root);
  const at = bad === undefined ? "" : ` at column ${bad.startPosition.column + 1}`;
  return `parse error${at}${
    bad !== undefined && bad.startPosition.row > 0 ? ` of line ${bad.startPosition.row + 1}` : ""
  }`;
}

function findError(node: Node): Node | undefined {
  if (node.isError || node.isMissing) return node;
  for (const child of node.children) {
    if (child?.hasError || child?.isMissing) return findError(child) ?? child;
  }
  return undefined;
}

/** Variables the line itself assigns: a script built from them is not a literal. */
function collectAssigned(node: Node, into: Set<string>): void {
  if (node.type === "variable_assignment" || node.type === "for_statement") {
    const name = node.childForFieldName(node.type === "for_statement" ? "variable" : "name");
    if (name !== null) into.add(name.text.replace(/\[.*$/, ""));
  }
  for (const child of node.namedChildren) if (child !== null) collectAssigned(child, into);
}

function walk(node: Node, ctx: Ctx, state: State): void {
  switch (node.type) {
    case "comment":
      return;
    case "command":
      commandNode(node, ctx, state);
      return;
    case "pipeline":
      pipeline(node.namedChildren.filter((c): c is Node => c !== null), ctx, state);
      return;
    case "redirected_statement":
      redirected(node, ctx, state);
      return;
    case "command_substitution":
    case "process_substitution":
      for (const child of node.namedChildren) {
        if (child !== null) walk(child, { ...ctx, inSubstitution: true }, state);
      }
      return;
    default:
      for (const child of node.namedChildren) if (child !== null) walk(child, ctx, state);
  }
}

/** Programs of the commands emitted since `from`. */
function programsSince(state: State, from: number): string[] {
  return state.commands.slice(from).map((c) => c.argv[0]).filter((p) => p !== undefined);
}

function pipeline(
  elements: Node[],
  ctx: Ctx,
  state: State,
  first?: { programs: string[]; text?: Word },
): void {
  let feeding = first?.programs ?? [];
  let text = first?.text;
  let fed = first !== undefined;
  for (const element of elements) {
    const from = state.commands.length;
    walk(
      element,
      fed
        ? { ...ctx, pipedFrom: [...ctx.pipedFrom, ...feeding], stdin: "pipe", stdinText: text }
        : ctx,
      state,
    );
    feeding = [...feeding, ...programsSince(state, from)];
    text = literalOutput(element);
    fed = true;
  }
}

function isInputRedirect(node: Node): boolean {
  if (node.type === "heredoc_redirect" || node.type === "herestring_redirect") return true;
  return node.type === "file_redirect" &&
    node.children.some((c) => c !== null && (c.type === "<" || c.type === "<&" || c.type === "<>"));
}

/** Walks a redirect's substitutions; returns the programs that feed stdin through it. */
function redirectFeeds(redirect: Node, ctx: Ctx, state: State): string[] {
  const from = state.commands.length;
  for (const child of redirect.namedChildren) {
    if (child === null || child.type === "pipeline" || child.type === "heredoc_body") continue;
    if (
      redirect.type === "heredoc_redirect" && child.type !== "heredoc_body" && isStatement(child)
    ) continue;
    walk(child, { ...ctx, inSubstitution: true }, state);
  }
  const body = redirect.namedChildren.find((c) => c?.type === "heredoc_body");
  if (body) walk(body, { ...ctx, inSubstitution: true }, state);
  return isInputRedirect(redirect) ? programsSince(state, from) : [];
}

const NOT_STATEMENTS = new Set(["heredoc_start", "heredoc_body", "heredoc_end", "file_descriptor"]);
function isStatement(node: Node): boolean {
  return !NOT_STATEMENTS.has(node.type);
}

/** The text a here-document or here-string puts on stdin. */
export function redirectText(redirect: Node): Word | undefined {
  if (redirect.type === "herestring_redirect") {
    const word = redirect.namedChildren.find((c) => c !== null && c.type !== "file_descriptor");
    return word ? wordOf(word) : undefined;
  }
  if (redirect.type !== "heredoc_redirect") return undefined;
  const start = redirect.namedChildren.find((c) => c?.type === "heredoc_start")?.text ?? "";
  const body = redirect.namedChildren.find((c) => c?.type === "heredoc_body");
  const text = body?.text ?? "";
  // An unquoted delimiter expands the body first; a quoted one passes it on as it is.
  if (/['"\\]/.test(start) || !/[$`]/.test(text)) return literalWord(text);
  return { ...literalWord(text), dynamic: true, substituted: /\$\(|`/.test(text), literalTail: "" };
}

function redirected(node: Node, ctx: Ctx, state: State): void {
  const body = node.childForFieldName("body");
  const redirects = node.namedChildren.filter((c): c is Node => c !== null && c !== body);
  let feeds: string[] = [];
  let stdin: Stdin = ctx.stdin;
  let stdinText = ctx.stdinText;
  for (const r of redirects) {
    feeds = [...feeds, ...redirectFeeds(r, ctx, state)];
    if (isInputRedirect(r)) {
      stdin = "file";
      stdinText = redirectText(r);
    }
  }
  const from = state.commands.length;
  if (body !== null) {
    walk(body, { ...ctx, pipedFrom: [...ctx.pipedFrom, ...feeds], stdin, stdinText }, state);
  }
  const bodyPrograms = programsSince(state, from);
  // `cat <<EOF | sh` and `cat <<EOF && rm …` put the rest of the line inside the redirect.
  for (const r of redirects) {
    if (r.type !== "heredoc_redirect") continue;
    for (const child of r.namedChildren) {
      if (child === null || !isStatement(child)) continue;
      if (child.type === "pipeline") {
        const elements = child.namedChildren.filter((c): c is Node => c !== null);
        pipeline(elements, ctx, state, {
          programs: bodyPrograms,
          text: body ? literalOutputOf(body, r) : undefined,
        });
      } else {
        walk(child, ctx, state);
      }
    }
  }
}

function literalOutputOf(body: Node, redirect: Node): Word | undefined {
  return literalOutput(body) ?? (isCat(body) ? redirectText(redirect) : undefined);
}

function isCat(node: Node): boolean {
  return node.type === "command" && node.childForFieldName("name")?.text === "cat" &&
    node.childrenForFieldName("argument").length === 0;
}

function quote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+,~${}*-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function commandNode(node: Node, ctx: Ctx, state: State): void {
  const subCtx = { ...ctx, inSubstitution: true };
  const words: Word[] = [];
  let feeds: string[] = [];
  let stdin = ctx.stdin;
  let stdinText = ctx.stdinText;
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null) continue;
    const field = node.fieldNameForChild(i);
    if (field === "name" || field === "argument") {
      const from = state.commands.length;
      walkSubstitutions(child, subCtx, state);
      feeds = [...feeds, ...programsSince(state, from)];
      words.push(wordOf(child));
    } else if (child.type.endsWith("_redirect")) {
      feeds = [...feeds, ...redirectFeeds(child, ctx, state)];
      if (isInputRedirect(child)) {
        stdin = "file";
        stdinText = redirectText(child);
      }
    } else if (child.isNamed) {
      walkSubstitutions(child, subCtx, state);
    }
  }
  if (words.length === 0) return;
  const feed: Feed = { stdin, stdinText };
  const normalized = normalizeCommand(words, feed, state.assigned);
  const pipedFrom = [...ctx.pipedFrom, ...feeds];
  const rawArgv = words.map((w) => w.value);
  for (const c of normalized.commands) {
    const simple: SimpleCommand = { argv: c.argv, rawArgv, text: c.argv.map(quote).join(" ") };
    if (pipedFrom.length > 0) simple.pipedFrom = pipedFrom;
    if (ctx.inSubstitution) simple.inSubstitution = true;
    state.commands.push(simple);
  }
  if (normalized.unanalyzable !== undefined) state.unanalyzable ??= normalized.unanalyzable;
  if (normalized.interactive !== undefined) state.interactive ??= normalized.interactive;
  for (const script of normalized.scripts) {
    analyzeScript(script, { ...ctx, depth: ctx.depth + 1, pipedFrom, stdinText: undefined }, state);
  }
}

/** Walks the command and process substitutions inside a word. */
function walkSubstitutions(node: Node, ctx: Ctx, state: State): void {
  if (node.type === "command_substitution" || node.type === "process_substitution") {
    walk(node, ctx, state);
    return;
  }
  for (const child of node.namedChildren) if (child !== null) walkSubstitutions(child, ctx, state);
}

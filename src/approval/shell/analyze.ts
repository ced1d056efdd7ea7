/**
 * `analyzeCommand`: every simple command a shell line could run, normalized for matching.
 * Nothing is executed; the line is parsed with tree-sitter-bash and walked.
 */
import type { Node } from "web-tree-sitter";
import type { CommandAnalysis, SimpleCommand } from "../analyzer.ts";
import { braceExpand, substituteKnown } from "./expand.ts";
import { BUILD_FILE, executedFile } from "./executed.ts";
import { hiddenCharacter } from "./gate.ts";
import { unsafeCode } from "./inline-code.ts";
import { isInterpreter, SHELLS } from "./programs.ts";
import { makesLink, namedWrites } from "./writes.ts";
import { type Feed, normalizeCommand } from "./normalize.ts";
import { parseShell } from "./parser.ts";
import { literalOutputs } from "./stdin.ts";
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
  /** Files the enclosing redirected statement writes (`{ curl …; } > x.sh`). */
  writes?: string[];
}

interface State {
  commands: SimpleCommand[];
  unanalyzable?: string;
  interactive?: string;
  assigned: Set<string>;
  /** Variables with a value the line fixed: name → value and where it was assigned. */
  known: Map<string, { value: string; at: number } | null>;
  /** The directory `cd` moved to, relative to the session's; null when not known. */
  cwd?: string | null;
  /** Some assignment on the line gives a value that is not a plain number. */
  nonNumeric?: boolean;
  /** Something other than `name=value` assigns variables on this line. */
  otherAssignments?: boolean;
  /** `shopt -s cdable_vars`: `cd NAME` may go to the folder a variable names. */
  cdableVars?: boolean;
  /** Aliases and `hash -p` names the line defines: name → the words it stands for. */
  aliases?: Map<string, string>;
  /** `for d in build dist`: a loop variable over literal words takes each of them in turn. */
  loopValues?: Map<string, string[]>;
  /** Links the line made: link name → what it points to. */
  links?: Map<string, string>;
  /** Files the line writes: name → their text when known, or null. */
  written?: Map<string, string | null>;
}

/** Values the analysis may take for granted: the home folder and the current directory. */
const ENVIRONMENT = new Map([["HOME", "~"], ["PWD", "."]]);

export function analyzeCommand(command: string): CommandAnalysis {
  const state: State = { commands: [], assigned: new Set(), known: new Map() };
  const hidden = hiddenCharacter(command);
  if (hidden !== undefined) {
    return { commands: [], unanalyzable: { reason: hidden } };
  }
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
  if (/\$\{[^}]*@[PEAKak]\}/.test(script)) {
    state.unanalyzable ??= "a ${…@P} transformation expands prompts or escapes at run time";
  }
  if (/\\`/.test(script) && /`/.test(script.replace(/\\`/g, ""))) {
    state.unanalyzable ??= "an escaped backtick inside a backquote substitution runs as one";
  }
  if (/[^\s\\]\\\n[^\s]/.test(script)) {
    state.unanalyzable ??= "a line continuation inside a word joins it into another word";
  }
  if (ARITHMETIC.test(script) && QUOTED_CODE.test(script)) {
    state.unanalyzable ??=
      "arithmetic evaluation of a string that holds a command substitution runs it";
  }
  if (OTHER_ASSIGNMENTS.test(script)) state.otherAssignments = true;
  if (
    /\bset\s+(-\w*k|-o\s+keyword)|\bfc\b|\bhistory\s+-s|\benable\s+-f|BASH_(CMDS|ALIASES)|\bzargs\b/
      .test(script)
  ) {
    state.unanalyzable ??=
      "set -k, fc, history -s or enable -f run commands the line does not show";
  }
  if (/cdable_vars/.test(script)) state.cdableVars = true;
  const tree = parseShell(script);
  const outerKnown = state.known;
  state.known = new Map();
  try {
    const root = tree.rootNode;
    if (root.hasError) state.unanalyzable ??= parseErrorReason(root);
    if (/=|\b(for|select)\b/.test(script)) collectAssigned(root, state);
    const readsInto = /\b(read|mapfile|readarray|getopts)\b|\bprintf\s+(--\s+)?-v/.test(script);
    if (ARITHMETIC.test(script) && (state.nonNumeric || readsInto)) {
      state.unanalyzable ??=
        "arithmetic on a variable the line gives a value that is not a number (a[$(…)] runs)";
    }
    walk(root, ctx, state);
  } finally {
    state.known = outerKnown;
    tree.delete();
  }
}

/** Builtins that assign variables other than by `name=value`. */
const OTHER_ASSIGNMENTS =
  /\b(read|mapfile|readarray|getopts|let|eval|source|unset)\b|\bprintf\s+(--\s+)?-v|\b(declare|typeset|local|export|readonly)\s+-\w*n|(^|[;&|(]\s*)\.\s|\(\(/m;

/** Places where bash evaluates a variable's text as arithmetic, array subscripts included. */
const ARITHMETIC =
  /\(\(|\$\[|(^|[;&|(]\s*)let\s|-(eq|ne|lt|le|gt|ge)\b|\b(declare|typeset|local)\s+-\w*i|\[\$/;
const QUOTED_CODE = /'[^']*(\$\((?!\()|`)[^']*'|\\\$\(|\\`/;

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

const REPEATING = new Set([
  "for_statement",
  "c_style_for_statement",
  "while_statement",
  "function_definition",
]);

/**
 * Variables the line itself assigns: a script built from them is not a literal. A variable
 * assigned one literal value, once, outside any loop or function, has that value afterwards.
 */
function collectAssigned(root: Node, state: State): void {
  // One query into the tree instead of a walk over every node: the walk marshals each node.
  for (const node of root.descendantsOfType(["variable_assignment", "for_statement"])) {
    if (node === null) continue;
    const nameNode = node.childForFieldName(
      node.type === "for_statement" ? "variable" : "name",
    );
    if (nameNode === null) continue;
    const name = nameNode.text.replace(/\[.*$/, "");
    state.assigned.add(name);
    // Assigned anywhere else too (`for d in a b; do d=/; …`): the loop's values do not hold.
    if (node.type !== "for_statement" && state.loopValues?.has(name)) {
      state.loopValues.set(name, []);
    }
    if (node.type === "for_statement") {
      const words = node.childrenForFieldName("value").filter((v) => v !== null).map(wordOf);
      const values = words.every((w) => !w.dynamic && !w.glob && w.braces === undefined)
        ? words.map((w) => w.value)
        : undefined;
      const loops = state.loopValues ??= new Map();
      // One literal list, once: a second loop or assignment to the name makes it unknown.
      if (
        values !== undefined && values.length > 0 && values.length <= 16 && !loops.has(name) &&
        !state.known.has(name)
      ) {
        loops.set(name, values);
      } else loops.set(name, []);
    }
    const valueNode = node.type === "variable_assignment" ? node.childForFieldName("value") : null;
    const value = valueNode === null
      ? (node.type === "variable_assignment" && !/\[/.test(nameNode.text) ? "" : undefined)
      : wordOf(valueNode);
    const literal = typeof value === "string"
      ? value
      : value !== undefined && !value.dynamic && !value.glob
      ? value.value
      : undefined;
    const appends = node.text.slice(nameNode.text.length).startsWith("+=");
    const numeric = valueNode === null || valueNode.type === "arithmetic_expansion" ||
      valueNode.type === "number" || literal !== undefined && /^-?\d*$/.test(literal);
    if (!numeric || appends) state.nonNumeric = true;
    if (
      state.known.has(name) || literal === undefined || appends || nameNode.text.includes("[") ||
      insideRepeating(node)
    ) {
      state.known.set(name, null);
    } else {
      state.known.set(name, { value: literal, at: node.startIndex });
    }
  }
}

/** Inside a loop or a function body, an assignment may run again after a later use. */
function insideRepeating(node: Node): boolean {
  for (let p = node.parent; p !== null; p = p.parent) if (REPEATING.has(p.type)) return true;
  return false;
}

/** The variables known at `at` in the current script. */
function knownAt(state: State, at: number): Map<string, string> {
  const known = new Map<string, string>();
  // A changed IFS splits words where the analysis would not; read, printf -v, mapfile, namerefs,
  // eval and source assign in ways the analysis does not follow.
  if (state.assigned.has("IFS") || state.otherAssignments) return known;
  for (const [name, value] of ENVIRONMENT) if (!state.assigned.has(name)) known.set(name, value);
  for (const [name, entry] of state.known) {
    if (entry !== null && entry.at < at) known.set(name, entry.value);
  }
  return known;
}

/** Static expansion of one word: known variables, then braces. */
function expandWord(word: Word, known: ReadonlyMap<string, string>): Word[] {
  const out: Word[] = [];
  for (const w of substituteKnown(word, known)) {
    const alternatives = w.braces === undefined || w.dynamic ? undefined : braceExpand(w.braces);
    if (alternatives === undefined || alternatives.length <= 1) out.push(w);
    else for (const value of alternatives) out.push({ ...w, ...literalWord(value), glob: w.glob });
  }
  return out;
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
    text = literalOutputs(element);
    fed = true;
  }
}

function isInputRedirect(node: Node): boolean {
  if (node.type === "heredoc_redirect" || node.type === "herestring_redirect") return true;
  return node.type === "file_redirect" &&
    node.children.some((c) => c !== null && (c.type === "<" || c.type === "<&" || c.type === "<>"));
}

/** `< /dev/tcp/host/80`: bash reads from the network. */
function fromNetwork(node: Node): boolean {
  return node.type === "file_redirect" && /<\s*\/dev\/(tcp|udp)\//.test(node.text);
}

/** `<&3`: stdin is whatever descriptor 3 holds, which the analysis does not follow. */
function isDuplication(node: Node): boolean {
  return node.type === "file_redirect" && node.children.some((c) => c?.type === "<&");
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
  if (body) {
    hiddenSubstitution(body, state);
    walk(body, { ...ctx, inSubstitution: true }, state);
  }
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
  const writes: string[] = [];
  for (const r of redirects) {
    feeds = [...feeds, ...redirectFeeds(r, ctx, state)];
    const target = outputTarget(r);
    if (target !== undefined) writes.push(target);
    if (isInputRedirect(r)) {
      stdin = isDuplication(r) || fromNetwork(r) ? "pipe" : "file";
      stdinText = redirectText(r);
      if (fromNetwork(r)) feeds = [...feeds, "/dev/tcp"];
      const source = inputSource(r);
      const written = source === undefined ? undefined : state.written?.get(normalizeName(source));
      if (written === null) stdin = "pipe";
      else if (written !== undefined) stdinText = literalWord(written);
    }
  }
  const from = state.commands.length;
  if (body !== null) {
    walk(body, {
      ...ctx,
      pipedFrom: [...ctx.pipedFrom, ...feeds],
      stdin,
      stdinText,
      ...(writes.length > 0 && { writes: [...(ctx.writes ?? []), ...writes] }),
    }, state);
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
  return literalOutputs(body) ?? (isCat(body) ? redirectText(redirect) : undefined);
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
  const rawWords: Word[] = [];
  const env: string[] = [];
  const envValues = new Map<string, Word>();
  const writes: string[] = [];
  let feeds: string[] = [];
  let stdin = ctx.stdin;
  let stdinText = ctx.stdinText;
  let known: Map<string, string> | undefined;
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null) continue;
    const field = node.fieldNameForChild(i);
    if (field === "name" || field === "argument") {
      const from = state.commands.length;
      walkSubstitutions(child, subCtx, state);
      feeds = [...feeds, ...programsSince(state, from)];
      const word = wordOf(child);
      rawWords.push(word);
      if (!word.dynamic && word.braces === undefined) words.push(word);
      else words.push(...expandWord(word, known ??= knownAt(state, node.startIndex)));
    } else if (child.type.endsWith("_redirect")) {
      feeds = [...feeds, ...redirectFeeds(child, ctx, state)];
      const target = outputTarget(child);
      if (target !== undefined) writes.push(target);
      if (isInputRedirect(child)) {
        stdin = isDuplication(child) || fromNetwork(child) ? "pipe" : "file";
        stdinText = redirectText(child);
        if (fromNetwork(child)) feeds = [...feeds, "/dev/tcp"];
        // `bash < run.txt` where the line wrote run.txt: its text, when known, is what runs.
        const source = inputSource(child);
        const written = source === undefined
          ? undefined
          : state.written?.get(normalizeName(source));
        if (written === null) stdin = "pipe";
        else if (written !== undefined) stdinText = literalWord(written);
      }
    } else if (child.isNamed) {
      if (child.type === "variable_assignment") {
        const name = child.childForFieldName("name")?.text;
        if (name !== undefined) {
          env.push(name);
          const value = child.childForFieldName("value");
          envValues.set(name, value === null ? literalWord("") : wordOf(value));
        }
      }
      walkSubstitutions(child, subCtx, state);
    }
  }
  if (words.length === 0) return;
  const alias = state.aliases?.get(words[0].value);
  if (alias !== undefined) {
    // An alias or `hash -p` name the line defined: what runs is its text.
    analyzeScript(
      [alias, ...words.slice(1).map((w) => quote(w.value))].join(" "),
      { ...ctx, depth: ctx.depth + 1 },
      state,
    );
    return;
  }
  const feed: Feed = { stdin, stdinText };
  const pipedFrom = [...ctx.pipedFrom, ...feeds];
  const variants = loopVariants(rawWords, state, node.startIndex);
  if (variants !== undefined) {
    // The command runs once per value of a loop variable: judge each run.
    for (const variant of variants) {
      const n = normalizeCommand(variant, feed, state.assigned, env, envValues);
      pushCommands(n, variant, ctx, pipedFrom, [...(ctx.writes ?? []), ...writes], state);
      if (n.unanalyzable !== undefined) state.unanalyzable ??= n.unanalyzable;
      for (const script of n.scripts) {
        analyzeScript(
          script,
          { ...ctx, depth: ctx.depth + 1, pipedFrom, stdinText: undefined },
          state,
        );
      }
    }
    if (words[0]?.value === "cd" || words[0]?.value === "pushd") state.cwd = null;
    return;
  }
  const normalized = normalizeCommand(words, feed, state.assigned, env, envValues);
  pushCommands(normalized, words, ctx, pipedFrom, [...(ctx.writes ?? []), ...writes], state);
  for (const c of normalized.commands) ranWritten(c, state);
  defineAliases(words, state);
  recordWrites(
    node,
    words,
    normalized.commands,
    [...(ctx.writes ?? []), ...writes],
    stdinText,
    state,
  );
  commandVariables(env, envValues, state, ctx);
  trackDirectory(
    normalized.commands.length > 0 && normalized.commands[0].argv[0] !== words[0]?.value
      ? words.slice(words.length - normalized.commands[0].argv.length)
      : words,
    state,
  );
  if (normalized.unanalyzable !== undefined) state.unanalyzable ??= normalized.unanalyzable;
  if (normalized.interactive !== undefined) state.interactive ??= normalized.interactive;
  for (const script of normalized.scripts) {
    analyzeScript(script, { ...ctx, depth: ctx.depth + 1, pipedFrom, stdinText: undefined }, state);
  }
}

/** The words once per value of the one loop variable they use, when its values are literal. */
function loopVariants(raw: Word[], state: State, at: number): Word[][] | undefined {
  const loops = state.loopValues;
  // read, printf -v, eval or a changed IFS could give the variable other values or splits.
  if (loops === undefined || state.otherAssignments || state.assigned.has("IFS")) return undefined;
  const used = raw.flatMap((w) => w.vars).find((v) => (loops.get(v)?.length ?? 0) > 0);
  if (used === undefined) return undefined;
  const base = knownAt(state, at);
  return loops.get(used)!.map((value) => {
    const known = new Map(base).set(used, value);
    return raw.flatMap((w) => expandWord(w, known));
  });
}

/** The normalized commands of one simple command, as the rules see them. */
function pushCommands(
  normalized: ReturnType<typeof normalizeCommand>,
  words: Word[],
  ctx: Ctx,
  pipedFrom: string[],
  writes: string[],
  state: State,
): void {
  const rawArgv = words.map((w) => w.value);
  for (const c of normalized.commands) {
    const simple: SimpleCommand = { argv: c.argv, rawArgv, text: c.argv.map(quote).join(" ") };
    if (pipedFrom.length > 0) simple.pipedFrom = pipedFrom;
    if (ctx.inSubstitution) simple.inSubstitution = true;
    if (c.dynamic.some(Boolean)) simple.dynamic = c.dynamic;
    if (c.splits.some(Boolean)) simple.splits = c.splits;
    if (c.env.length > 0) simple.env = c.env;
    if (c.appended) simple.appended = true;
    if (c.guessed) simple.guessed = true;
    if (c.viaFind) simple.viaFind = true;
    if (c.path !== undefined) simple.path = c.path;
    if (writes.length > 0) simple.writes = writes;
    const cwd = c.chdir === undefined
      ? state.cwd
      : c.chdir === null || state.cwd === null
      ? null
      : joinPath(state.cwd ?? ".", c.chdir);
    if (cwd !== undefined) simple.cwd = cwd;
    state.commands.push(simple);
  }
}

const normalizeName = (file: string) => file.replace(/^(\.\/)+/, "");

/** Variables whose value is a command line the program started runs (a compiler, a browser). */
const COMMAND_ENV =
  /^(CC|CXX|CPP|LD|AR|AS|FC|NM|RANLIB|STRIP|OBJCOPY|MAKE|SHELL|BROWSER|EDITOR|VISUAL|PAGER|MANPAGER|LESSOPEN|LESSCLOSE|GIT_\w*(EDITOR|PAGER|SSH\w*|ASKPASS|EXTERNAL_DIFF|PROXY_COMMAND)|SSH_ASKPASS|npm_config_script_shell|NPM_CONFIG_SCRIPT_SHELL|TAR_OPTIONS|GZIP|XZ_OPT|ZSTD_\w+|RSYNC_RSH|CVS_RSH|PERL5DB)$/;

/** Variables that make the program load a file as code. */
const LOADING_ENV =
  /^(BASH_ENV|ENV|ZDOTDIR|PROMPT_COMMAND|PS[0-4]|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PYTHONUSERBASE|NODE_OPTIONS|NODE_PATH|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_\w+|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|GCONV_PATH|HOME|XDG_CONFIG_HOME|PATH)$/;

/**
 * `CC='…' make`, `TAR_OPTIONS='--checkpoint-action=exec=…' tar`: a command line in a variable is
 * judged like any other; a variable that loads code (`BASH_ENV`, `NODE_OPTIONS`, an exported
 * function) is unanalysable when its value or the file it names is not known in advance.
 */
function commandVariables(
  env: readonly string[],
  values: ReadonlyMap<string, Word>,
  state: State,
  ctx: Ctx,
): void {
  for (const name of env) {
    const value = values.get(name);
    if (name.startsWith("BASH_FUNC_")) {
      state.unanalyzable ??= `${name} defines a shell function the command will run`;
    } else if (COMMAND_ENV.test(name)) {
      if (value === undefined || value.dynamic) {
        state.unanalyzable ??= `${name} names a program only known at run time`;
      } else if (name === "TAR_OPTIONS") {
        analyzeScript(`tar ${value.value}`, { ...ctx, depth: ctx.depth + 1 }, state);
      } else if (!/^(GZIP|XZ_OPT|ZSTD_\w+)$/.test(name)) {
        analyzeScript(value.value, { ...ctx, depth: ctx.depth + 1 }, state);
      }
    } else if (LOADING_ENV.test(name)) {
      const wrote = state.written !== undefined && state.written.size > 0;
      if (value === undefined || value.substituted || wrote) {
        state.unanalyzable ??= `${name} loads code the line itself provides`;
      }
    }
  }
}

/** `alias ls='rm -rf'` and `hash -p /usr/bin/rm ls`: later uses of the name run the value. */
function defineAliases(words: Word[], state: State): void {
  const program = words[0]?.value;
  if (program === "alias") {
    for (const w of words.slice(1)) {
      const eq = w.value.indexOf("=");
      if (eq > 0) (state.aliases ??= new Map()).set(w.value.slice(0, eq), w.value.slice(eq + 1));
    }
  } else if (program === "hash") {
    const p = words.findIndex((w) => w.value === "-p");
    const path = words[p + 1];
    const name = words[p + 2];
    if (p !== -1 && path !== undefined && name !== undefined) {
      (state.aliases ??= new Map()).set(
        name.value,
        path.dynamic ? "$(unknown)" : quote(path.value),
      );
    }
  }
}

/**
 * A file this line wrote, then runs: its text is analysed when the line wrote known text,
 * and the command is unanalysable otherwise. So are build files (a Makefile, package.json, a
 * `.py` an import would pick up) the line wrote before running anything else.
 */
function ranWritten(c: { argv: string[]; path?: string }, state: State): void {
  const written = state.written;
  if (written === undefined || written.size === 0) return;
  const file = executedFile(c);
  if (file !== undefined && written.has(UNKNOWN_FILES) && !file.startsWith("/")) {
    state.unanalyzable ??= `runs ${file}, which may be among the files the line unpacked`;
    return;
  }
  if (file !== undefined && written.has(normalizeName(file))) {
    const text = written.get(normalizeName(file));
    if (text === null || text === undefined) {
      state.unanalyzable ??=
        `runs ${file}, which the line itself writes with text only known at run time`;
    } else if (
      SHELLS.has(c.argv[0]) || c.argv[0] === "source" || c.argv[0] === "." || c.path !== undefined
    ) {
      analyzeScript(text.replace(/^#![^\n]*\n/, ""), ROOT_CTX, state);
    } else {
      const why = unsafeCode(c.argv[0], text);
      if (why !== undefined) state.unanalyzable ??= why;
    }
    return;
  }
  const build = [...written.keys()].find((f) => BUILD_FILE.test(f));
  if (build !== undefined) {
    state.unanalyzable ??= `${c.argv[0]} may run ${build}, which the line itself writes`;
  }
}

const ROOT_CTX: Ctx = { depth: 1, pipedFrom: [], stdin: "terminal", inSubstitution: false };

/** Records the files a command writes, with their text when the line shows it. */
function recordWrites(
  node: Node,
  words: Word[],
  commands: ReadonlyArray<{ argv: string[] }>,
  redirects: string[],
  stdinText: Word | undefined,
  state: State,
): void {
  const program = words[0]?.value;
  let text: string | null = null;
  if (program === "echo" || program === "printf") {
    const out = literalOutputs(node);
    if (out !== undefined && !out.dynamic) text = out.value;
  } else if (
    (program === "cat" || program === "tee") && stdinText !== undefined && !stdinText.dynamic
  ) {
    text = stdinText.value;
  }
  const files: Array<[string, string | null]> = redirects.map((f) => [f, text]);
  for (const c of commands) {
    const [p, ...args] = c.argv;
    for (const w of namedWrites(c.argv)) files.push([w.file, w.fromStdin ? text : null]);
    if (p === "find") {
      for (let i = 0; i < args.length; i++) {
        if (/^-f(print0?|printf|ls)$/.test(args[i])) files.push([args[i + 1] ?? "", null]);
      }
    }
    // `git checkout REV -- f`, `git restore --source=REV f`, `git show REV:f > f`: f's text comes
    // from a commit the line may just have fetched.
    if (p === "git" && /^(checkout|restore)$/.test(args.find((a) => !a.startsWith("-")) ?? "")) {
      const dashed = args.indexOf("--");
      const paths = dashed === -1 ? [] : args.slice(dashed + 1);
      files.push(...paths.map((f): [string, string | null] => [f, null]));
    }
    // Programs that write files the line names but whose text it does not show.
    if (p === "sed") {
      for (const m of args.join("\n").matchAll(/(?:^|[;\n}]|\/[IM]*)\s*w\s+(\S+)/g)) {
        files.push([m[1], null]);
      }
    }
    if (/^(gcc|g\+\+|cc|c\+\+|clang|clang\+\+|ld|go|rustc|javac|as)$/.test(p)) {
      const o = args.indexOf("-o");
      files.push([o === -1 ? "a.out" : args[o + 1] ?? "a.out", null]);
    }
    // Archives, clones, splitters and decompressors write files whose names or text the line
    // does not show.
    const unpacks = p === "tar" && args.some((a) => /^-?[a-zA-Z]*x|^--extract/.test(a)) ||
      p === "unzip" || p === "git" && args.includes("clone") || p === "bsdtar" ||
      /^(split|csplit|gunzip|unxz|bunzip2|unzstd|uncompress|unlzma|7z|7za|cpio|ar|patch|busybox)$/
        .test(p) ||
      /^(gzip|xz|bzip2|zstd)$/.test(p) && args.some((a) => /^-[a-zA-Z]*d|^--decompress/.test(a)) ||
      (isInterpreter(p) && args.some((a) => /\.write\s*\(|writeFile|open\s*\([^)]*['"]w/.test(a)));
    if (unpacks) files.push([UNKNOWN_FILES, null]);
  }
  for (const c of commands) {
    const operands = c.argv.slice(1).filter((a) => !a.startsWith("-"));
    if (makesLink(c.argv) && operands.length === 2) {
      (state.links ??= new Map()).set(normalizeName(operands[1]), normalizeName(operands[0]));
    }
  }
  if (files.length === 0) return;
  state.written ??= new Map();
  for (const [f, known] of files) {
    if (f === "" || f === "/dev/null" || /^\/dev\/(std|fd)/.test(f)) continue;
    const written = normalizeName(f);
    // A write through a link the line made lands on what it points to.
    const name = state.links?.get(written) ?? written;
    if (name !== written) state.written.set(written, null);
    // Writing a file twice (or appending) leaves its text unknown.
    state.written.set(name, state.written.has(name) ? null : known);
  }
}

/** Stands for files an archive or clone wrote under names the line does not show. */
const UNKNOWN_FILES = "\u0000unpacked";

/** `a/b` joined to `c`: `/`-rooted and `~`-rooted paths replace, others append. */
function joinPath(base: string, path: string): string {
  if (path.startsWith("/") || path === "~" || path.startsWith("~/")) return path;
  return base === "." ? path : `${base}/${path}`;
}

/** `cd DIR` / `pushd DIR` changes where later commands run; an unknown DIR makes it unknown. */
function trackDirectory(words: Word[], state: State): void {
  const program = words[0]?.value;
  if (program !== "cd" && program !== "pushd" && program !== "popd") return;
  if (program === "popd") {
    state.cwd = null;
    return;
  }
  const operands = words.slice(1).filter((w) => !/^-[LPeq@]+$/.test(w.value));
  const dir = operands[0];
  // CDPATH and cdable_vars make a relative name mean another folder; `+N`, `-N` and `~+N` are
  // places on the directory stack.
  const redirected = state.assigned.has("CDPATH") || state.cdableVars;
  if (redirected && dir !== undefined && !dir.value.startsWith("/")) {
    state.cwd = null;
  } else if (dir === undefined) state.cwd = "~";
  else if (dir.dynamic || dir.glob || /^[-+][0-9]*$|^~[-+]/.test(dir.value)) state.cwd = null;
  else if (state.cwd !== null) state.cwd = joinPath(state.cwd ?? ".", dir.value);
}

/** The file an output redirect writes (`> f`, `>> f`, `&> f`), when it is literal. */
function outputTarget(redirect: Node): string | undefined {
  if (redirect.type !== "file_redirect" || isInputRedirect(redirect)) return undefined;
  const destination = redirect.childForFieldName("destination") ??
    redirect.namedChildren.find((c) => c !== null && c.type !== "file_descriptor") ?? null;
  if (destination === null) return undefined;
  // A dynamic target keeps its written form: `"$d/x.pth"` still ends in `.pth`.
  return wordOf(destination).value;
}

/** The file an input redirect reads (`< run.txt`), when there is one. */
function inputSource(redirect: Node): string | undefined {
  if (redirect.type !== "file_redirect" || !redirect.children.some((c) => c?.type === "<")) {
    return undefined;
  }
  const source = redirect.childForFieldName("destination") ??
    redirect.namedChildren.find((c) => c !== null && c.type !== "file_descriptor") ?? null;
  return source === null ? undefined : wordOf(source).value;
}

/**
 * A substitution the parser did not see as one (backticks inside `${x:-…}`, an escaped
 * backtick pair, a here-document body) still runs: such a shape is not modelled.
 */
function hiddenSubstitution(node: Node, state: State): void {
  if (!/`|\$\(/.test(node.text)) return;
  if (node.descendantsOfType(["command_substitution", "process_substitution"]).length > 0) return;
  if (
    node.type === "raw_string" || node.type === "heredoc_body" && node.parent !== null &&
      /['"\\]/.test(node.parent.namedChildren.find((c) => c?.type === "heredoc_start")?.text ?? "")
  ) {
    return;
  }
  state.unanalyzable ??= `a substitution the parser does not model: ${node.text.slice(0, 60)}`;
}

/** Walks the command and process substitutions inside a word. */
function walkSubstitutions(node: Node, ctx: Ctx, state: State): void {
  if (node.type === "command_substitution" || node.type === "process_substitution") {
    walk(node, ctx, state);
    return;
  }
  if (node.type === "expansion" || node.type === "heredoc_body") hiddenSubstitution(node, state);
  for (const child of node.namedChildren) if (child !== null) walkSubstitutions(child, ctx, state);
}

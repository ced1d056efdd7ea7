/**
 * The bash parser: web-tree-sitter with tree-sitter-bash's grammar, the grammar codex itself
 * uses. Both wasm files come from `embeddedAssets` when the compiled binary provides them and
 * from node_modules otherwise.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Language, Parser, type Tree } from "web-tree-sitter";
import { embeddedAssets } from "../../assets.ts";
import { CodexdError } from "../../errors.ts";

let parser: Parser | undefined;
let initializing: Promise<void> | undefined;

function wasmBytes(embedded: Uint8Array | undefined, specifier: string): Uint8Array {
  if (embedded !== undefined) return embedded;
  const file = createRequire(import.meta.url).resolve(specifier);
  return readFileSync(file);
}

async function init(): Promise<void> {
  const runtime = wasmBytes(embeddedAssets.treeSitterWasm, "web-tree-sitter/web-tree-sitter.wasm");
  // Emscripten takes the runtime's bytes as `wasmBinary`, so it never looks for a file itself.
  await Parser.init({ wasmBinary: runtime } as Parameters<typeof Parser.init>[0]);
  const bash = await Language.load(
    wasmBytes(embeddedAssets.bashWasm, "tree-sitter-bash/tree-sitter-bash.wasm"),
  );
  const p = new Parser();
  p.setLanguage(bash);
  parser = p;
}

/** Loads both wasm modules once; later calls return at once. */
export function initShellParser(): Promise<void> {
  initializing ??= init().catch((error) => {
    initializing = undefined;
    throw new CodexdError(
      "shell_parser_unavailable",
      `Cannot load the bash parser: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  });
  return initializing;
}

/**
 * Parses a script. The caller must `delete()` the tree: it lives in wasm memory, which the
 * garbage collector does not see.
 */
export function parseShell(script: string): Tree {
  if (parser === undefined) {
    throw new CodexdError(
      "shell_parser_unavailable",
      "Cannot analyse commands: initShellParser() has not finished",
    );
  }
  const tree = parser.parse(script);
  if (tree === null) {
    throw new CodexdError("shell_parse_failed", "Cannot analyse commands: the parser gave up");
  }
  return tree;
}

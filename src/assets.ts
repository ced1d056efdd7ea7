/**
 * Files the compiled binary carries inside itself. `scripts/compiled-entry.ts` fills this before
 * loading the CLI; when codexd runs from source it stays empty and files are read from
 * node_modules/ and policies/ as usual.
 */
export interface EmbeddedAssets {
  /** web-tree-sitter's runtime wasm. */
  treeSitterWasm?: Uint8Array;
  /** tree-sitter-bash's grammar wasm. */
  bashWasm?: Uint8Array;
  /** Built-in policy files by name (`default`, `strict`), used when no policies folder exists. */
  policies?: Record<string, string>;
  /** codexd's own version, fixed at build time. */
  version?: string;
}

export const embeddedAssets: EmbeddedAssets = {};

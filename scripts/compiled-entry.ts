/**
 * The entry point of the compiled binary (`npm run build`). Bun embeds the files imported with
 * `type: "file"`; this module reads them into `embeddedAssets`, then runs the ordinary CLI. It is
 * Bun-only on purpose: `src/` stays runnable under Deno.
 */
import { readFileSync } from "node:fs";
import { embeddedAssets } from "../src/assets.ts";
import pkg from "../package.json" with { type: "json" };
// @ts-ignore: Bun's file-import attribute; the value is the embedded file's path
import treeSitterWasm from "../node_modules/web-tree-sitter/web-tree-sitter.wasm" with {
  type: "file",
};
// @ts-ignore: as above
import bashWasm from "../node_modules/tree-sitter-bash/tree-sitter-bash.wasm" with {
  type: "file",
};
// @ts-ignore: as above
import defaultPolicy from "../policies/default.yaml" with { type: "file" };
// @ts-ignore: as above
import strictPolicy from "../policies/strict.yaml" with { type: "file" };

embeddedAssets.treeSitterWasm = readFileSync(treeSitterWasm as unknown as string);
embeddedAssets.bashWasm = readFileSync(bashWasm as unknown as string);
embeddedAssets.policies = {
  default: readFileSync(defaultPolicy as unknown as string, "utf8"),
  strict: readFileSync(strictPolicy as unknown as string, "utf8"),
};
embeddedAssets.version = pkg.version;

const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));

/**
 * The JSON-RPC layer is generic: its import graph holds nothing of codex (src/provider/codex/)
 * nor of the layers above the provider.
 */
import { expect, test } from "bun:test";
import path from "node:path";

const ROOT = path.join(import.meta.dir, "../../..");

test("src/provider/jsonrpc/ imports nothing from src/provider/codex/, approval or daemon", async () => {
  const built = await Bun.build({
    entrypoints: ["connection.ts", "framing.ts", "messages.ts"].map((file) =>
      path.join(ROOT, "src/provider/jsonrpc", file)
    ),
    target: "node",
    metafile: true,
  });
  expect(built.success).toBe(true);
  const { inputs } = (built as unknown as { metafile: { inputs: Record<string, unknown> } })
    .metafile;
  const files = Object.keys(inputs).map((f) => path.relative(ROOT, path.resolve(f)));
  expect(files).toContain("src/provider/jsonrpc/connection.ts");
  expect(files.filter((f) => /^src\/(provider\/codex|approval|daemon)\//.test(f))).toEqual([]);
});

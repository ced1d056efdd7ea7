/**
 * The published client (`codexd/client`, src/client.ts) is the wire schemas and fetch: its
 * import graph holds no HTTP framework, no server code and no filesystem access.
 */
import { expect, test } from "bun:test";
import path from "node:path";

const ROOT = path.join(import.meta.dir, "..");

interface Metafile {
  inputs: Record<string, { imports: Array<{ path: string; external?: boolean }> }>;
}

test("src/client.ts imports neither hono, @hono/zod-openapi, node:fs nor src/daemon/", async () => {
  const built = await Bun.build({
    entrypoints: [path.join(ROOT, "src/client.ts")],
    target: "node",
    metafile: true,
  });
  expect(built.success).toBe(true);
  const { inputs } = (built as unknown as { metafile: Metafile }).metafile;
  const files = Object.keys(inputs).map((f) => path.relative(ROOT, path.resolve(f)));
  const externals = Object.values(inputs).flatMap((i) =>
    i.imports.filter((d) => d.external).map((d) => d.path)
  );
  // What it is made of: the shared schemas and zod.
  expect(files).toContain("src/api/schemas.ts");
  expect(files.some((f) => f.includes("node_modules/zod/"))).toBe(true);
  expect(files.filter((f) => /node_modules\/(hono|@hono)\//.test(f))).toEqual([]);
  expect(files.filter((f) => f.startsWith("src/daemon/"))).toEqual([]);
  expect(externals.filter((e) => /^(node:)?fs(\/|$)/.test(e))).toEqual([]);
});

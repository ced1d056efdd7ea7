/** A PolicyStore over a temp directory of YAML policies. */
import type { ShellAnalyzer } from "../../../src/approval/analyzer.ts";
import { PolicyStore } from "../../../src/approval/policy-store.ts";
import { fakeAnalyzer } from "./fake-analyzer.ts";
import { type TempDir, tempDir } from "./policies.ts";

export function storeWith(
  files: Record<string, string>,
  analyzer: ShellAnalyzer = fakeAnalyzer,
): { store: PolicyStore; tmp: TempDir } & Disposable {
  const tmp = tempDir();
  for (const [name, text] of Object.entries(files)) tmp.write(`${name}.yaml`, text);
  const store = new PolicyStore(tmp.dir, analyzer);
  return { store, tmp, [Symbol.dispose]: () => tmp[Symbol.dispose]() };
}

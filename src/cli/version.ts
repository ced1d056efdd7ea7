/** `codexd version`: codexd's own version and the codex it would run. */
import { execFileSync } from "node:child_process";
import { embeddedAssets } from "../assets.ts";
import { errorMessage } from "../errors.ts";
import { resolveCodexBinary } from "../provider/codex/binary.ts";
import { runtimeName } from "../runtime.ts";
import type { CommandIo } from "./io.ts";

export async function versionCommand(args: string[], io: CommandIo): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    io.out("Usage: codexd version\n\nPrints codexd's version and the codex version it finds.");
    return 0;
  }
  io.out(`codexd ${embeddedAssets.version ?? "0.1.0"} (${runtimeName})`);
  try {
    const binary = await resolveCodexBinary({ searchFrom: [process.cwd()] });
    const version = execFileSync(binary.path, ["--version"], { encoding: "utf8" }).trim();
    io.out(`${version} at ${binary.path} (from ${binary.source})`);
    return 0;
  } catch (error) {
    io.out(`codex: not found (${errorMessage(error)})`);
    return 1;
  }
}

/**
 * Finds the codex executable to run as `codex app-server`.
 *
 * Order: the `binary` option, then `$CODEX_BIN`, then node_modules, then PATH. An explicit choice
 * (option or `$CODEX_BIN`) that is not usable is an error, not a reason to fall back: a
 * misconfigured path should be loud.
 *
 * npm's `codex` command is `@openai/codex/bin/codex.js`, a node script. On node < 23.11 it
 * spawns the native binary as a child instead of exec-ing it, so the pid we own would be node's
 * and signals to it would not reach app-server. We therefore always resolve the native binary
 * the wrapper would run: `@openai/codex-<platform>-<arch>/vendor/<target>/bin/codex`.
 */
import { constants, existsSync } from "node:fs";
import { access, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ProviderUnavailable } from "../../errors.ts";

const PackageManifest = z.looseObject({ name: z.string() });

export type BinarySource = "option" | "env" | "node_modules" | "path";

export interface BinaryCandidate {
  source: BinarySource;
  path: string;
}

export interface RejectedCandidate extends BinaryCandidate {
  reason: string;
}

export interface ResolvedBinary extends BinaryCandidate {
  /** Why each earlier candidate was not used, in the order tried. */
  rejected: RejectedCandidate[];
}

export interface ResolveBinaryOptions {
  /** An explicit path (from configuration). */
  binary?: string;
  /** Environment to read CODEX_BIN and PATH from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Folders whose node_modules (and their parents') are searched (default: the cwd). */
  searchFrom?: readonly string[];
  platform?: string;
  arch?: string;
}

const TARGET_TRIPLES: Readonly<Record<string, string>> = {
  "linux-x64": "x86_64-unknown-linux-musl",
  "linux-arm64": "aarch64-unknown-linux-musl",
  "darwin-x64": "x86_64-apple-darwin",
  "darwin-arm64": "aarch64-apple-darwin",
  "win32-x64": "x86_64-pc-windows-msvc",
  "win32-arm64": "aarch64-pc-windows-msvc",
};

export async function resolveCodexBinary(
  options: ResolveBinaryOptions = {},
): Promise<ResolvedBinary> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const rejected: RejectedCandidate[] = [];

  const explicit: BinaryCandidate | undefined = options.binary !== undefined
    ? { source: "option", path: options.binary }
    : env.CODEX_BIN
    ? { source: "env", path: env.CODEX_BIN }
    : undefined;
  if (explicit) {
    const result = await usable(explicit, platform, arch);
    if (result.ok) return { ...result.candidate, rejected };
    const from = explicit.source === "option" ? "the binary option" : "$CODEX_BIN";
    throw new ProviderUnavailable(
      `Cannot start codex: ${explicit.path} (from ${from}) ${result.reason}`,
    );
  }

  const candidates = [
    ...nodeModulesCandidates(options.searchFrom ?? [process.cwd()]),
    ...pathCandidates(env.PATH ?? "", platform),
  ];
  for (const candidate of candidates) {
    const result = await usable(candidate, platform, arch);
    if (result.ok) return { ...result.candidate, rejected };
    rejected.push({ ...candidate, reason: result.reason });
  }
  throw new ProviderUnavailable(
    `Cannot start codex: no codex binary found (set CODEX_BIN or install @openai/codex); ` +
      `tried: ${rejected.map((r) => `${r.path} (${r.reason})`).join("; ") || "nothing"}`,
  );
}

type Usable = { ok: true; candidate: BinaryCandidate } | { ok: false; reason: string };

async function usable(candidate: BinaryCandidate, platform: string, arch: string): Promise<Usable> {
  const problem = await executableProblem(candidate.path);
  if (problem) return { ok: false, reason: problem };
  const wrapperPackage = await npmWrapperPackage(candidate.path);
  if (wrapperPackage === undefined) return { ok: true, candidate };
  const native = nativeBinaryPaths(wrapperPackage, platform, arch);
  for (const nativePath of native) {
    if (!(await executableProblem(nativePath))) {
      return { ok: true, candidate: { source: candidate.source, path: nativePath } };
    }
  }
  return {
    ok: false,
    reason: `is the npm node wrapper and its native binary is missing (looked at ${
      native.join(", ")
    })`,
  };
}

async function executableProblem(file: string): Promise<string | undefined> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return "is not a file";
    await access(file, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "does not exist";
    if (code === "EACCES") return "is not executable";
    return `is not usable: ${String(error)}`;
  }
}

/** If `file` is `@openai/codex`'s node entry point, returns that package's folder. */
async function npmWrapperPackage(file: string): Promise<string | undefined> {
  try {
    const real = await realpath(file);
    if (path.basename(real) !== "codex.js") return undefined;
    const packageRoot = path.dirname(path.dirname(real));
    const manifest = PackageManifest.safeParse(
      JSON.parse(await readFile(path.join(packageRoot, "package.json"), "utf8")),
    );
    return manifest.success && manifest.data.name === "@openai/codex" ? packageRoot : undefined;
  } catch {
    return undefined;
  }
}

/** Where `@openai/codex`'s wrapper looks for the native binary (see bin/codex.js). */
function nativeBinaryPaths(codexPackageRoot: string, platform: string, arch: string): string[] {
  const triple = TARGET_TRIPLES[`${platform}-${arch}`];
  if (!triple) return [];
  const exe = platform === "win32" ? "codex.exe" : "codex";
  const platformPackage = `codex-${platform}-${arch}`;
  return [
    // Hoisted sibling: node_modules/@openai/codex-linux-x64.
    path.join(path.dirname(codexPackageRoot), platformPackage, "vendor", triple, "bin", exe),
    // Nested: node_modules/@openai/codex/node_modules/@openai/codex-linux-x64.
    path.join(
      codexPackageRoot,
      "node_modules",
      "@openai",
      platformPackage,
      "vendor",
      triple,
      "bin",
      exe,
    ),
    // Older releases vendored the binary inside the main package.
    path.join(codexPackageRoot, "vendor", triple, "bin", exe),
  ];
}

/** npm's wrapper in each node_modules from `searchFrom` up; usable() maps it to the native binary. */
function nodeModulesCandidates(searchFrom: readonly string[]): BinaryCandidate[] {
  const seen = new Set<string>();
  const candidates: BinaryCandidate[] = [];
  for (const start of searchFrom) {
    for (let dir = path.resolve(start);; dir = path.dirname(dir)) {
      const wrapper = path.join(dir, "node_modules", "@openai", "codex", "bin", "codex.js");
      // Folders without the package are not candidates (not worth a line in the error).
      if (!seen.has(wrapper) && existsSync(wrapper)) {
        candidates.push({ source: "node_modules", path: wrapper });
      }
      seen.add(wrapper);
      if (path.dirname(dir) === dir) break;
    }
  }
  return candidates;
}

function pathCandidates(pathVariable: string, platform: string): BinaryCandidate[] {
  const exe = platform === "win32" ? "codex.exe" : "codex";
  return pathVariable
    .split(platform === "win32" ? ";" : ":")
    .filter((dir) => dir !== "")
    .map((dir) => ({ source: "path" as const, path: path.join(dir, exe) }));
}

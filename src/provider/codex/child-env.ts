/**
 * The environment codex runs with: an allow-list of what the daemon was started with, plus what
 * the configuration adds explicitly. Never the daemon's whole environment: the fleet runner's own
 * secrets (ANTHROPIC_API_KEY, cloud credentials, tokens) must not reach codex or the commands
 * the model runs.
 *
 * codex's own credentials (`OPENAI_*`, `CODEX_*`) reach codex only: the commands it runs get
 * the smaller environment plan.ts pins in every thread's `shell_environment_policy` (the names
 * below without `OPENAI_*`/`CODEX_*`, plus the spec's `env`; codex takes no shell snapshot).
 */

import { absolutePath } from "./absolute-path.ts";

/**
 * The names both codex and the commands it runs get: the system's basics, the proxies and the CA
 * files. plan.ts hands the same list to codex's `shell_environment_policy` (which compares names
 * without case, so the lower-case proxy spellings below need no entry there).
 */
export const CORE_ENV_NAMES: readonly string[] = Object.freeze([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "TZ",
  "TMPDIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
]);

/** Locale settings (`LC_ALL`, `LC_MESSAGES`, …), passed to codex and its commands alike. */
export const LOCALE_PREFIX = "LC_";

/** Exact names passed through (proxy variables in both cases, as tools read either). */
const ALLOWED_NAMES: ReadonlySet<string> = new Set([
  ...CORE_ENV_NAMES,
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
]);

/** Name prefixes passed through: locale settings and codex's / OpenAI's own variables. */
const ALLOWED_PREFIXES: readonly string[] = [LOCALE_PREFIX, "OPENAI_", "CODEX_"];

/** The log level codex gets unless the caller chose one: its tracing is loud at info. */
export const DEFAULT_RUST_LOG = "warn";

export interface ChildEnvInput {
  /** The daemon's environment (usually `process.env`), filtered through the allow-list. */
  inherited: Readonly<Record<string, string | undefined>>;
  /** Added by the configuration on purpose; passed as given (except CODEX_HOME). */
  extra?: Readonly<Record<string, string>>;
  /** codexd's own CODEX_HOME for this child; always wins. */
  codexHome: string;
}

export function isAllowedEnvName(name: string): boolean {
  return ALLOWED_NAMES.has(name) || ALLOWED_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/**
 * Builds the child's environment. Pure: same input, same output. `PATH` keeps its absolute
 * folders only (absolute-path.ts says why).
 */
export function buildChildEnv(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.inherited)) {
    if (value !== undefined && isAllowedEnvName(name)) env[name] = value;
  }
  const rustLog = input.extra?.RUST_LOG ?? input.inherited.RUST_LOG;
  env.RUST_LOG = rustLog ?? DEFAULT_RUST_LOG;
  for (const [name, value] of Object.entries(input.extra ?? {})) env[name] = value;
  if (env.PATH !== undefined) env.PATH = absolutePath(env.PATH)!;
  env.CODEX_HOME = input.codexHome;
  return env;
}

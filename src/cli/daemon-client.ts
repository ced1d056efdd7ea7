/**
 * How the CLI's client commands (`sessions`, `ui`) reach a running daemon: `--url` or
 * $CODEXD_URL (default http://127.0.0.1:7420), and the token from $CODEXD_TOKEN, `--token-file`
 * or `<--state-dir>/token`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { CodexdClient } from "../client.ts";

/** The parseArgs options every client command takes. */
export const DAEMON_OPTIONS = {
  url: { type: "string" },
  "token-file": { type: "string" },
  "state-dir": { type: "string", default: ".codexd" },
} as const;

export const DAEMON_HELP =
  `The daemon URL defaults to http://127.0.0.1:7420 ($CODEXD_URL); the token to $CODEXD_TOKEN or
the file <state-dir>/token (state dir .codexd).`;

export function daemonClient(
  values: { url?: string | undefined; "token-file"?: string | undefined; "state-dir": string },
): CodexdClient {
  const baseUrl = (values.url || process.env.CODEXD_URL || "http://127.0.0.1:7420")
    .replace(/\/+$/, "");
  const token = process.env.CODEXD_TOKEN ||
    readFileSync(values["token-file"] ?? join(values["state-dir"], "token"), "utf8").trim();
  return new CodexdClient({ baseUrl, token });
}

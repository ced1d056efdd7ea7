/**
 * `--allow-remote` only with TLS (issue 10, finding 11), on a real listener: the CLI refuses it
 * without `server.tls`, and with a certificate the daemon serves HTTPS only, Host-checked.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { loadConfig } from "../../src/daemon/config.ts";
import { startDaemon } from "../../src/daemon/daemon.ts";
import { type ScriptedModel, startScriptedModel } from "../../src/devtools/scripted-model.ts";
import { fakeAnalyzer } from "../approval/support/fake-analyzer.ts";
import { REPO_ROOT } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";

const dir = mkdtempSync(path.join(tmpdir(), "codexd-tls-"));
/** A self-signed certificate for 127.0.0.1, made with openssl (when it is installed). */
const hasCertificate = (() => {
  try {
    execFileSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-keyout",
      path.join(dir, "key.pem"),
      "-out",
      path.join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
let model: ScriptedModel;

beforeAll(async () => {
  model = await startScriptedModel({ rules: [] });
});
afterAll(async () => {
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]) {
  return spawnSync(process.execPath, [path.join(REPO_ROOT, "src/main.ts"), "serve", ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
}

describe("--allow-remote", () => {
  test("without server.tls the CLI refuses to start (exit 2, the reason on stderr)", () => {
    for (const args of [["--allow-remote"], ["--host", "0.0.0.0", "--allow-remote"]]) {
      const result = cli([...args, "--port", "0", "--state-dir", path.join(dir, "never")]);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain("Refusing --allow-remote without TLS");
      expect(result.stderr).toContain("server.tls.cert and server.tls.key");
      expect(result.stdout).not.toContain("listening");
    }
  });

  test.skipIf(!hasCertificate)(
    "with a certificate: HTTPS only, and still Host-checked",
    async () => {
      const file = path.join(dir, "codexd.jsonc");
      writeFileSync(
        file,
        JSON.stringify({
          server: { tls: { cert: "cert.pem", key: "key.pem" }, allowRemote: true },
        }),
      );
      const config = loadConfig({
        args: ["--config", file, "--port", "0", "--state-dir", makeStateDir()],
        cwd: REPO_ROOT,
        env: {},
      });
      config.codex.args = model.codexArgs({ requestMaxRetries: 0 });
      config.policies.dir = path.join(REPO_ROOT, "policies");
      const daemon = await startDaemon(config, { analyzer: fakeAnalyzer });
      try {
        expect(daemon.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
        const tls = { rejectUnauthorized: false };
        const health = await fetch(`${daemon.url}/v1/health`, { tls } as RequestInit);
        expect(health.status).toBe(200);
        expect(await health.json()).toEqual({ status: expect.any(String) });
        const rebound = await fetch(`${daemon.url}/v1/health`, {
          tls,
          headers: { host: "evil.example" },
        } as RequestInit);
        expect(rebound.status).toBe(421);
        // Plain HTTP on the same port gets no answer from the API.
        const plain = await fetch(daemon.url.replace("https:", "http:") + "/v1/health")
          .then((r) => r.status, () => "refused");
        expect(plain).not.toBe(200);
      } finally {
        await daemon.stop();
      }
    },
  );
});

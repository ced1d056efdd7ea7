// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
// Kubernetes preStop hook (deploy/kubernetes/codexd.yaml): waits until no session of this codexd
// has a running turn, or CODEXD_DRAIN_SECONDS pass, so the SIGTERM that follows (which ends
// running turns with `daemon_shutdown`) ends as few as possible. The pod is already out of the
// Service's endpoints then, so no new sessions arrive. Always exits 0: a hook that fails only
// delays the stop. Runs with the image's node; talks to the daemon over loopback TLS.
import { readFileSync } from "node:fs";
import { request } from "node:https";

const budgetMs = Number(process.env.CODEXD_DRAIN_SECONDS ?? "90") * 1000;
const port = Number(process.env.CODEXD_PORT ?? "7420");
const tokenFile = process.env.CODEXD_TOKEN_FILE ?? "/var/lib/codexd/state/token";

function get(path, token) {
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port,
      path,
      headers: { authorization: `Bearer ${token}`, host: `localhost:${port}` },
      // Our own daemon on loopback: its certificate names the Service, not 127.0.0.1.
      rejectUnauthorized: false,
      timeout: 5000,
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => {
        try {
          resolve(JSON.parse(body));
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

const deadline = Date.now() + budgetMs;
try {
  const token = readFileSync(tokenFile, "utf8").trim();
  while (Date.now() < deadline) {
    const { sessions } = await get("/v1/sessions", token);
    const running = sessions.filter((s) => s.status === "running").length;
    if (running === 0) break;
    console.log(`codexd drain: ${running} session(s) still running a turn`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
} catch (error) {
  console.error(`codexd drain: ${error instanceof Error ? error.message : error}`);
}

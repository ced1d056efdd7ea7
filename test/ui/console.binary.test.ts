/**
 * The console lives inside the compiled binary: built with `npm run build`'s script and started
 * from a folder with no node_modules, it serves the pages and their script, and its own
 * `codexd ui` command prints a login link that signs a client in.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { resolveCodexBinary } from "../../src/provider/codex/binary.ts";
import { type ScriptedModel, startScriptedModel } from "../../src/devtools/scripted-model.ts";
import { REPO_ROOT } from "../support/codex-harness.ts";
import { startDaemonProcess } from "../support/daemon-process.ts";

let model: ScriptedModel;
let dir: string;

beforeAll(async () => {
  model = await startScriptedModel({ rules: [] });
  dir = mkdtempSync(path.join(tmpdir(), "codexd-ui-binary-"));
});
afterAll(async () => {
  await model?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test(
  "the compiled binary serves the console and signs in through its own `codexd ui`",
  async () => {
    const binary = path.join(dir, "codexd");
    const build = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts/build.ts"), binary], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(build.status).toBe(0);
    const cwd = path.join(dir, "cwd");
    mkdirSync(cwd);
    const codex = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
    await using daemon = await startDaemonProcess({
      model,
      command: [binary],
      cwd,
      env: { CODEX_BIN: codex },
    });
    const ui = spawnSync(binary, ["ui", "--url", daemon.url, "--state-dir", daemon.stateDir], {
      cwd,
      encoding: "utf8",
      env: { ...process.env, CODEXD_TOKEN: "", CODEXD_URL: "" },
    });
    expect(ui.status).toBe(0);
    const link = ui.stdout.trim();
    expect(link).toStartWith(`${daemon.url}/ui/login?nonce=`);

    const login = await fetch(link, { redirect: "manual" });
    expect(login.status).toBe(303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await fetch(`${daemon.url}/ui`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<h1>Sessions</h1>");
    const script = /<script src="(\/ui\/static\/app-[0-9a-f]+\.js)"/.exec(html)?.[1];
    const style = /<link rel="stylesheet" href="(\/ui\/static\/app-[0-9a-f]+\.css)"/.exec(html)
      ?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    const js = await fetch(`${daemon.url}${script}`);
    expect(js.status).toBe(200);
    const source = await js.text();
    // The minified build still carries the whole self-contained function, called once with
    // visibleText (also a self-contained function) as its argument.
    expect(source).toStartWith('"use strict";\n(function');
    expect(source).toContain("EventSource");
    expect(source).toContain("})(function");
    expect(source).toContain("padStart(4");
    expect(source.trimEnd()).toEndWith(")});");
    expect(() => new Function(source)).not.toThrow();
    expect((await fetch(`${daemon.url}${style}`)).status).toBe(200);
    expect((await fetch(link, { redirect: "manual" })).status).toBe(401);
    expect(await daemon.stop()).toBe(0);
  },
  120_000,
);

/**
 * The console in a real headless Chromium (Debian's `chromium`, driven by playwright-core)
 * against a real daemon subprocess, the real codex and the scripted model: sign in through the
 * one-time link `codexd ui` prints, watch a session stream live, allow a held `ask` with the
 * button and see the command run, see a denied command with its rule, steer / interrupt / stop,
 * the policies' dry run, and a cross-site POST refused. Each page is saved under test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { type DaemonProcess, startDaemonProcess } from "../support/daemon-process.ts";
import { eventually } from "../support/eventually.ts";
import { untilTerminal } from "../support/session-events.ts";

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = path.join(REPO_ROOT, "test-results");
const SECRET = "sk-ui-secret-5f3a9c0b1d2e";

let model: ScriptedModel;
let worktree: TempWorktree;
let daemon: DaemonProcess;
let browser: BrowserContext;
let page: Page;
let policiesDir: string;
let profileDir: string;

/** A one-time login link from `codexd ui`, as an operator gets it. */
function loginLink(): string {
  const result = spawnSync(process.execPath, [
    path.join(REPO_ROOT, "src/main.ts"),
    "ui",
    "--url",
    daemon.url,
    "--state-dir",
    daemon.stateDir,
  ], { encoding: "utf8", env: { ...process.env, CODEXD_TOKEN: "", CODEXD_URL: "" } });
  expect([result.status, result.stderr]).toEqual([0, expect.stringContaining("signs in once")]);
  const link = result.stdout.trim();
  expect(link).toStartWith(`${daemon.url}/ui/login?nonce=`);
  return link;
}

function apiToken(): string {
  return readFileSync(path.join(daemon.stateDir, "token"), "utf8").trim();
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage: true });
}

/**
 * Every form control of the page has an accessible name (a label, aria-label or its text), every
 * table a caption, and the skip link moves keyboard focus to the main content.
 */
async function expectAccessible(): Promise<void> {
  const unnamed = await page.evaluate(() => {
    type Control = {
      tagName: string;
      id: string;
      type?: string;
      labels?: ArrayLike<unknown> | null;
      textContent: string | null;
      getAttribute(name: string): string | null;
    };
    const doc = (globalThis as unknown as {
      document: {
        querySelectorAll(s: string): Iterable<Control>;
        activeElement: Control | null;
      };
    }).document;
    const problems: string[] = [];
    for (const el of doc.querySelectorAll("input, select, textarea, button")) {
      if (el.type === "hidden") continue;
      const named = (el.labels?.length ?? 0) > 0 || !!el.getAttribute("aria-label") ||
        !!el.getAttribute("aria-labelledby") ||
        (el.tagName === "BUTTON" && !!el.textContent?.trim());
      if (!named) problems.push(`${el.tagName}#${el.id}`);
    }
    for (const table of doc.querySelectorAll("table")) {
      if (!(table as unknown as { caption: unknown }).caption) problems.push(`table#${table.id}`);
    }
    return problems;
  });
  expect(unnamed).toEqual([]);
  await page.keyboard.press("Tab");
  await expect(
    page.evaluate(() =>
      (globalThis as unknown as { document: { activeElement: { textContent: string } } })
        .document.activeElement.textContent
    ),
  ).resolves.toBe("Skip to content");
  await page.keyboard.press("Enter");
  await expect(
    page.evaluate(() =>
      (globalThis as unknown as { document: { activeElement: { id: string } } })
        .document.activeElement.id
    ),
  ).resolves.toBe("main");
}

/** Every page the browser saw must be free of the spec's secret and of the API token. */
async function expectNoSecret(): Promise<void> {
  const html = await page.content();
  expect(html).not.toContain(SECRET);
  expect(html).not.toContain(apiToken());
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does it)`);
  }
  mkdirSync(SHOTS, { recursive: true });
  model = await startScriptedModel({
    rules: [
      { marker: "GREET", rounds: [[step.message("hello from the scripted model")]] },
      {
        marker: "STREAM",
        rounds: [[
          step.message("streamed live, piece by piece, into the console", { deltas: 6 }),
        ]],
      },
      {
        marker: "ASK",
        rounds: [[step.exec("touch ui-asked-marker.txt")], [step.message("touched it")]],
      },
      {
        marker: "PUBLISH",
        rounds: [[step.exec("npm publish --tag next")], [step.message("could not publish")]],
      },
      {
        // A right-to-left override in a comment: denied, and shown by code point.
        marker: "HIDDEN",
        rounds: [[step.exec("echo ok # \u202etxen")], [step.message("not run")]],
      },
      { marker: "STALL", rounds: [[step.stall()]] },
    ],
  });
  worktree = await makeTempWorktree();
  policiesDir = mkdtempSync(path.join(tmpdir(), "codexd-ui-policies-"));
  for (const name of ["default.yaml", "strict.yaml"]) {
    copyFileSync(path.join(REPO_ROOT, "policies", name), path.join(policiesDir, name));
  }
  writeFileSync(
    path.join(policiesDir, "attended.yaml"),
    [
      "version: 1",
      "name: attended",
      "description: a person answers touches; nothing is published",
      "default: allow",
      "askTimeout: 5m",
      "budgets:",
      "  sessionTokens: 1000000",
      "  fleetTokensPerHour: 2000000",
      "  fleetTokensPerDay: 10000000",
      "commands:",
      "  deny:",
      "    - id: no-publish",
      "      prefix: [npm, publish]",
      "      reason: releases are made by CI",
      "  ask:",
      "    - id: ask-touch",
      "      regex: 'touch ui-asked-marker'",
      "      reason: a person decides",
      "",
    ].join("\n"),
  );
  daemon = await startDaemonProcess({ model, config: { policies: { dir: policiesDir } } });
  profileDir = mkdtempSync(path.join(tmpdir(), "codexd-ui-chromium-"));
  browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1366, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  page = browser.pages()[0] ?? await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  await worktree?.remove();
  await model?.close();
  if (policiesDir) rmSync(policiesDir, { recursive: true, force: true });
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
});

describe("the console in Chromium", () => {
  test("signs in through the one-time link; the link is spent and leaves the address bar", async () => {
    const signedOut = await page.goto(`${daemon.url}/ui`);
    expect(signedOut?.status()).toBe(401);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(
      "Sign in to the codexd console",
    );
    await shot("sign-in");
    const link = loginLink();
    await page.goto(link);
    expect(page.url()).toBe(`${daemon.url}/ui`);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Sessions");
    const cookies = await browser.cookies(daemon.url);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" });
    expect(cookies[0]!.value).not.toBe(apiToken());
    // The same link again, from another browser profile: spent.
    const other = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
    try {
      const again = await (await other.newPage()).goto(link);
      expect(again?.status()).toBe(401);
    } finally {
      await other.close();
    }
  });

  test("a session streams live: replayed on load, then a follow-up turn sent from the page", async () => {
    const { sessionId } = await daemon.client.spawn({
      prompt: "GREET the console",
      cwd: worktree.path,
      env: { API_KEY: SECRET },
    });
    await untilTerminal(daemon.client, sessionId);
    await page.goto(`${daemon.url}/ui/sessions/${sessionId}`);
    const timeline = page.locator("#timeline");
    // Replay: the first turn's events arrive over SSE after the page loaded.
    await timeline.getByText("hello from the scripted model").waitFor();
    await page.getByText("Live: connected").waitFor();
    await expect(page.locator("dl.facts").textContent()).resolves.toContain("API_KEY=[redacted]");
    await page.evaluate(() => Object.assign(globalThis, { stillTheSamePage: true }));

    await page.getByLabel("Follow-up prompt (queued while a turn runs)").fill("STREAM please");
    await page.getByRole("button", { name: "Send turn" }).click();
    await page.getByRole("status").getByText("Follow-up turn sent.").waitFor();
    await timeline.getByText("streamed live, piece by piece, into the console").first().waitFor();
    await timeline.locator(".ev-result").nth(1).waitFor();
    const titles = await timeline.locator(".ev-title").allTextContents();
    expect(titles.slice(titles.lastIndexOf("Prompt")).filter((t) => t !== "codex warning"))
      .toEqual(["Prompt", "Turn started", "Assistant", "Result · completed"]);
    await expect(timeline.locator(".ev-prompt").last().textContent()).resolves.toContain(
      "STREAM please",
    );
    // No reload happened: the stream carried the new turn into the page that was open.
    expect(await page.evaluate(() => "stillTheSamePage" in globalThis)).toBe(true);
    await expect(page.locator("#session-status").textContent()).resolves.toBe("idle");
    await shot("session");
    await expectNoSecret();

    await page.goto(`${daemon.url}/ui`);
    await page.locator(`tr[data-session="${sessionId}"]`).waitFor();
    await expectNoSecret();
  });

  test("an ask waits on the approvals page; the Allow button lets the command run", async () => {
    const marker = path.join(worktree.path, "ui-asked-marker.txt");
    const { sessionId } = await daemon.client.spawn({
      prompt: "ASK for a touch",
      cwd: worktree.path,
      policy: "attended",
    });
    await page.goto(`${daemon.url}/ui/approvals`);
    // The page refreshes its list by itself while it is open.
    const card = page.locator("#pending li.card").filter({ hasText: sessionId });
    await card.waitFor({ timeout: 30_000 });
    await expect(card.locator("pre").textContent()).resolves.toContain(
      "touch ui-asked-marker.txt",
    );
    await expect(card.textContent()).resolves.toContain("Rule ask-touch: a person decides");
    await card.getByText(/\d+ min \d+ s left/).waitFor();
    expect(existsSync(marker)).toBe(false);
    await shot("approvals");

    await card.getByRole("button", { name: "Allow" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("status").getByText("Allowed: the command or change goes ahead.")
      .waitFor();
    await eventually("the allowed command to run", () => existsSync(marker) || undefined, {
      limitMs: 30_000,
    });
    await page.locator("#pending").getByText("No approval is waiting.").waitFor();
    const events = await untilTerminal(daemon.client, sessionId);
    expect(events.at(-1)).toMatchObject({ type: "result", text: "touched it" });

    await page.goto(`${daemon.url}/ui/sessions/${sessionId}`);
    await page.locator("#timeline .ev-approval.allowed").getByText("rule ask-touch").waitFor();
    await page.locator("#timeline").getByText("touched it").waitFor();
  });

  /** Runs `prompt` under the attended policy, opens its page: the denied approval's entry. */
  async function deniedEntry(prompt: string) {
    const { sessionId } = await daemon.client.spawn({
      prompt,
      cwd: worktree.path,
      policy: "attended",
    });
    await untilTerminal(daemon.client, sessionId);
    await page.goto(`${daemon.url}/ui/sessions/${sessionId}`);
    const denied = page.locator("#timeline .ev-approval.denied");
    await denied.waitFor();
    return denied;
  }

  test("a denied command shows with its rule", async () => {
    const denied = await deniedEntry("PUBLISH the package");
    await expect(denied.locator(".ev-title").textContent()).resolves.toBe("Denied command");
    await expect(denied.locator("pre").textContent()).resolves.toContain("npm publish");
    await expect(denied.locator(".why").textContent()).resolves.toContain(
      "rule no-publish (policy:attended): releases are made by CI",
    );
    const row = page.locator("#decisions tbody tr").filter({ hasText: "npm publish" });
    await expect(row.locator("td").nth(1).textContent()).resolves.toBe("deny");
    await page.locator("#timeline").getByText("could not publish").waitFor();
    await shot("session-denied");
  });

  test("a command hiding characters shows them by code point, live and in the decisions", async () => {
    const denied = await deniedEntry("HIDDEN characters");
    await expect(denied.locator("pre").textContent()).resolves.toContain("echo ok # ⟨U+202E⟩txen");
    const row = page.locator("#decisions tbody tr").filter({ hasText: "echo ok" });
    await expect(row.locator("td").nth(0).textContent()).resolves.toContain("# ⟨U+202E⟩txen");
  });

  test("steer, interrupt and stop from the session page", async () => {
    const { sessionId } = await daemon.client.spawn({ prompt: "STALL here", cwd: worktree.path });
    await page.goto(`${daemon.url}/ui/sessions/${sessionId}`);
    const timeline = page.locator("#timeline");
    await timeline.locator(".ev-turn").waitFor();
    await page.getByLabel("Steer the running turn").fill("STALL again: use vitest, not jest");
    await page.getByRole("button", { name: "Steer" }).click();
    await page.getByRole("status").getByText("Steering message sent.").waitFor();
    await timeline.locator(".ev-prompt").filter({ hasText: "STALL again: use vitest, not jest" })
      .waitFor();
    await expect(timeline.locator(".ev-prompt .ev-title").last().textContent()).resolves.toBe(
      "Steered",
    );

    await page.getByRole("button", { name: "Interrupt" }).click();
    await timeline.locator(".ev-error").getByText("Error · interrupted").waitFor();

    await page.getByRole("button", { name: "Stop session" }).click();
    await page.getByRole("status").getByText("Session stopped.").waitFor();
    await eventually(
      "the session to stop",
      async () => (await daemon.client.get(sessionId)).status === "stopped" || undefined,
    );
    await expect(page.locator("#session-status").textContent()).resolves.toBe("stopped");
  });

  test("policies: versions listed and a dry run from the page", async () => {
    await page.goto(`${daemon.url}/ui/policies`);
    const rows = page.locator("#policies tbody tr");
    await expect(rows.locator("th").allTextContents()).resolves.toEqual(
      expect.arrayContaining(["attended", "default", "strict"]),
    );
    await page.getByLabel("Policy").selectOption("attended");
    await page.getByLabel("Command").fill("npm publish --tag next");
    await page.getByRole("button", { name: "Evaluate" }).click();
    await page.waitForURL(`${daemon.url}/ui/policies/evaluate`);
    await page.locator("#eval-result h2").waitFor();
    await expect(page.locator("#eval-result h2").textContent()).resolves.toBe("Decision: deny");
    await expect(page.locator("#eval-result").textContent()).resolves.toContain("no-publish");
    await shot("policies");
  });

  test("budgets: tokens per fleet; every page labelled and keyboard-usable", async () => {
    await page.goto(`${daemon.url}/ui/budgets`);
    const fleets = await page.locator("#budgets tbody th").allTextContents();
    expect(fleets).toEqual(["attended", "default"]);
    // The daemon's own budgets (GET /v1/fleets): the attended fleet's caps and its spend.
    const attended = page.locator('#fleet-budgets tr[data-fleet="attended"]');
    await expect(attended.locator("td").nth(2).textContent()).resolves.toBe("1,000,000");
    await expect(attended.locator("td").nth(3).textContent()).resolves.toMatch(
      /^[\d,]+ of 2,000,000 \(\d+ %\)/,
    );
    await expect(attended.getByRole("meter").first().getAttribute("aria-label")).resolves.toMatch(
      /^attended, last hour: \d+ % of the cap spent$/,
    );
    await page.goto(`${daemon.url}/ui`);
    await shot("sessions");
    await page.goto(`${daemon.url}/ui/budgets`);
    await shot("budgets");
    await expectNoSecret();
    const sessionId = (await daemon.client.list())[0]!.sessionId;
    for (
      const where of [
        "/ui",
        `/ui/sessions/${sessionId}`,
        "/ui/approvals",
        "/ui/policies",
        "/ui/budgets",
      ]
    ) {
      await page.goto(`${daemon.url}${where}`);
      await expectAccessible();
    }
  });

  test("a cross-site POST is refused even though the cookie rides along", async () => {
    const { sessionId } = await daemon.client.spawn({ prompt: "GREET again", cwd: worktree.path });
    await untilTerminal(daemon.client, sessionId);
    // Another port on the same host is another origin but the same *site*, so the browser does
    // send the SameSite=Strict cookie: the Origin check and the CSRF token must stop it.
    const target = `${daemon.url}/ui/sessions/${sessionId}/stop`;
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><form id="f" method="post" action="${target}">` +
          `<input name="back" value="/ui"></form>` +
          `<script>fetch(${JSON.stringify(target)}, {method: "POST", mode: "no-cors", ` +
          `credentials: "include"}).finally(() => document.getElementById("f").submit());` +
          `</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    try {
      const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
      const refused = page.waitForResponse((r) =>
        r.url() === target && r.request().method() === "POST" &&
        r.request().resourceType() === "document"
      );
      await page.goto(evilUrl);
      const response = await refused;
      expect(response.status()).toBe(403);
      expect(await response.request().headerValue("origin")).toBe(evilUrl.slice(0, -1));
      await page.getByText("cross_origin").waitFor();
    } finally {
      evil.close();
    }
    expect((await daemon.client.get(sessionId)).status).toBe("idle");
  });

  test("codexd ui --help", () => {
    const result = spawnSync(process.execPath, [
      path.join(REPO_ROOT, "src/main.ts"),
      "ui",
      "--help",
    ], {
      encoding: "utf8",
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage:\s+codexd ui/);
  });
});

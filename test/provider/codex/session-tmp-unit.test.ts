import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { SessionTmp } from "../../../src/provider/codex/session-tmp.ts";

test("a session's folder: 0700 under a 0711 root, removed with its files, the root at close", async () => {
  const parent = mkdtempSync(path.join(tmpdir(), "codexd-session-tmp-"));
  try {
    const tmp = new SessionTmp({ parent });
    const dir = await tmp.ensure("ses_a");
    expect(path.dirname(dir)).toBe(tmp.root);
    expect((await stat(tmp.root)).mode & 0o777).toBe(0o711);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    writeFileSync(path.join(dir, "left-over"), "x");
    await tmp.remove("ses_a");
    expect(existsSync(dir)).toBe(false);
    await tmp.ensure("ses_b");
    await tmp.close();
    await tmp.close();
    expect(existsSync(tmp.root)).toBe(false);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
});

test("a folder made again while its removal runs is kept (a resume right after a stop)", async () => {
  const parent = mkdtempSync(path.join(tmpdir(), "codexd-session-tmp-"));
  try {
    await using tmp = new SessionTmp({ parent });
    const dir = await tmp.ensure("ses_a");
    writeFileSync(path.join(dir, "old"), "x");
    const removal = tmp.remove("ses_a");
    const again = await tmp.ensure("ses_a");
    await removal;
    expect(existsSync(again)).toBe(true);
    expect(existsSync(path.join(again, "old"))).toBe(false);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
});

test("a session id that is not a plain name gets no folder", async () => {
  await using tmp = new SessionTmp({ parent: tmpdir() });
  await expect(tmp.ensure("../x")).rejects.toThrow("Cannot make a temp folder");
});

import { describe, expect, test } from "bun:test";
import type { Level } from "../../../src/log.ts";
import { stderrLevel, StderrLog } from "../../../src/provider/codex/stderr-log.ts";

type Line = { level: string; message: string; data?: unknown };

function recorder(maxLines: number, windowMs: number) {
  let clock = 0;
  const lines: Line[] = [];
  const log = new StderrLog({
    log: (level, message, data) => lines.push({ level, message, data }),
    maxLines,
    windowMs,
    now: () => clock,
    context: { pid: 7 },
  });
  return { log, lines, advance: (ms: number) => (clock += ms) };
}

describe("StderrLog", () => {
  test("logs up to maxLines per window, then reports how many it left out", () => {
    const { log, lines, advance } = recorder(2, 1000);
    for (let i = 0; i < 5; i++) log.line(`line ${i}`);
    expect(lines.map((l) => l.message)).toEqual(["codex stderr", "codex stderr"]);
    advance(1000);
    log.line("next window");
    expect(lines.slice(2)).toEqual([
      {
        level: "warn",
        message: "codex stderr: 3 lines not logged (over 2 per 1 s)",
        data: { pid: 7, suppressed: 3 },
      },
      { level: "info", message: "codex stderr", data: { pid: 7, line: "next window" } },
    ]);
  });

  test("flush reports what was left out once; nothing when nothing was", () => {
    const { log, lines } = recorder(1, 1000);
    log.flush();
    expect(lines).toEqual([]);
    log.line("a");
    log.line("b");
    log.flush();
    log.flush();
    expect(lines.map((l) => l.message)).toEqual([
      "codex stderr",
      "codex stderr: 1 lines not logged (over 1 per 1 s)",
    ]);
  });

  test.each<[string, Level]>([
    ["2026-11-23T16:15:46.801632Z ERROR codex_app_server: no bubblewrap", "warn"],
    ["2026-11-23T16:15:46.801632Z  WARN codex_core: slow", "warn"],
    ["2026-11-23T16:15:46.801632Z  INFO codex_core: started", "info"],
    ["2026-11-23T16:15:46.801632Z DEBUG codex_core: detail", "debug"],
    ["WARNING: proceeding, even though we could not create PATH aliases", "warn"],
    ["    1. /tmp/.codex", "info"],
    ["an ERROR inside a line", "info"],
  ])("%p is logged at %p", (line, level) => {
    expect(stderrLevel(line)).toBe(level);
  });
});

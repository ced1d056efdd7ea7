import { describe, expect, test } from "bun:test";
import {
  DEFAULT_MAX_PROCESSES,
  defaultMaxProcesses,
  limitedLaunch,
} from "../../../src/provider/codex/process-limit.ts";
import { ProviderUnavailable } from "../../../src/errors.ts";

const only = (...files: string[]) => (file: string) => files.includes(file);

describe("limitedLaunch", () => {
  test("no limit: codex itself", () => {
    expect(limitedLaunch("/opt/codex", ["app-server"], undefined, "/usr/bin", only()))
      .toEqual({ file: "/opt/codex", args: ["app-server"] });
  });

  test("a limit: prlimit sets it (soft and hard) and execs codex with its arguments", () => {
    expect(
      limitedLaunch(
        "/opt/codex",
        ["app-server", "-c", "x=1"],
        512,
        "/opt/bin",
        only("/opt/bin/prlimit"),
      ),
    ).toEqual({
      file: "/opt/bin/prlimit",
      args: ["--nproc=512:512", "--", "/opt/codex", "app-server", "-c", "x=1"],
    });
  });

  test("PATH's relative folders are skipped; /usr/bin is tried after PATH", () => {
    const found = limitedLaunch("/c", [], 64, "bin:.:", only("bin/prlimit", "/usr/bin/prlimit"));
    expect(found.file).toBe("/usr/bin/prlimit");
  });

  test("no prlimit anywhere: ProviderUnavailable saying how to go on", () => {
    expect(() => limitedLaunch("/c", [], 64, "/opt/bin", only())).toThrow(ProviderUnavailable);
    expect(() => limitedLaunch("/c", [], 64, undefined, only())).toThrow(
      /codex\.maxProcesses needs prlimit .* set codex\.maxProcesses to null/,
    );
  });
});

test("the default cap is Linux's only: elsewhere there is no prlimit to set it", () => {
  expect(defaultMaxProcesses("linux")).toBe(DEFAULT_MAX_PROCESSES);
  expect(defaultMaxProcesses("darwin")).toBeNull();
});

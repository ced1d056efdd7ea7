import { expect, test } from "bun:test";
import { addUsage, sessionInfo, statusAfterError } from "../../src/daemon/session-info.ts";
import type { SessionRow } from "../../src/daemon/store.ts";

const ROW: SessionRow = {
  id: "ses_1",
  threadId: "th_1",
  spec: { cwd: "/wt", prompt: "p", env: { TOKEN: "[redacted]" }, metadata: { team: "a" } },
  policy: "default",
  policyVersion: "v1",
  status: "running",
  currentTurnId: "turn_1",
  currentTurnStartedAt: "2026-11-23T00:00:01.000Z",
  createdAt: "2026-11-23T00:00:00.000Z",
  lastEventAt: "2026-11-23T00:00:02.000Z",
};

test("a row as the API shows it: env names only, the live process's newer facts win", () => {
  expect(sessionInfo(ROW, { queuedTurns: 2, lastEventAt: "2026-11-23T00:00:09.000Z" })).toEqual({
    sessionId: "ses_1",
    threadId: "th_1",
    status: "running",
    policy: "default",
    permissionMode: "default",
    cwd: "/wt",
    model: null,
    createdAt: "2026-11-23T00:00:00.000Z",
    lastEventAt: "2026-11-23T00:00:09.000Z",
    currentTurn: { turnId: "turn_1", startedAt: "2026-11-23T00:00:01.000Z" },
    queuedTurns: 2,
    usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 },
    envKeys: ["TOKEN"],
    metadata: { team: "a" },
  });
});

test("a stored spec with odd or missing fields still lists (an older codexd wrote it)", () => {
  const info = sessionInfo(
    { ...ROW, status: "idle", spec: { cwd: 7, permissionMode: "yolo" }, failure: "boom" },
    { queuedTurns: 0 },
  );
  expect(info).toMatchObject({
    cwd: "",
    permissionMode: "default",
    envKeys: [],
    currentTurn: null,
    lastEventAt: "2026-11-23T00:00:02.000Z",
    failure: "boom",
  });
  expect(info).not.toHaveProperty("metadata");
});

test("usage adds field by field; terminal errors map to the session's next status", () => {
  const u = { inputTokens: 1, cachedInputTokens: 2, outputTokens: 3, reasoningTokens: 4 };
  expect(addUsage(u, u)).toEqual({
    inputTokens: 2,
    cachedInputTokens: 4,
    outputTokens: 6,
    reasoningTokens: 8,
  });
  expect(["app_server_crashed", "daemon_shutdown", "context_cancelled", "turn_failed", "timeout"]
    .map(statusAfterError)).toEqual([
      "interrupted",
      "interrupted",
      "stopped",
      undefined,
      undefined,
    ]);
});

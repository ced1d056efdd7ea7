/** The commands the hot-path test checks and scripts/bench-bridge.ts times, and their session. */
import type { ApprovalContext } from "../../../src/provider/types.ts";

/** One session under the default policy, asking again and again. */
export const HOT_PATH_CONTEXT: ApprovalContext = Object.freeze({
  requestId: "r",
  sessionId: "s",
  threadId: "t",
  worktree: "/tmp",
  policy: "default",
  permissionMode: "default",
});

/** What an agent runs all day (allowed or asked under the default policy, never unanalysable). */
export const ORDINARY_COMMANDS = [
  "npm test",
  "git status",
  "git diff --stat",
  "ls -la src",
  "cat package.json",
  "npm run build && npm test",
  "grep -rn TODO src | head -20",
  "bun test test/approval",
  "git log --oneline -10",
  "tsc --noEmit",
] as const;

/** A command at maxCommandLength (16 KiB) that only the last of 500 regex rules matches. */
export const ADVERSARIAL_LAST_MATCH = (() => {
  const tail = " host499.example.com";
  return `echo ${"a b c d e f g h ".repeat(1024)}`.slice(0, 16_384 - tail.length) + tail;
})();

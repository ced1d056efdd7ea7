/**
 * The notification → event table, run over real codex 0.169 traffic captured by
 * scripts/capture-codex.ts (test/fixtures/captured/).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { EventBody } from "../../src/provider/events.ts";
import {
  mapNotification,
  type MappedNotification,
  terminalEvent,
} from "../../src/provider/codex/event-map.ts";
import { planServerRequest } from "../../src/provider/codex/server-requests.ts";
import type { FileChangeItem } from "../../src/provider/codex/notifications.ts";

const DIR = join(import.meta.dir, "..", "fixtures", "captured");
const Line = z.object({
  dir: z.enum(["in", "out"]),
  msg: z.looseObject({
    id: z.unknown().optional(),
    method: z.string().optional(),
    params: z.unknown().optional(),
  }),
});

function codexMessages(file: string) {
  return readFileSync(join(DIR, file), "utf8").trim().split("\n")
    .map((line) => Line.parse(JSON.parse(line)))
    .filter((line) => line.dir === "out" && line.msg.method !== undefined)
    .map((line) => ({
      method: line.msg.method!,
      params: line.msg.params,
      isRequest: line.msg.id !== undefined,
    }));
}

function mapFile(file: string) {
  const mapped: Array<MappedNotification & { method: string }> = [];
  for (const message of codexMessages(file)) {
    if (!message.isRequest) {
      mapped.push({ method: message.method, ...mapNotification(message.method, message.params) });
    }
  }
  const events = mapped.flatMap((m) => m.events);
  return {
    mapped,
    events,
    of: <T extends EventBody["type"]>(type: T) =>
      events.filter((e) => e.type === type) as Extract<EventBody, { type: T }>[],
  };
}

const files = readdirSync(DIR).filter((f) => f.endsWith(".jsonl"));

test("the fixtures are there", () => {
  expect(files.length).toBeGreaterThanOrEqual(10);
});

describe.each(files)("%s", (file) => {
  test("every notification maps without an invalid shape or an unknown method", () => {
    const { mapped } = mapFile(file);
    expect(mapped.filter((m) => m.invalid).map((m) => m.invalid)).toEqual([]);
    expect(mapped.filter((m) => m.unknown).map((m) => m.method)).toEqual([]);
  });
});

describe("captured scenarios", () => {
  test("a streamed message: deltas that add up to the message, usage, a completed turn", () => {
    const { of, mapped } = mapFile("turn-streamed-message.jsonl");
    const deltas = of("text.delta");
    expect(deltas).toHaveLength(4);
    const [message] = of("message");
    expect(deltas.map((d) => d.text).join("")).toBe(message!.text);
    expect(of("turn.started")).toHaveLength(1);
    expect(of("usage")[0]!.inputTokens).toBeGreaterThan(0);
    const done = mapped.find((m) => m.turnCompleted)!.turnCompleted!;
    expect(terminalEvent(done, message!.text, undefined)).toMatchObject({
      type: "result",
      text: message!.text,
      turnStatus: "completed",
    });
  });

  test("an approved command: tool.use with codex's command line, tool.result with all output", () => {
    const { of } = mapFile("command-approved.jsonl");
    const [use] = of("tool.use");
    expect(use).toMatchObject({ name: "command" });
    expect((use!.input as { command: string }).command).toStartWith("/bin/bash -lc ");
    const [result] = of("tool.result");
    expect(result).toMatchObject({ toolId: use!.toolId, isError: false, exitCode: 0 });
    expect(result!.output).toContain("captured-output");
    expect(result!.output).toContain("second-line");
  });

  test("a declined command ends as an error result", () => {
    const [result] = mapFile("command-declined.jsonl").of("tool.result");
    expect(result!.isError).toBe(true);
  });

  test("a patch: tool.use lists its paths; the approval request is matched to them by item id", () => {
    const { mapped, of } = mapFile("apply-patch.jsonl");
    const fileChange = mapped.find((m) => m.fileChange)!.fileChange!;
    expect(of("tool.use")[0]).toMatchObject({
      name: "file_change",
      input: { changes: [{ path: "/worktree/hello.txt", kind: "add" }] },
    });
    const approval = codexMessages("apply-patch.jsonl").find((m) =>
      m.method === "item/fileChange/requestApproval"
    )!;
    const plan = planServerRequest(approval.method, approval.params, {
      worktree: "/worktree",
      fileChanges: new Map<string, FileChangeItem>([[fileChange.id, fileChange]]),
    });
    expect(plan).toMatchObject({
      kind: "approval",
      request: { kind: "fileChange", paths: ["/worktree/hello.txt"] },
    });
  });

  test("a command approval request becomes a command judged on codex's full command line", () => {
    const request = codexMessages("command-approved.jsonl").find((m) => m.isRequest)!;
    const plan = planServerRequest(request.method, request.params, {
      worktree: "/worktree",
      fileChanges: new Map(),
    });
    expect(plan).toMatchObject({
      kind: "approval",
      request: { kind: "command", cwd: "/worktree" },
    });
    if (plan.kind !== "approval") throw new Error("expected an approval");
    expect(plan.reply("allow")).toEqual({ decision: "accept" });
    expect(plan.reply("deny")).toEqual({ decision: "decline" });
  });

  test("a model error: codex's error becomes a system event, the failed turn turn_failed", () => {
    const { of, mapped } = mapFile("model-error.jsonl");
    expect(of("system")).toContainEqual(
      expect.objectContaining({ subtype: "codex_error", willRetry: false }),
    );
    const done = mapped.find((m) => m.turnCompleted)!.turnCompleted!;
    const terminal = terminalEvent(done, "", undefined);
    expect(terminal).toMatchObject({ type: "error", code: "turn_failed" });
    expect((terminal as { message: string }).message.length).toBeGreaterThan(0);
  });

  test("a rate limit and a cut stream show codex's retries as events", () => {
    for (const file of ["model-rate-limited.jsonl", "model-stream-cut.jsonl"]) {
      const { of, mapped } = mapFile(file);
      expect(of("system").some((e) => e.subtype === "codex_retry")).toBe(true);
      expect(mapped.find((m) => m.turnCompleted)!.turnCompleted!.status).toBe("completed");
    }
  });

  test("an interrupted turn ends with error interrupted", () => {
    const done = mapFile("turn-interrupt.jsonl").mapped.find((m) => m.turnCompleted)!
      .turnCompleted!;
    expect(terminalEvent(done, "", undefined)).toMatchObject({
      type: "error",
      code: "interrupted",
    });
  });

  test("a steered turn completes once", () => {
    const { mapped } = mapFile("turn-steer.jsonl");
    expect(mapped.filter((m) => m.turnCompleted)).toHaveLength(1);
  });
});

// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * Drives the pinned real `codex app-server` through representative scenarios against the
 * scripted model and writes every JSON-RPC message exchanged to
 * `test/fixtures/captured/<scenario>.jsonl`, one `{dir: "in"|"out", msg}` per line ("in" = sent
 * to codex, "out" = from codex). Table tests of the event mapping read these files.
 *
 * Run: `bun scripts/capture-codex.ts [scenario...]` (default: all). Takes about 15 s.
 *
 * Paths are made stable: the worktree becomes /worktree, CODEX_HOME becomes /codex-home. Ids and
 * timestamps are codex's own. ANSI escapes are stripped.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  applyPatchCommand,
  type CodexArgsOptions,
  type Script,
  type ScriptedModel,
  startScriptedModel,
  step,
} from "../src/devtools/scripted-model.ts";
import {
  asRecord,
  type CodexUnderTest,
  LineClient,
  makeCodexHome,
  makeTempWorktree,
  REPO_ROOT,
  type RpcLine,
  startCodex,
  type TempWorktree,
  type TranscriptEntry,
} from "../test/support/codex-harness.ts";

const OUT_DIR = path.join(REPO_ROOT, "test", "fixtures", "captured");

const SCRIPT: Script = {
  rules: [
    { marker: "GREET", rounds: [[step.message("Hello! I am a scripted model.", { deltas: 4 })]] },
    {
      marker: "RUN_ECHO",
      rounds: [
        [step.exec("echo captured-output; sleep 0.3; echo second-line")],
        [step.message("The command printed it.")],
      ],
    },
    {
      marker: "RUN_DECLINED",
      rounds: [[step.exec("touch should-not-exist.txt")], [step.message("Understood, skipped.")]],
    },
    {
      marker: "PATCH",
      rounds: [
        [step.exec(applyPatchCommand([{ op: "add", path: "hello.txt", content: "hello\n" }]))],
        [step.message("Added hello.txt.")],
      ],
    },
    {
      marker: "STEER_ME",
      rounds: [[step.exec("sleep 1")], [step.message("not steered")]],
    },
    { marker: "STEERED", rounds: [[step.message("Steered: changing course.")]] },
    { marker: "LONG_SLEEP", rounds: [[step.exec("sleep 30")], [step.message("slept")]] },
    {
      marker: "FAIL",
      rounds: [
        [step.httpError(500, { message: "scripted outage" })],
        [step.httpError(500, { message: "scripted outage" })],
      ],
    },
    {
      marker: "RATE_LIMIT",
      rounds: [
        [step.httpError(429, { retryAfter: 1, message: "scripted rate limit" })],
        [step.message("Answered after the rate limit.")],
      ],
    },
    {
      marker: "CUT_STREAM",
      rounds: [
        [step.message("This answer is cut", { deltas: 2, done: false }), step.cut()],
        [step.message("Recovered after the reconnect.")],
      ],
    },
    { marker: "REMEMBER", rounds: [[step.message("Noted: the word is 'tangerine'.")]] },
    { marker: "RECALL", rounds: [[step.message("The word was 'tangerine'.")]] },
  ],
};

interface Session {
  model: ScriptedModel;
  codex: CodexUnderTest;
  client: LineClient;
  worktree: TempWorktree;
}

type Decision = "accept" | "decline";

/** Answers approvals with `decision`; initialize + initialized. */
async function openSession(
  model: ScriptedModel,
  worktree: TempWorktree,
  options: { decision?: Decision; codexHome?: string; modelArgs?: CodexArgsOptions } = {},
): Promise<Session> {
  const codex = await startCodex({
    model,
    codexHome: options.codexHome,
    modelArgs: options.modelArgs,
  });
  const client = new LineClient(codex);
  client.onServerRequest(() => ({ decision: options.decision ?? "accept" }));
  await client.initialize();
  return { model, codex, client, worktree };
}

async function startThread(session: Session): Promise<string> {
  const result = asRecord(
    await session.client.request("thread/start", {
      cwd: session.worktree.path,
      approvalPolicy: "untrusted",
      sandbox: "workspace-write",
    }),
  );
  const id = asRecord(result.thread).id;
  if (typeof id !== "string") throw new Error("thread/start answered without thread.id");
  return id;
}

async function startTurn(session: Session, threadId: string, text: string): Promise<string> {
  const result = asRecord(
    await session.client.request("turn/start", {
      threadId,
      input: [{ type: "text", text, text_elements: [] }],
    }),
  );
  const id = asRecord(result.turn).id;
  if (typeof id !== "string") throw new Error("turn/start answered without turn.id");
  return id;
}

function turnCompleted(session: Session, turnId: string, timeoutMs = 15_000): Promise<RpcLine> {
  return session.client.waitForNotification(
    "turn/completed",
    (params) => asRecord(params.turn).id === turnId,
    timeoutMs,
  );
}

function itemStarted(session: Session, type: string): Promise<RpcLine> {
  return session.client.waitForNotification(
    "item/started",
    (params) => asRecord(params.item).type === type,
  );
}

/** A scenario returns the transcript to write. */
type Scenario = (model: ScriptedModel, worktree: TempWorktree) => Promise<TranscriptEntry[]>;

async function simpleTurn(
  model: ScriptedModel,
  worktree: TempWorktree,
  text: string,
  decision: Decision = "accept",
): Promise<TranscriptEntry[]> {
  const session = await openSession(model, worktree, { decision });
  try {
    const threadId = await startThread(session);
    const turnId = await startTurn(session, threadId, text);
    await turnCompleted(session, turnId);
    return session.client.transcript;
  } finally {
    await session.codex.close();
  }
}

const SCENARIOS: Record<string, Scenario> = {
  async "initialize"(model, worktree) {
    const session = await openSession(model, worktree);
    try {
      return session.client.transcript;
    } finally {
      await session.codex.close();
    }
  },
  "turn-streamed-message": (model, worktree) => simpleTurn(model, worktree, "GREET me"),
  "command-approved": (model, worktree) => simpleTurn(model, worktree, "RUN_ECHO please"),
  "command-declined": (model, worktree) =>
    simpleTurn(model, worktree, "RUN_DECLINED please", "decline"),
  "apply-patch": (model, worktree) => simpleTurn(model, worktree, "PATCH: add hello.txt"),
  async "turn-steer"(model, worktree) {
    const session = await openSession(model, worktree);
    try {
      const threadId = await startThread(session);
      const turnId = await startTurn(session, threadId, "STEER_ME");
      await itemStarted(session, "commandExecution");
      await session.client.request("turn/steer", {
        threadId,
        expectedTurnId: turnId,
        input: [{ type: "text", text: "STEERED: do something else", text_elements: [] }],
      });
      await turnCompleted(session, turnId);
      return session.client.transcript;
    } finally {
      await session.codex.close();
    }
  },
  async "turn-interrupt"(model, worktree) {
    const session = await openSession(model, worktree);
    try {
      const threadId = await startThread(session);
      const turnId = await startTurn(session, threadId, "LONG_SLEEP");
      // After the approval, once the command is running.
      await session.client.waitForNotification("serverRequest/resolved");
      await Bun.sleep(300);
      await session.client.request("turn/interrupt", { threadId, turnId });
      await turnCompleted(session, turnId);
      return session.client.transcript;
    } finally {
      await session.codex.close();
    }
  },
  async "model-error"(model, worktree) {
    // One retry, so the file shows both a retrying and a final error.
    const session = await openSession(model, worktree, {
      modelArgs: { requestMaxRetries: 1, streamMaxRetries: 0 },
    });
    try {
      const threadId = await startThread(session);
      const turnId = await startTurn(session, threadId, "FAIL now");
      await turnCompleted(session, turnId, 30_000);
      return session.client.transcript;
    } finally {
      await session.codex.close();
    }
  },
  "model-rate-limited": (model, worktree) => simpleTurn(model, worktree, "RATE_LIMIT now"),
  async "model-stream-cut"(model, worktree) {
    // The stream drops mid-message once; codex reconnects (one stream retry) and completes.
    const session = await openSession(model, worktree, {
      modelArgs: { requestMaxRetries: 0, streamMaxRetries: 1 },
    });
    try {
      const threadId = await startThread(session);
      const turnId = await startTurn(session, threadId, "CUT_STREAM now");
      await turnCompleted(session, turnId, 30_000);
      return session.client.transcript;
    } finally {
      await session.codex.close();
    }
  },
  async "thread-resume"(model, worktree) {
    const codexHome = await makeCodexHome();
    try {
      const first = await openSession(model, worktree, { codexHome });
      let threadId: string;
      try {
        threadId = await startThread(first);
        await turnCompleted(first, await startTurn(first, threadId, "REMEMBER tangerine"));
      } finally {
        await first.codex.close();
      }
      // A new app-server on the same CODEX_HOME: only its exchange is written.
      const second = await openSession(model, worktree, { codexHome });
      try {
        await second.client.request("thread/resume", {
          threadId,
          cwd: worktree.path,
          approvalPolicy: "untrusted",
          sandbox: "workspace-write",
        });
        await turnCompleted(second, await startTurn(second, threadId, "RECALL the word"));
        return second.client.transcript;
      } finally {
        await second.codex.close();
      }
    } finally {
      await rm(codexHome, { recursive: true, force: true });
    }
  },
};

// deno-lint-ignore no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** Strips ANSI and replaces the run's temp paths with stable ones. */
function normalize(entries: TranscriptEntry[], worktree: string, codexHome?: string): string {
  return entries.map((entry) => {
    let line = JSON.stringify(entry).replace(ANSI, "");
    line = line.replaceAll(worktree, "/worktree");
    if (codexHome) line = line.replaceAll(codexHome, "/codex-home");
    return line.replace(/\/work\/main\/\.codexd\/test-homes\/home-[A-Za-z0-9]+/g, "/codex-home");
  }).join("\n") + "\n";
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !(name in SCENARIOS));
  if (unknown.length > 0) {
    throw new Error(
      `Unknown scenario ${unknown.join(", ")}; known: ${Object.keys(SCENARIOS).join(", ")}`,
    );
  }
  await mkdir(OUT_DIR, { recursive: true });
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    if (wanted.length > 0 && !wanted.includes(name)) continue;
    await using model = await startScriptedModel(SCRIPT);
    await using worktree = await makeTempWorktree();
    const started = performance.now();
    const transcript = await scenario(model, worktree);
    const file = path.join(OUT_DIR, `${name}.jsonl`);
    await writeFile(file, normalize(transcript, worktree.path));
    console.log(
      `${name}: ${transcript.length} messages, ${model.requests.length} model requests, ` +
        `${Math.round(performance.now() - started)} ms`,
    );
  }
}

await main();

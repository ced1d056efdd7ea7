/**
 * The tools codex offers the model that codexd cannot govern are off (plan.ts `PINNED_FEATURES`,
 * `DEFAULT_WEB_SEARCH`), against the real codex:
 * - sub-agents (`multi_agent_v1`): a sub-agent is a thread of codex's own; its commands' approval
 *   requests name no codexd session, and its model calls and token usage reach no journal and no
 *   budget. Positive control: on a bare codex the model's `spawn_agent` starts a sub-agent whose
 *   conversation reaches the model.
 * - web search: it runs at the model provider, outside the sandbox, whose network is off; a spec
 *   may ask for it as far as its policy's `spec.maxWebSearch` allows (spec-guard.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import type { RecordedRequest } from "../../../src/devtools/scripted-model.ts";
import { Spec } from "../../../src/provider/spec.ts";
import {
  asRecord,
  makeTempWorktree,
  startBareClient,
  type TempWorktree,
} from "../../support/codex-harness.ts";
import { EventRecorder, startTestProvider } from "../../support/provider-fixture.ts";

/** The spawn_agent call the model makes in `DELEGATE` turns, and the sub-agent's own task. */
const SUB_TASK = "SUBAGENT-TASK count the files";

let model: ScriptedModel;
let worktree: TempWorktree;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      {
        marker: "DELEGATE",
        rounds: [
          [step.functionCall("spawn_agent", { message: SUB_TASK }, "call_spawn", {
            namespace: "multi_agent_v1",
          })],
          [step.message("delegated")],
        ],
      },
      { marker: "SUBAGENT-TASK", rounds: [[step.message("sub-agent at work")]] },
    ],
    fallback: [step.message("hello")],
  });
  worktree = await makeTempWorktree();
});

afterAll(async () => {
  await worktree?.remove();
  await model?.close();
});

/** The names of the tools codex offered in `request`. */
function toolNames(request: RecordedRequest): string[] {
  const tools = (request.body as { tools?: Array<{ name?: string; type?: string }> }).tools ?? [];
  return tools.map((tool) => tool.name ?? tool.type ?? "?");
}

/** The model requests made since `from` whose input mentions `text`. */
function requestsMentioning(from: number, text: string): Promise<RecordedRequest[]> {
  const found: RecordedRequest[] = [];
  return (async () => {
    for (let index = from;; index++) {
      const next = await Promise.race([
        model.waitForRequest((r) => r.index === index),
        Bun.sleep(100).then(() => undefined),
      ]);
      if (!next) return found;
      if (JSON.stringify(next.body?.input ?? "").includes(text)) found.push(next);
    }
  })();
}

/** Those answered by the sub-agent's rule (index 1): the sub-agent's own model calls. */
function subAgentRequests(requests: RecordedRequest[]): RecordedRequest[] {
  return requests.filter((r) => r.answeredBy === 1);
}

/** How many requests the model has seen so far. */
async function requestCount(): Promise<number> {
  let count = 0;
  while (
    await Promise.race([
      model.waitForRequest((r) => r.index === count),
      Bun.sleep(50).then(() => undefined),
    ])
  ) count++;
  return count;
}

describe("tools codexd cannot govern are off (real codex)", () => {
  test(
    "positive control: a bare codex offers sub-agents and web search; spawn_agent starts one",
    async () => {
      const from = await requestCount();
      await using bare = await startBareClient({ model, decision: "accept" });
      const client = bare.client;
      const threadId = await client.startThread({
        cwd: worktree.path,
        sandbox: "workspace-write",
      });
      await client.runTurn(threadId, "DELEGATE the count");
      const first = (await requestsMentioning(from, "DELEGATE the count"))[0]!;
      expect(toolNames(first)).toEqual(expect.arrayContaining(["multi_agent_v1", "web_search"]));
      // The sub-agent's own conversation reaches the model (the SUBAGENT-TASK rule answers it),
      // while codex still runs.
      const subAgent = await model.waitForRequest((r) => r.answeredBy === 1, { from });
      expect(JSON.stringify(subAgent.body?.input)).toContain(SUB_TASK);
    },
    60_000,
  );

  test(
    "through codexd's provider neither is offered, and a spawn_agent call starts nothing",
    async () => {
      const from = await requestCount();
      await using codex = await startTestProvider({ model });
      const handle = await codex.provider.spawn(
        Spec.parse({ cwd: worktree.path, prompt: "DELEGATE the count again" }),
      );
      await new EventRecorder(handle).waitFor((e) => e.type === "result", 30_000, "result");
      await handle.stop();
      const sent = await requestsMentioning(from, "DELEGATE the count again");
      expect(toolNames(sent[0]!)).not.toContain("multi_agent_v1");
      expect(toolNames(sent[0]!)).not.toContain("web_search");
      expect(toolNames(sent[0]!)).toContain("exec_command");
      // The model called spawn_agent anyway: codex answered the call, and no sub-agent ran.
      expect(JSON.stringify(sent.at(-1)!.body?.input)).toContain("call_spawn");
      expect(subAgentRequests(await requestsMentioning(from, SUB_TASK))).toEqual([]);
    },
    60_000,
  );

  test(
    "a spec asking for web search gets it (its policy allowing: the spec guard's check)",
    async () => {
      const from = await requestCount();
      await using codex = await startTestProvider({ model });
      const handle = await codex.provider.spawn(
        Spec.parse({ cwd: worktree.path, prompt: "SEARCH allowed", webSearch: "cached" }),
      );
      await new EventRecorder(handle).waitFor((e) => e.type === "result", 30_000, "result");
      await handle.stop();
      const sent = await requestsMentioning(from, "SEARCH allowed");
      expect(toolNames(sent[0]!)).toContain("web_search");
      expect(toolNames(sent[0]!)).not.toContain("multi_agent_v1");
    },
    60_000,
  );
});

/**
 * A codex whose own defaults offer the model a way to ask for a wider sandbox. codex 0.169 offers
 * `request_permissions` only to an `on-request` thread with the feature on; codexd's threads are
 * `untrusted` and pin the features off, either of which keeps it away (measured: without the pin
 * the provider's thread still lacks it), and the bridge grants network access at most should a
 * codex ask anyway (permission-grants.ts, engine.test.ts).
 */
const PERMISSION_TOOLS_ON = [
  "-c",
  "features.request_permissions_tool=true",
  "-c",
  "features.exec_permission_approvals=true",
];

describe("the model's requests for a wider sandbox are not offered (real codex)", () => {
  test(
    "positive control: with the features on, a bare on-request thread offers request_permissions",
    async () => {
      const from = await requestCount();
      await using bare = await startBareClient({
        model,
        extraArgs: PERMISSION_TOOLS_ON,
        decision: "decline",
      });
      const client = bare.client;
      const threadId = await client.startThread({
        cwd: worktree.path,
        sandbox: "workspace-write",
        approvalPolicy: "on-request",
      });
      await client.runTurn(threadId, "PERMISSIONS bare");
      const sent = await requestsMentioning(from, "PERMISSIONS bare");
      expect(toolNames(sent[0]!)).toContain("request_permissions");
    },
    60_000,
  );

  test(
    "through codexd's provider on the same codex, request_permissions is not offered",
    async () => {
      const from = await requestCount();
      await using codex = await startTestProvider({ model, codexArgs: PERMISSION_TOOLS_ON });
      const handle = await codex.provider.spawn(
        Spec.parse({ cwd: worktree.path, prompt: "PERMISSIONS provider" }),
      );
      await new EventRecorder(handle).waitFor((e) => e.type === "result", 30_000, "result");
      await handle.stop();
      const sent = await requestsMentioning(from, "PERMISSIONS provider");
      expect(toolNames(sent[0]!)).toContain("exec_command");
      expect(toolNames(sent[0]!)).not.toContain("request_permissions");
    },
    60_000,
  );
});

/** The goal the model sets in `GOAL` turns: codex pursues it in turns of its own. */
const OBJECTIVE = "GOAL-OBJECTIVE keep refining the files";

describe("the model cannot have codex start turns of its own (real codex)", () => {
  beforeAll(() => {
    model.addRule({
      marker: "GOAL",
      rounds: [
        // A small budget of its own ends the bare codex's continuations after one or two turns.
        [step.functionCall("create_goal", { objective: OBJECTIVE, token_budget: 20_000 })],
        [step.message("goal set")],
      ],
    });
  });

  test(
    "positive control: on a bare codex, create_goal has codex continue by itself after the turn",
    async () => {
      const from = await requestCount();
      await using bare = await startBareClient({ model, decision: "decline" });
      const client = bare.client;
      const threadId = await client.startThread({
        cwd: worktree.path,
        sandbox: "workspace-write",
      });
      const completed = await client.runTurn(threadId, "GOAL bare");
      const asked = String(asRecord(asRecord(completed.params).turn).id);
      const goalTools = toolNames((await requestsMentioning(from, "GOAL bare"))[0]!);
      expect(goalTools).toContain("create_goal");
      // A turn nobody asked for: codex starts it and asks the model to go on with the goal.
      await client.waitForNotification(
        "turn/started",
        (p) => asRecord(p.turn).id !== asked,
        10_000,
      );
      const continuation = await model.waitForRequest(
        (r) => r.answeredBy === "fallback" && JSON.stringify(r.body?.input).includes(OBJECTIVE),
        { from },
      );
      expect(continuation.index).toBeGreaterThan(from);
    },
    60_000,
  );

  test(
    "through codexd's provider create_goal is not offered, and calling it starts no turn",
    async () => {
      const from = await requestCount();
      await using codex = await startTestProvider({ model });
      const handle = await codex.provider.spawn(
        Spec.parse({ cwd: worktree.path, prompt: "GOAL provider" }),
      );
      const events = new EventRecorder(handle);
      await events.waitFor((e) => e.type === "result", 30_000, "result");
      const sent = await requestsMentioning(from, "GOAL provider");
      expect(toolNames(sent[0]!)).not.toContain("create_goal");
      expect(JSON.stringify(sent.at(-1)!.body?.input)).toContain("create_goal");
      // codex would start its continuation right after the turn: the next request the model
      // sees is the runner's next turn, none of codex's own.
      const between = await requestCount();
      const next = await handle.send("after the goal");
      await events.waitFor((e) => e.type === "result" && e.turnId === next.turnId, 30_000);
      const after = await model.waitForRequest(() => true, { from: between });
      expect(JSON.stringify(after.body?.input)).toContain("after the goal");
      expect(events.events.filter((e) => e.type === "turn.started")).toHaveLength(2);
      await handle.stop();
    },
    60_000,
  );
});

/**
 * Every tool codex offers a codexd thread, by model, as reviewed: each one either goes through the
 * bridge (commands, patches, terminal input), reads within the sandbox (view_image), is answered
 * by codexd (request_user_input), or is refused as it runs (collaboration: foreign-turns.ts;
 * code mode's nested calls: declined as calls codex did not show). A codex that offers anything
 * else fails here, so an upgrade's new tool is reviewed before a fleet gets it.
 */
const REVIEWED_TOOLS: Record<string, string[]> = {
  // The scripted model's unknown slug: codex's fallback tool set.
  "mock-model": ["exec_command", "request_user_input", "view_image", "write_stdin"],
  "gpt-5.5": ["apply_patch", "exec_command", "request_user_input", "view_image", "write_stdin"],
  // Code mode: the tools are namespaces, offered in an `additional_tools` input item.
  "gpt-6-sol": [
    "clock.sleep",
    "collaboration.followup_task",
    "collaboration.interrupt_agent",
    "collaboration.list_agents",
    "collaboration.send_message",
    "collaboration.spawn_agent",
    "collaboration.wait_agent",
    "functions.exec",
    "functions.request_user_input",
    "functions.request_user_input_async",
    "functions.wait",
  ],
};

/** The tools of `request`, flat (`namespace.tool`), from `tools` and `additional_tools` items. */
function allToolNames(request: RecordedRequest): string[] {
  type Tool = { name?: string; type?: string; tools?: Tool[] };
  const body = request.body as { tools?: Tool[]; input?: Array<{ type?: string; tools?: Tool[] }> };
  const names: string[] = [];
  const walk = (tools: Tool[] | undefined, prefix: string) => {
    for (const tool of tools ?? []) {
      if (tool.tools) walk(tool.tools, `${tool.name}.`);
      else names.push(prefix + (tool.name ?? tool.type ?? "?"));
    }
  };
  walk(body.tools, "");
  for (const item of body.input ?? []) if (item.type === "additional_tools") walk(item.tools, "");
  return names.sort();
}

describe("the tools codexd's threads are offered are the reviewed ones (real codex)", () => {
  for (const [slug, reviewed] of Object.entries(REVIEWED_TOOLS)) {
    test(slug, async () => {
      const from = await requestCount();
      await using codex = await startTestProvider({ model });
      const prompt = `TOOLS of ${slug}`;
      const handle = await codex.provider.spawn(
        Spec.parse({ cwd: worktree.path, prompt, ...(slug !== "mock-model" && { model: slug }) }),
      );
      await new EventRecorder(handle).waitFor((e) => e.type === "result", 30_000, "result");
      await handle.stop();
      const sent = await requestsMentioning(from, prompt);
      expect(allToolNames(sent[0]!)).toEqual(reviewed);
    }, 60_000);
  }
});

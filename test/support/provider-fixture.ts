/**
 * A real codex provider for integration tests: the pinned codex app-server on a fresh
 * CODEX_HOME, pointed at a scripted model, with a recorder for each session's events.
 */
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { ScriptedModel } from "../../src/devtools/scripted-model.ts";
import type { SessionEvent } from "../../src/provider/events.ts";
import { startCodexChild } from "../../src/provider/codex/child.ts";
import { CodexProvider, type CodexProviderOptions } from "../../src/provider/codex/provider.ts";
import type { ApprovalRequest, Approver, Handle } from "../../src/provider/types.ts";
import { makeCodexHome, REPO_ROOT } from "./codex-harness.ts";

export const allowAll: Approver = {
  decide: () => Promise.resolve({ decision: "allow", source: "test", reason: "test allows all" }),
};

/** An approver that allows all and records what it was asked. */
export function recordingApprover(): { asked: ApprovalRequest[]; approver: Approver } {
  const asked: ApprovalRequest[] = [];
  const approver: Approver = {
    decide: (request) => {
      asked.push(request);
      return Promise.resolve({ decision: "allow", source: "default", reason: "test" });
    },
  };
  return { asked, approver };
}

export interface TestProvider extends AsyncDisposable {
  provider: CodexProvider;
  codexHome: string;
  /** Shuts the provider down; removes CODEX_HOME unless `keepHome`. */
  close(options?: { keepHome?: boolean }): Promise<void>;
}

export async function startTestProvider(options: {
  model: ScriptedModel;
  approver?: Approver;
  codexHome?: string;
  modelArgs?: Parameters<ScriptedModel["codexArgs"]>[0];
  provider?: Partial<CodexProviderOptions>;
  /** Added to the environment the daemon would hand codex (before codexd filters it). */
  env?: Record<string, string>;
  /** More arguments for codex (after the model's), e.g. `-c` overrides of its defaults. */
  codexArgs?: readonly string[];
}): Promise<TestProvider> {
  const codexHome = options.codexHome ?? await makeCodexHome();
  const userHome = path.join(codexHome, "user-home");
  await mkdir(userHome, { recursive: true });
  const child = await startCodexChild({
    codexHome,
    extraArgs: [
      ...options.model.codexArgs(options.modelArgs ?? { requestMaxRetries: 0 }),
      ...options.codexArgs ?? [],
    ],
    // The user's own shell profile and git config stay out of the tests.
    inheritedEnv: { PATH: process.env.PATH, LANG: "C.UTF-8", HOME: userHome, ...options.env },
    searchFrom: [REPO_ROOT],
    binary: process.env.CODEX_BIN || undefined,
  });
  const provider = new CodexProvider({
    child,
    approver: options.approver ?? allowAll,
    ...options.provider,
  });
  let closing: Promise<void> | undefined;
  const close = (closeOptions: { keepHome?: boolean } = {}) =>
    closing ??= (async () => {
      await provider.shutdown();
      if (!closeOptions.keepHome && options.codexHome === undefined) {
        await rm(codexHome, { recursive: true, force: true, maxRetries: 3 });
      }
    })();
  return { provider, codexHome, close, [Symbol.asyncDispose]: () => close() };
}

/** Reads a handle's events in the background; tests wait for the ones they need. */
export class EventRecorder {
  readonly events: SessionEvent[] = [];
  readonly done: Promise<void>;
  #waiters: Array<() => void> = [];

  constructor(handle: Handle) {
    this.done = (async () => {
      for await (const event of handle.events) {
        this.events.push(event);
        for (const wake of this.#waiters.splice(0)) wake();
      }
      for (const wake of this.#waiters.splice(0)) wake();
    })();
  }

  /** Resolves with the first event matching `match` (already seen or coming), or rejects. */
  async waitFor(
    match: (event: SessionEvent) => boolean,
    timeoutMs = 20_000,
    label = "event",
  ): Promise<SessionEvent> {
    const deadline = Date.now() + timeoutMs;
    let ended = false;
    void this.done.then(() => (ended = true));
    while (true) {
      const found = this.events.find(match);
      if (found) return found;
      if (ended) throw new Error(`stream ended without ${label}: ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${label}: ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  terminals(): SessionEvent[] {
    return this.events.filter((e) => e.type === "result" || e.type === "error");
  }

  describe(): string {
    return this.events.map((e) => e.type === "error" ? `error(${e.code})` : e.type).join(", ");
  }
}

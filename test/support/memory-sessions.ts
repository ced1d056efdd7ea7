/**
 * A SessionManager as the daemon builds it (store, journal, policies, bridge) over the in-memory
 * provider, with the repository's default policy and a worktree to spawn in: the daemon's unit
 * tests run sessions with it, no codex.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ApprovalBridge } from "../../src/approval/bridge.ts";
import { PolicyStore } from "../../src/approval/policy-store.ts";
import { Journal } from "../../src/daemon/journal.ts";
import { SessionManager } from "../../src/daemon/sessions.ts";
import { Store } from "../../src/daemon/store.ts";
import { fakeAnalyzer } from "../approval/support/fake-analyzer.ts";
import { tempDir } from "../approval/support/policies.ts";
import { MemoryProvider, type MemoryProviderOptions } from "./memory-provider.ts";

export interface MemorySessions {
  store: Store;
  provider: MemoryProvider;
  sessions: SessionManager;
  /** An existing folder to spawn sessions in. */
  worktree: string;
  [Symbol.dispose](): void;
}

export function memorySessions(options: MemoryProviderOptions = {}): MemorySessions {
  const tmp = tempDir("codexd-memory-sessions-");
  mkdirSync(join(tmp.dir, "policies"));
  tmp.write(
    "policies/default.yaml",
    readFileSync(join(import.meta.dir, "..", "..", "policies", "default.yaml"), "utf8"),
  );
  const worktree = join(tmp.dir, "wt");
  mkdirSync(worktree);
  const store = Store.open(":memory:");
  const policies = new PolicyStore(join(tmp.dir, "policies"), fakeAnalyzer);
  const provider = new MemoryProvider(options);
  const sessions = new SessionManager({
    store,
    journal: new Journal(store),
    provider,
    policies,
    bridge: new ApprovalBridge(policies),
    version: "test",
  });
  return {
    store,
    provider,
    sessions,
    worktree,
    [Symbol.dispose]: () => {
      store.close();
      tmp[Symbol.dispose]();
    },
  };
}

/** Lets every session's pump drain what its handle emitted (the pumps run on microtasks). */
export async function drained(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

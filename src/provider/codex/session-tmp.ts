/**
 * A temp folder of each session's own, the only temp folder its commands may write.
 *
 * Why: codex's `workspace-write` sandbox lets every command write `/tmp` and `$TMPDIR`, so one
 * session's commands could change another session's files there: its worktree, when the runner
 * puts worktrees under `/tmp`, or the files its tests keep in `/tmp` (measured on 0.169:
 * test/provider/codex/session-tmp.test.ts). So every workspace-write thread gets `/tmp` and
 * codex's `$TMPDIR` read-only, and this folder writable and as its commands' `TMPDIR`
 * (plan.ts `withPrivateTmp`).
 *
 * Layout: `<os.tmpdir()>/codexd-tmp-<pid>-<random>/` (0711: the agent account may pass, not list),
 * one `<sessionId>/` in it per session (0700, the agent account's). A session's folder is removed
 * when its session stops, the whole root when the daemon does. Beside them `.mcp-cwd/` (0755, the
 * daemon's, empty): the folder MCP servers start in (`mcpCwd`).
 */
import { randomBytes } from "node:crypto";
import { chmod, chown, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

const SAFE_NAME = /^[A-Za-z0-9_-]+$/;

export interface SessionTmpOptions {
  /** Where the root is made (default: `os.tmpdir()`). */
  parent?: string;
  /** The agent account (`codex.user`) that must own each session's folder. */
  owner?: { uid: number; gid: number };
}

export class SessionTmp implements AsyncDisposable {
  readonly root: string;
  readonly #owner: { uid: number; gid: number } | undefined;
  #rootMade: Promise<void> | undefined;
  #mcpCwdMade: Promise<string> | undefined;
  /** Removals under way: a session resumed at once must not have its new folder removed. */
  readonly #removing = new Map<string, Promise<void>>();

  constructor(options: SessionTmpOptions = {}) {
    const name = `codexd-tmp-${process.pid}-${randomBytes(6).toString("hex")}`;
    this.root = path.join(options.parent ?? tmpdir(), name);
    this.#owner = options.owner;
  }

  /** The session's folder, made if missing. */
  async ensure(sessionId: string): Promise<string> {
    if (!SAFE_NAME.test(sessionId)) {
      throw new Error(`Cannot make a temp folder for session ${JSON.stringify(sessionId)}`);
    }
    await this.#makeRoot();
    await this.#removing.get(sessionId);
    const dir = path.join(this.root, sessionId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (this.#owner) await chown(dir, this.#owner.uid, this.#owner.gid);
    return dir;
  }

  /**
   * An empty folder no session's commands can write (nor see: the root is denied to them), for
   * codex to start MCP servers in. codex starts them outside the sandbox in the thread's cwd by
   * default, where the repository decides what `python -m x` or `npx x` runs (plan.ts
   * `mcpServerConfig`). Its name is no session id (ids have no dot).
   */
  mcpCwd(): Promise<string> {
    this.#mcpCwdMade ??= (async () => {
      await this.#makeRoot();
      const dir = path.join(this.root, ".mcp-cwd");
      await mkdir(dir, { recursive: true });
      await chmod(dir, 0o755); // the agent account's servers may enter it, not write it
      return dir;
    })();
    return this.#mcpCwdMade;
  }

  #makeRoot(): Promise<void> {
    // chmod after mkdir: the daemon's umask (077) would take the x bits off the agent account.
    this.#rootMade ??= mkdir(this.root, { recursive: true }).then(() => chmod(this.root, 0o711));
    return this.#rootMade;
  }

  /** Removes the session's folder and what its commands left there. */
  remove(sessionId: string): Promise<void> {
    if (!SAFE_NAME.test(sessionId)) return Promise.resolve();
    const removal = rm(path.join(this.root, sessionId), { recursive: true, force: true })
      .finally(() => {
        if (this.#removing.get(sessionId) === removal) this.#removing.delete(sessionId);
      });
    this.#removing.set(sessionId, removal);
    return removal;
  }

  /** Removes every session's folder. Idempotent. */
  async close(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

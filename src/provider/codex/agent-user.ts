/**
 * A separate identity for agents (`codex.user`). When the daemon runs as root, codex, and so
 * every command the model runs, is spawned as this account: its uid, its primary gid and no
 * supplementary groups (Bun and libuv call setgroups(0) before setuid, so none of root's groups
 * leak either). Its HOME is the account's home, its CODEX_HOME a folder it owns; the daemon's
 * state dir (token, database) stays 0700 root and out of its reach.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
} from "node:fs";
import path from "node:path";

export interface AgentUser {
  /** The account name (or the uid, for an account without a passwd entry). */
  name: string;
  uid: number;
  gid: number;
  /** HOME for codex and its commands. */
  home: string;
}

export class AgentUserError extends Error {}

/** A passwd line: name:password:uid:gid:gecos:home:shell. */
function parsePasswd(line: string): AgentUser | undefined {
  const fields = line.trim().split(":");
  if (fields.length < 7) return undefined;
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) return undefined;
  return { name: fields[0]!, uid, gid, home: fields[5] || "/" };
}

/** The passwd entry of `key` (a name or a uid): getent (NSS), else /etc/passwd. */
function lookup(key: string, passwdFile: string): AgentUser | undefined {
  try {
    const line = execFileSync("getent", ["passwd", key], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const entry = parsePasswd(line.split("\n")[0] ?? "");
    if (entry) return entry;
  } catch {
    // No getent, or no such entry: read the file.
  }
  let text: string;
  try {
    text = readFileSync(passwdFile, "utf8");
  } catch {
    return undefined;
  }
  const numeric = /^\d+$/.test(key);
  for (const line of text.split("\n")) {
    const entry = parsePasswd(line);
    if (entry && (numeric ? entry.uid === Number(key) : entry.name === key)) return entry;
  }
  return undefined;
}

/**
 * `codex.user` as an account: a name or uid with a passwd entry, or `uid:gid` (an entry is then
 * optional: without one HOME is `/`). Root is refused: that is what the option exists to avoid.
 */
export function resolveAgentUser(spec: string, passwdFile = "/etc/passwd"): AgentUser {
  const pair = /^(\d+):(\d+)$/.exec(spec);
  let user: AgentUser | undefined;
  if (pair) {
    const uid = Number(pair[1]);
    const entry = lookup(String(uid), passwdFile);
    user = {
      name: entry?.name ?? String(uid),
      uid,
      gid: Number(pair[2]),
      home: entry?.home ?? "/",
    };
  } else {
    user = lookup(spec, passwdFile);
  }
  if (!user) {
    throw new AgentUserError(
      `codex.user ${spec}: no such account (use a name or uid from /etc/passwd, or uid:gid)`,
    );
  }
  if (user.uid === 0 || user.gid === 0) {
    throw new AgentUserError(
      `codex.user ${spec}: is root (uid ${user.uid}, gid ${user.gid}); name an unprivileged account`,
    );
  }
  return user;
}

/** The variables that name the account codex runs as. */
export function agentUserEnv(user: AgentUser): Record<string, string> {
  return { HOME: user.home, USER: user.name, LOGNAME: user.name };
}

/** Whether `user` may search (traverse) the folder `dir`, by its mode bits. */
function canSearch(dir: string, user: AgentUser): boolean {
  const stat = lstatSync(dir);
  if (stat.uid === user.uid) return (stat.mode & 0o100) !== 0;
  if (stat.gid === user.gid) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

/**
 * Makes `home` a CODEX_HOME that `user` owns (0700), creating missing parents as 0755 so the
 * user can reach it. A home left by a daemon that ran codex as itself is handed over, contents
 * included (symbolic links are re-owned, never followed). Fails when the user cannot reach it.
 */
export function prepareAgentCodexHome(home: string, user: AgentUser): void {
  const missing: string[] = [];
  for (let dir = path.resolve(home);; dir = path.dirname(dir)) {
    try {
      lstatSync(dir);
      break;
    } catch {
      missing.unshift(dir);
      if (dir === path.dirname(dir)) break;
    }
  }
  for (const dir of missing) {
    mkdirSync(dir);
    chmodSync(dir, dir === path.resolve(home) ? 0o700 : 0o755);
  }
  const stat = lstatSync(home);
  if (!stat.isDirectory()) {
    throw new AgentUserError(`codex home ${home} is not a folder (a link or a file)`);
  }
  if (stat.uid !== user.uid || stat.gid !== user.gid) chownTree(home, user);
  if ((stat.mode & 0o7777) !== 0o700) chmodSync(home, 0o700);
  for (let dir = path.dirname(path.resolve(home));; dir = path.dirname(dir)) {
    if (!canSearch(dir, user)) {
      throw new AgentUserError(
        `codex.user ${user.name} cannot reach its codex home ${home}: ${dir} is not searchable ` +
          `by it (mode ${(lstatSync(dir).mode & 0o7777).toString(8)}); give it o+x or move ` +
          `codex.home`,
      );
    }
    if (dir === path.dirname(dir)) break;
  }
}

/** lchown of a folder and everything in it; links are re-owned, never followed. */
function chownTree(root: string, user: AgentUser): void {
  chownSync(root, user.uid, user.gid);
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      lchownSync(file, user.uid, user.gid);
      if (entry.isDirectory()) stack.push(file);
    }
  }
}

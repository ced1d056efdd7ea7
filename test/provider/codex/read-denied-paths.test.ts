import { describe, expect, test } from "bun:test";
import {
  planThread,
  SANDBOX_GUARD_PATH,
  SANDBOX_PROFILE,
} from "../../../src/provider/codex/plan.ts";
import { readDeniedPaths } from "../../../src/provider/codex/read-denied.ts";
import { Spec } from "../../../src/provider/spec.ts";

describe("readDeniedPaths", () => {
  test("the home's credential folders, codex's logins and rollouts, and codexd's files", () => {
    const paths = readDeniedPaths({
      home: "/home/agent",
      codexHome: "/var/lib/codexd/codex-home",
      daemonPaths: ["/var/lib/codexd/state", "/etc/codexd/token"],
    });
    expect(paths.filter((p) => !p.startsWith("/home/agent/"))).toEqual([
      "/etc/codexd/token",
      "/var/lib/codexd/codex-home/.credentials.json",
      "/var/lib/codexd/codex-home/archived_sessions",
      "/var/lib/codexd/codex-home/auth.json",
      "/var/lib/codexd/codex-home/sessions",
      "/var/lib/codexd/state",
    ]);
    const home = paths.filter((p) => p.startsWith("/home/agent/")).map((p) => p.slice(12));
    expect(home).toEqual([...home].sort());
    for (
      const credential of [
        ".aws",
        ".azure",
        ".config/gcloud",
        ".config/gh",
        ".docker/config.json",
        ".git-credentials",
        ".gnupg",
        ".kube",
        ".netrc",
        ".ssh",
        ".npmrc",
        ".pypirc",
        ".cargo/credentials.toml",
        ".vault-token",
        ".codex",
        ".claude",
        ".claude.json",
        ".config/github-copilot",
      ]
    ) expect(home).toContain(credential);
  });

  test("a codex home codexd was told to keep in the commands' HOME is denied entry by entry", () => {
    const paths = readDeniedPaths({
      home: "/home/agent",
      codexHome: "/home/agent/.codex",
      list: () => ["auth.json", "state_5.sqlite", "tmp"],
    });
    expect(paths).not.toContain("/home/agent/.codex");
    expect(paths).toContain("/home/agent/.codex/state_5.sqlite");
    expect(paths).not.toContain("/home/agent/.codex/tmp");
    expect(paths).toContain("/home/agent/.claude");
  });

  test("the home's shell start-up files and histories: a shell would hand their exports on", () => {
    const home = readDeniedPaths({ home: "/h", codexHome: "/c" });
    for (
      const file of [".profile", ".bashrc", ".bash_profile", ".bash_history", ".zshenv", ".zshrc"]
    ) expect(home).toContain(`/h/${file}`);
  });

  test("a path inside another denied one is left out (bubblewrap cannot mount inside a mask)", () => {
    const paths = readDeniedPaths({
      codexHome: "/s/codex-home",
      daemonPaths: ["/s", "/s/token", "/s/../s/token", "/other/token"],
    });
    expect(paths).toEqual(["/other/token", "/s"]);
  });

  test("only paths that exist, when told what exists (each thread start asks the filesystem)", () => {
    const existing = new Set(["/home/agent/.aws", "/c/auth.json"]);
    expect(readDeniedPaths({
      home: "/home/agent",
      codexHome: "/c",
      exists: (p) => existing.has(p),
    })).toEqual(["/c/auth.json", "/home/agent/.aws"]);
  });

  test("listed, everything in codex's home is denied but its tmp and a folder holding HOME", () => {
    const entries = [
      "auth.json",
      "state_5.sqlite",
      "thread_history_1.sqlite-wal",
      "tmp",
      "user-home",
    ];
    expect(
      readDeniedPaths({
        home: "/c/user-home",
        codexHome: "/c",
        list: (dir) => dir === "/c" ? entries : [],
      }).filter((p) => !p.startsWith("/c/user-home/")),
    ).toEqual([
      "/c/.credentials.json",
      "/c/archived_sessions",
      "/c/auth.json",
      "/c/sessions",
      "/c/state_5.sqlite",
      // A database's journals, there or not: a WAL file comes back with the next connection.
      "/c/state_5.sqlite-journal",
      "/c/state_5.sqlite-shm",
      "/c/state_5.sqlite-wal",
      "/c/thread_history_1.sqlite-wal",
    ]);
    // A home that cannot be listed still loses its logins and rollouts.
    expect(readDeniedPaths({
      codexHome: "/c",
      list: () => {
        throw new Error("EACCES");
      },
    })).toEqual(["/c/.credentials.json", "/c/archived_sessions", "/c/auth.json", "/c/sessions"]);
  });

  test("a symlinked entry is denied at its target (bubblewrap cannot mask a link)", () => {
    const links: Record<string, string> = {
      "/h/.bashrc": "/h/dotfiles/bashrc",
      "/h/.aws": "/srv/aws",
    };
    const paths = readDeniedPaths({
      home: "/h",
      codexHome: "/c",
      exists: (p) => p in links || p === "/c/auth.json",
      realpath: (p) => {
        if (p in links) return links[p]!;
        if (p === "/c/auth.json") return p;
        throw new Error("ENOENT");
      },
    });
    expect(paths).toEqual(["/c/auth.json", "/h/dotfiles/bashrc", "/srv/aws"]);
  });

  test("no home, or a relative one, gives no home entries", () => {
    expect(readDeniedPaths({ codexHome: "/c" })).toEqual([
      "/c/.credentials.json",
      "/c/archived_sessions",
      "/c/auth.json",
      "/c/sessions",
    ]);
    expect(readDeniedPaths({ home: "relative", codexHome: "/c" })).toHaveLength(4);
  });
});

describe("planThread with readDenied", () => {
  const spec = Spec.parse({ cwd: "/tmp", prompt: "p" });
  const filesystem = (params: ReturnType<typeof planThread>) =>
    (params.config as Record<string, { [k: string]: { filesystem: unknown } }>).permissions![
      SANDBOX_PROFILE
    ]!.filesystem;

  test("each path is a deny entry of the sandbox profile, beside the guard", () => {
    expect(filesystem(planThread(spec, { readDenied: ["/h/.aws", "/s"] }))).toEqual({
      [SANDBOX_GUARD_PATH]: "deny",
      "/h/.aws": "deny",
      "/s": "deny",
    });
  });

  test("danger-full-access has no filesystem policy to put them in", () => {
    const params = planThread(
      Spec.parse({ cwd: "/tmp", prompt: "p", permissionMode: "bypassPermissions" }),
      { readDenied: ["/h/.aws"] },
    );
    expect(params.sandbox).toBe("danger-full-access");
    expect(JSON.stringify(params)).not.toContain("/h/.aws");
  });
});

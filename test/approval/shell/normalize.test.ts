import { describe, expect, test } from "bun:test";
import { normalizeCommand } from "../../../src/approval/shell/normalize.ts";
import { parseArgs } from "../../../src/approval/shell/options.ts";
import { decodeAnsiC, literalWord } from "../../../src/approval/shell/words.ts";

const run = (...words: string[]) =>
  normalizeCommand(words.map(literalWord), { stdin: "terminal" }, new Set()).commands.map((c) =>
    c.argv.join(" ")
  );

describe("normalizeCommand strips launchers", () => {
  const table: Array<[string[], string[]]> = [
    [["env", "A=1", "rm", "x"], ["rm x"]],
    [["env", "-i", "-u", "HOME", "rm", "x"], ["rm x"]],
    [["env"], ["env"]],
    [["command", "-p", "rm", "x"], ["rm x"]],
    [["command", "-v", "rm"], ["command -v rm"]],
    [["exec", "-a", "name", "rm", "x"], ["rm x"]],
    [["nice", "-n", "5", "rm", "x"], ["rm x"]],
    [["nice", "-5", "rm", "x"], ["rm x"]],
    [["nohup", "rm", "x"], ["rm x"]],
    [["timeout", "-s", "KILL", "-k", "5", "60", "rm", "x"], ["rm x"]],
    [["timeout", "--kill-after=5", "60", "rm", "x"], ["rm x"]],
    [["stdbuf", "-o", "L", "-eL", "rm", "x"], ["rm x"]],
    [["time", "-p", "rm", "x"], ["rm x"]],
    [["xargs", "-0", "-n", "1", "-I{}", "rm", "{}"], ["rm {}"]],
    [["xargs"], ["echo"]],
    [["find", ".", "-name", "x", "-exec", "rm", "-f", "{}", ";", "-print"], [
      // `{}` is a path found below the root.
      "find . -name x -print",
      "rm -f ./*",
    ]],
    [["find", ".", "-execdir", "a", "+", "-ok", "b", ";"], ["find .", "b", "a"]],
    [["sudo", "-u", "root", "rm", "x"], ["sudo -u root rm x", "rm x"]],
    [["/usr/bin/env", "/bin/rm", "x"], ["rm x"]],
    [["git", "-C", "d", "-c", "k=v", "--no-pager", "push"], ["git -C d -c k=v --no-pager push"]],
    [["busybox", "rm", "x"], ["rm x"]],
    [["env", "nice", "timeout", "5", "nohup", "rm", "x"], ["rm x"]],
  ];
  for (const [words, expected] of table) {
    test(words.join(" "), () => expect(run(...words)).toEqual(expected));
  }

  test("shell -c, eval and su -c hand back their scripts", () => {
    const n = (...w: string[]) =>
      normalizeCommand(w.map(literalWord), { stdin: "terminal" }, new Set());
    expect(n("bash", "-lc", "ls").scripts).toEqual(["ls"]);
    expect(n("bash", "-o", "pipefail", "-c", "ls").scripts).toEqual(["ls"]);
    expect(n("sh", "-c", "ls", "arg0").commands).toEqual([]);
    expect(n("eval", "a", "b").scripts).toEqual(["a b"]);
    expect(n("su", "-c", "id").scripts).toEqual(["id"]);
    expect(n("env", "-S", "rm x").scripts).toEqual(["rm x"]);
  });

  test("a script read from the terminal is interactive, from a file is not", () => {
    const n = (stdin: "terminal" | "pipe" | "file") =>
      normalizeCommand([literalWord("sh")], { stdin }, new Set());
    expect(n("terminal").interactive).toBe("sh");
    expect(n("file").interactive).toBeUndefined();
    expect(n("pipe").unanalyzable).toContain("another program prints");
  });
});

describe("option parsing", () => {
  test("clusters, long forms, values, abbreviations and --", () => {
    const spec = {
      shortValue: "o",
      aliases: { f: "force" },
      longs: ["force", "force-with-lease", "repo="],
    };
    expect(parseArgs(["-fu", "x", "--repo", "r", "-oopt", "--force-w", "--", "-y"], spec)).toEqual({
      options: [
        { name: "--force" },
        { name: "-u" },
        { name: "--repo", value: "r" },
        { name: "-o", value: "opt" },
        { name: "--force-with-lease" },
      ],
      operands: ["x", "-y"],
    });
    expect(parseArgs(["--forc"], spec).options).toEqual([{ name: "--forc" }]);
    expect(parseArgs(["-n20"]).options).toEqual([{ name: "-n", value: "20" }]);
  });

  test("$'…' escapes", () => {
    expect(decodeAnsiC(String.raw`\x72\155\n\t\u00e9\'`)).toBe("rm\n\té'");
  });
});

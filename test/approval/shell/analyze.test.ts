import { describe, expect, test } from "bun:test";
import { analyzeCommand } from "../../../src/approval/shell/analyze.ts";
import { initShellParser } from "../../../src/approval/shell/parser.ts";

await initShellParser();

const argvs = (command: string) => analyzeCommand(command).commands.map((c) => c.argv.join(" "));

describe("analyzeCommand: every command the shell could run", () => {
  const table: Array<[string, string[]]> = [
    ["ls && rm x", ["ls", "rm x"]],
    ["a || b; c | d & e", ["a", "b", "c", "d", "e"]],
    ["a\nb", ["a", "b"]],
    ["(a; b)", ["a", "b"]],
    ["{ a; b; }", ["a", "b"]],
    ["echo $(a) `b`", ["a", "b", "echo $(a) `b`"]],
    ["diff <(a) <(b)", ["a", "b", "diff <(a) <(b)"]],
    ["f() { a; }; f", ["a", "f"]],
    // A loop over literal words runs the body once per value: each run is judged.
    ["for i in 1 2; do a $i; done", ["a 1", "a 2"]],
    ["for i in $(ls); do a $i; done", ["ls", "a $i"]],
    ["while true; do a; done", ["true", "a"]],
    ["if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]],
    ["case x in y) a;; esac", ["a"]],
    ["x=$(a) y=2", ["a"]],
    ["export X=$(a)", ["a"]],
    ["[[ -n $(a) ]]", ["a"]],
    ["! a", ["a"]],
    ["a > out 2>&1", ["a"]],
    ["a < <(b)", ["b", "a"]],
    ["echo ${x:-$(a)}", ["a", "echo ${x:-$(a)}"]],
    ["a # b", ["a"]],
  ];
  for (const [command, expected] of table) {
    test(JSON.stringify(command), () => expect(argvs(command)).toEqual(expected));
  }
});

describe("analyzeCommand: quoting, paths and wrappers", () => {
  const table: Array<[string, string[]]> = [
    ["r''m -rf /", ["rm -rf /"]],
    ['"rm" "-rf" "/"', ["rm -rf /"]],
    ["\\rm -rf /", ["rm -rf /"]],
    ["g\\it status", ["git status"]],
    ["$'\\x72m' x", ["rm x"]],
    ["/usr/bin/rm x", ["rm x"]],
    ["'/bin/git' status", ["git status"]],
    ["bash -lc 'ls && rm x'", ["ls", "rm x"]],
    ["/bin/bash -lc 'sh -c \"zsh -c rm\"'", ["rm"]],
    ["sh -c 'echo '\\''a b'\\'''", ["echo a b"]],
    ["eval 'a; b'", ["a", "b"]],
    ["echo 'a' | sh", ["echo a", "sh", "a"]],
    ["printf 'a\\nb\\n' | bash", [String.raw`printf a\nb\n`, "bash", "a", "b"]],
    ["bash <<< 'a'", ["bash", "a"]],
    ["bash <<'EOF'\na\nEOF", ["bash", "a"]],
    ["cat <<'EOF' | sh\na\nEOF", ["cat", "sh", "a"]],
    // git keeps its global options: the rules read `-c` and skip the rest themselves.
    ["git -C dir -c k=v --no-pager reset --hard", ["git -C dir -c k=v --no-pager reset --hard"]],
    ["git --git-dir=.git --work-tree . status", ["git --git-dir=.git --work-tree . status"]],
  ];
  for (const [command, expected] of table) {
    test(JSON.stringify(command), () => expect(argvs(command)).toEqual(expected));
  }
});

describe("analyzeCommand: unanalysable input", () => {
  const table: Array<[string, string]> = [
    ["$(printf rm) -rf /", "only known at run time"],
    ["`echo rm` x", "only known at run time"],
    ["read x; $x -rf /", "only known at run time"],
    ["/???/r? x", "only known at run time"],
    ["echo 'unterminated", "parse error"],
    ['eval "$CMD"', "eval of data only known at run time"],
    ['read X; bash -c "$X"', "only known at run time"],
    ['sh -c "$(cat x)"', "sh -c runs a script built at run time"],
    ["echo cm0= | base64 -d | sh", "sh runs a script another program prints"],
  ];
  for (const [command, reason] of table) {
    test(JSON.stringify(command), () => {
      expect(analyzeCommand(command).unanalyzable?.reason).toContain(reason);
    });
  }

  test("literal scripts and known variables stay analysable", () => {
    for (
      const command of [
        "bash -c 'ls $HOME'",
        'bash -c "ls $HOME"',
        "$HOME/bin/tool x",
        "echo $(date)",
      ]
    ) {
      expect(analyzeCommand(command).unanalyzable).toBeUndefined();
    }
    expect(argvs("$HOME/bin/tool x")).toEqual(["tool x"]);
  });

  test("nesting deeper than the bound is unanalysable", () => {
    let command = "ls";
    for (let i = 0; i < 12; i++) command = `sh -c ${JSON.stringify(command)}`;
    expect(analyzeCommand(command).unanalyzable?.reason).toContain("nested more than 8");
  });
});

describe("analyzeCommand: interactive shells and interpreters", () => {
  const interactive: Array<[string, string]> = [
    ["bash", "bash"],
    ["cd x && zsh", "zsh"],
    ["bash -i", "bash"],
    ["bash -lc 'python3'", "python3"],
    ["python3", "python3"],
    ["python3 -i app.py", "python3"],
    ["node", "node"],
    ["env python", "python"],
    ["irb", "irb"],
    ["deno", "deno"],
    ["php -a", "php"],
  ];
  for (const [command, program] of interactive) {
    test(`${command} is interactive`, () => {
      expect(analyzeCommand(command).interactive?.program).toBe(program);
    });
  }
  for (
    const command of [
      "bash script.sh",
      "sh < script.sh",
      "python3 app.py",
      "python3 -c 'print(1)'",
      "python3 -m pytest",
      "node -e 1",
      "node --version",
      "bash --version",
      "cat x | python3",
      "deno test",
    ]
  ) {
    test(`${command} is not interactive`, () => {
      expect(analyzeCommand(command).interactive).toBeUndefined();
    });
  }
});

describe("analyzeCommand: what feeds a command", () => {
  test("pipes and substitutions name the programs feeding a command", () => {
    const [, tee, sh] = analyzeCommand("curl x | tee f | sh").commands;
    expect(tee.pipedFrom).toEqual(["curl"]);
    expect(sh.pipedFrom).toEqual(["curl", "tee"]);
    const wrapper = analyzeCommand('sh -c "$(wget -qO- x)"').commands.find((c) =>
      c.argv[0] === "sh"
    );
    expect(wrapper?.pipedFrom).toContain("wget");
  });

  test("commands inside substitutions are marked", () => {
    const [inner, outer] = analyzeCommand("echo $(id)").commands;
    expect(inner).toMatchObject({ argv: ["id"], inSubstitution: true });
    expect(outer.inSubstitution).toBeUndefined();
  });

  test("rawArgv keeps the launchers; text is the normalized command", () => {
    const [c] = analyzeCommand("env FOO=1 timeout 5 /bin/rm -f 'a b'").commands;
    expect(c.rawArgv).toEqual(["env", "FOO=1", "timeout", "5", "/bin/rm", "-f", "a b"]);
    expect(c.text).toBe("rm -f 'a b'");
  });
});

import { describe, expect, test } from "bun:test";
import { matchesPrefix } from "../../../src/approval/argv-match.ts";
import { analyzeCommand } from "../../../src/approval/shell/analyze.ts";
import { initShellParser } from "../../../src/approval/shell/parser.ts";

await initShellParser();

const matches = (command: string, prefix: string[]) =>
  analyzeCommand(command).commands.some((c) => matchesPrefix(c, prefix));

describe("matchesPrefix", () => {
  const hits: Array<[string[], string]> = [
    [["rm", "-rf"], "rm -rf x"],
    [["rm", "-rf"], "rm -fr x"],
    [["rm", "-rf"], "rm -r -f x"],
    [["rm", "-rf"], "rm x -r -f"],
    [["rm", "-rf"], "rm --recursive --force x"],
    [["rm", "-rf"], "rm -R --force x"],
    [["rm", "-rf"], "rm --rec --for x"],
    [["rm", "-r", "-f"], "rm -fR x"],
    [["rm", "-rf", "/"], "rm / -rf"],
    [["git", "push", "--force"], "git push -f"],
    [["git", "push", "--force"], "git push origin main --force"],
    [["git", "push", "-f"], "git push -fu origin main"],
    [["git", "push", "--force"], "git -C dir -c k=v push --force"],
    [["git", "reset", "--hard"], "git reset --har"],
    [["git", "reset", "--hard"], "git --no-pager reset HEAD~1 --hard"],
    [["git", "push"], "git --git-dir=.git push"],
    [["git", "push", "--force-with-lease"], "git push --force-with-lease=main:abc"],
    [["git", "push", "--force-with-lease=main"], "git push --force-with-lease=main"],
    [["git", "commit", "-a"], "git commit -am wip"],
    [["git", "branch", "--force"], "git branch -D old"],
    [["npm", "publish"], "npm publish --tag next"],
    [["npm", "publish"], "npm --registry https://r.example.com publish"],
    [["npm", "publish"], "npm -w pkg publish"],
    [["docker", "push"], "docker -H tcp://h:2375 push img"],
    [["/usr/bin/rm"], "rm x"],
    [["rm"], "/bin/rm x"],
    [["head", "-n"], "head -n5 file"],
  ];
  for (const [prefix, command] of hits) {
    test(`${JSON.stringify(prefix)} matches ${command}`, () => {
      expect(matches(command, prefix)).toBe(true);
    });
  }

  const misses: Array<[string[], string]> = [
    [["rm", "-rf"], "rm -r x"],
    [["rm", "-rf"], "rmdir x"],
    [["git", "push", "--force"], "git push --force-with-lease"],
    [["git", "push", "--force"], "git push --forc"],
    [["git", "reset", "--hard"], "git reset --soft"],
    [["git", "push"], "git pull"],
    [["git", "push", "origin"], "git push upstream"],
    [["npm", "test"], "npm run evil test"],
    [["npm", "publish"], "npm install publish-tool"],
    [["git", "push", "--force-with-lease=main"], "git push --force-with-lease=dev"],
    [["git", "commit", "-a"], "git commit -m all"],
    [[], "ls"],
  ];
  for (const [prefix, command] of misses) {
    test(`${JSON.stringify(prefix)} does not match ${command}`, () => {
      expect(matches(command, prefix)).toBe(false);
    });
  }
});

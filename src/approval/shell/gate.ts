/**
 * Characters the analyzer refuses before parsing. tree-sitter-bash takes `\v`, `\f` and `\r` for
 * blanks where bash does not (`echo x\v#; git push -f` hides the push in a "comment" for the
 * parser only); invisible and direction-changing code points make a command read differently
 * to a person than to the shell. A command holding any of them is declined as unanalysable.
 */

// Blanks other than space and tab (bash reads U+00A0 as part of a word, a person as a space),
// C0 controls other than tab and newline, DEL, C1 controls, invisible formatting, bidi
// overrides, line and paragraph separators, the BOM and the replacement character (what invalid
// UTF-8 becomes).
const HIDDEN =
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00a0\u00ad\u061c\u1680\u2000-\u200a\u202f\u205f\u3000\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffd]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why the command is refused unread, or undefined. */
export function hiddenCharacter(command: string): string | undefined {
  const hit = HIDDEN.exec(command);
  if (hit === null) return undefined;
  const code = hit[0].codePointAt(0)!.toString(16).padStart(4, "0");
  return `the command holds the control or invisible character U+${code} at offset ${hit.index}`;
}

/**
 * Text as a person should see it before approving it: characters that change how a command or a
 * path looks without being seen (bidirectional overrides and isolates, zero-width characters,
 * control characters other than tab and newline) are shown as `⟨U+202E⟩`. A command whose
 * display is reordered by a right-to-left override ("Trojan Source", CVE-2021-42574) runs as
 * written, not as shown; the console shows what runs. Self-contained (no outside names): the
 * console's browser script receives it as its source text (client.ts).
 */
export function visibleText(text: string): string {
  return text.replace(
    // deno-lint-ignore no-control-regex -- control characters are what it looks for
    /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]/g,
    (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}

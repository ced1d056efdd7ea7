/** The text a pipeline element prints when it is known without running it. */
import type { Node } from "web-tree-sitter";
import { decodeAnsiC, type Word, wordOf } from "./words.ts";

/**
 * `echo 'rm -rf /'`, `echo -e '\x72m …'` and `printf '%s' 'rm …'` print text known in advance.
 * Where the shell could print it in more than one way (bash's `echo` leaves `\x72` alone, dash's
 * decodes it), every way is returned, one per line, so a script built from it is judged whole.
 */
export function literalOutputs(node: Node): Word | undefined {
  if (node.type !== "command") return undefined;
  const name = node.childForFieldName("name")?.text;
  if (name !== "echo" && name !== "printf") return undefined;
  const words = node.childrenForFieldName("argument").filter((n) => n !== null).map(wordOf);
  let args = words;
  if (name === "echo") {
    while (args.length > 0 && /^-[neE]+$/.test(args[0].value)) args = args.slice(1);
  }
  const raw = args.map((w) => w.value).join(" ");
  let variants: string[];
  // bash's echo prints `\x72` as it is; `echo -e`, xpg_echo and dash's echo decode it, and
  // read `\0NNN` as octal.
  if (name === "echo") {
    variants = [raw, decodeAnsiC(raw), decodeEcho(raw)];
  } else {
    const formatted = printf(args.map((w) => w.value));
    variants = formatted === undefined ? [decodeAnsiC(raw)] : [formatted];
  }
  const value = [...new Set(variants)].join("\n");
  const out: Word = {
    value,
    dynamic: args.some((w) => w.dynamic) ||
      (name === "printf" && printf(args.map((w) => w.value)) === undefined && /%/.test(raw)),
    substituted: args.some((w) => w.substituted),
    vars: args.flatMap((w) => w.vars),
    literalTail: "",
    glob: false,
  };
  out.literalTail = out.dynamic ? "" : out.value;
  return out;
}

/** `%b` and `echo -e`: C escapes, with `\0NNN` read as octal. */
function decodeEcho(text: string): string {
  return decodeAnsiC(text.replace(/\\0([0-7]{1,3})/g, "\\$1"));
}

/**
 * printf FORMAT ARGS… for `%s`, `%b`, `%c`, `%d`, `%q` and `%%` with flags, width and precision;
 * undefined for anything else. The format's escapes are decoded, the arguments' only by `%b`.
 */
function printf(args: string[]): string | undefined {
  let rest = args;
  if (rest[0] === "--") rest = rest.slice(1);
  if (rest[0] === "-v") return undefined;
  const format = rest[0];
  if (format === undefined) return "";
  const values = rest.slice(1);
  const conversion = /%(%|([-+ #0]*)(\d*)(?:\.(\d*))?([a-zA-Z]))/g;
  let out = "";
  let used = 0;
  // The format is reused while arguments remain, as printf does.
  for (let round = 0; round < 64; round++) {
    let at = 0;
    for (const m of format.matchAll(conversion)) {
      out += decodeAnsiC(format.slice(at, m.index));
      at = m.index + m[0].length;
      if (m[1] === "%") {
        out += "%";
        continue;
      }
      const value = values[used++] ?? "";
      const precision = m[4] === undefined ? undefined : Number(m[4] || "0");
      const clip = (t: string) => precision === undefined ? t : t.slice(0, precision);
      const width = Number(m[3] || "0");
      const pad = (t: string) =>
        t.length >= width ? t : m[2].includes("-") ? t.padEnd(width) : t.padStart(width);
      switch (m[5]) {
        case "s":
        case "q":
          out += pad(clip(value));
          break;
        case "b":
          out += pad(clip(decodeEcho(value)));
          break;
        case "c":
          out += pad(value.slice(0, 1));
          break;
        case "d":
        case "i":
          out += pad(String(Number.parseInt(value, 10) || 0));
          break;
        default:
          return undefined;
      }
    }
    out += decodeAnsiC(format.slice(at));
    if (used >= values.length || !/%[^%]/.test(format)) break;
  }
  return out;
}

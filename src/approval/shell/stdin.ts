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
    variants = [raw, decodeAnsiC(raw), decodeAnsiC(raw.replace(/\\0([0-7]{1,3})/g, "\\$1"))];
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

/** printf FORMAT ARGS… for `%s`, `%b`, `%c`, `%d`, `%%`; undefined for anything else. */
function printf(args: string[]): string | undefined {
  let rest = args;
  if (rest[0] === "--") rest = rest.slice(1);
  if (rest[0] === "-v") return undefined;
  const format = rest[0];
  if (format === undefined) return "";
  const values = rest.slice(1);
  let out = "";
  let used = 0;
  // The format is reused while arguments remain, as printf does.
  for (let round = 0; round < 64; round++) {
    let failed = false;
    const text = format.replace(
      /%(%|[-+ #0]*\d*(?:\.\d+)?([sbcdiqxXoeEfgG]))/g,
      (_all, spec, conv) => {
        if (spec === "%") return "%";
        const v = values[used++] ?? "";
        switch (conv) {
          case "s":
          case "q":
            return v;
          case "b":
            return decodeAnsiC(v);
          case "c":
            return v.slice(0, 1);
          case "d":
          case "i":
            return String(Number.parseInt(v, 10) || 0);
          default:
            failed = true;
            return "";
        }
      },
    );
    if (failed) return undefined;
    out += decodeAnsiC(text);
    if (used >= values.length || !/%[^%]/.test(format)) break;
  }
  return out;
}

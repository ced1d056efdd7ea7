/** The text a pipeline element prints when it is known without running it. */
import type { Node } from "web-tree-sitter";
import { decodeAnsiC, type Word, wordOf } from "./words.ts";

/** `echo 'rm -rf /'` and `printf 'ls\n'` print literal text; anything else is unknown. */
export function literalOutput(node: Node): Word | undefined {
  if (node.type !== "command") return undefined;
  const name = node.childForFieldName("name")?.text;
  if (name !== "echo" && name !== "printf") return undefined;
  const words = node.childrenForFieldName("argument").filter((n) => n !== null).map(wordOf);
  let args = words;
  if (name === "echo") {
    while (args.length > 0 && /^-[neE]+$/.test(args[0].value)) args = args.slice(1);
  }
  const value = args.map((w) => w.value).join(" ");
  const out: Word = {
    value: name === "printf" ? decodeAnsiC(value) : value,
    dynamic: args.some((w) => w.dynamic),
    substituted: args.some((w) => w.substituted),
    vars: args.flatMap((w) => w.vars),
    literalTail: "",
    glob: false,
  };
  out.literalTail = out.dynamic ? "" : out.value;
  return out;
}

/**
 * Files a command writes by name: what `tee` copies its input to, where `cp`/`mv`/`ln`/`install`/
 * `rsync` put their result, what `sed -i` edits. Shared by the analyzer (which follows the text
 * a line writes and then runs) and the built-in rules (which guard git's and the shell's files).
 */

export interface NamedWrite {
  file: string;
  /** The file receives the command's stdin as it is (`tee`). */
  fromStdin: boolean;
}

export function namedWrites(argv: readonly string[]): NamedWrite[] {
  const [program, ...args] = argv;
  const operands = args.filter((a) => !a.startsWith("-"));
  const out: NamedWrite[] = [];
  if (program === "tee") out.push(...operands.map((file) => ({ file, fromStdin: true })));
  if (/^(cp|mv|ln|install|rsync)$/.test(program) && operands.length > 1) {
    out.push({ file: operands[operands.length - 1], fromStdin: false });
  }
  if (program === "sed" && args.some((a) => /^-[a-zA-Z]*i|^--in-place/.test(a))) {
    out.push(...operands.slice(1).map((file) => ({ file, fromStdin: false })));
  }
  return out;
}

/** `ln`, `cp -l`, `cp -s`: the destination becomes another name for the source. */
export function makesLink(argv: readonly string[]): boolean {
  const [program, ...args] = argv;
  return program === "ln" ||
    program === "cp" && args.some((a) => /^-[a-zA-Z]*[ls]|^--(link|symbolic-link)$/.test(a));
}

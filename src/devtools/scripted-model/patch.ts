/**
 * Builds `apply_patch` heredoc commands. codex turns an `exec_command` whose cmd is
 * `apply_patch <<'EOF' ... EOF` into a fileChange item (with a fileChange approval under
 * `untrusted`) instead of running a shell.
 */

export type PatchOp =
  | { op: "add"; path: string; content: string }
  | { op: "delete"; path: string }
  /** Replaces the lines `remove` (in order, contiguous) with `add`. */
  | { op: "update"; path: string; remove: readonly string[]; add: readonly string[] };

/** The patch body, `*** Begin Patch` through `*** End Patch`. Paths are relative to the workdir. */
export function patchText(ops: readonly PatchOp[]): string {
  const lines = ["*** Begin Patch"];
  for (const op of ops) {
    if (op.op === "add") {
      lines.push(`*** Add File: ${op.path}`);
      const content = op.content.endsWith("\n") ? op.content.slice(0, -1) : op.content;
      for (const line of content.split("\n")) lines.push(`+${line}`);
    } else if (op.op === "delete") {
      lines.push(`*** Delete File: ${op.path}`);
    } else {
      lines.push(`*** Update File: ${op.path}`, "@@");
      for (const line of op.remove) lines.push(`-${line}`);
      for (const line of op.add) lines.push(`+${line}`);
    }
  }
  lines.push("*** End Patch");
  return lines.join("\n");
}

/** The shell command codex recognises as a patch: `apply_patch <<'EOF'\n...\nEOF`. */
export function applyPatchCommand(ops: readonly PatchOp[]): string {
  const body = patchText(ops);
  if (body.split("\n").includes("EOF")) {
    throw new Error("Cannot build apply_patch command: a patch line is exactly EOF");
  }
  return `apply_patch <<'EOF'\n${body}\nEOF`;
}

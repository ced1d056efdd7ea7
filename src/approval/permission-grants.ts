/**
 * What of a permissions request (codex's `item/permissions/requestApproval`: the model's
 * `request_permissions` tool) a policy may grant. The answer widens the sandbox of every later
 * command of the turn, so a file-system grant is a way out of it: `write` on `/` (or on a
 * repository's `.git`, codexd's state, another worktree) undoes every floor the sandbox keeps,
 * and `read` on a denied path hands over the credentials it hides. Only network access is left
 * to the policy's `permissions` decision; anything else in the request, a shape this codex does not
 * send included, is declined whatever the policy says.
 *
 * codex 0.169 does not offer the tool to codexd's threads (its feature is off, pinned off by
 * plan.ts, and the call is "unsupported" under codexd's approval policy even with the feature on):
 * this holds the floor for a codex that does.
 */
import { z } from "zod";

/** The request's network part: `{enabled}` and nothing else. */
const NetworkOnly = z.strictObject({ enabled: z.boolean().nullable().optional() });

/** A file-system part that asks for nothing (absent, null, or every list empty). */
const NoFileSystem = z.union([
  z.null(),
  z.strictObject({
    entries: z.array(z.never()).nullable().optional(),
    read: z.array(z.never()).nullable().optional(),
    write: z.array(z.never()).nullable().optional(),
    globScanMaxDepth: z.number().nullable().optional(),
  }),
]);

const NetworkRequest = z.strictObject({
  network: NetworkOnly.nullable().optional(),
  fileSystem: NoFileSystem.optional(),
});

/**
 * Why the request asks for more than a policy may grant, or undefined when it asks for network
 * access at most.
 */
export function ungrantablePermissions(permissions: unknown): string | undefined {
  if (NetworkRequest.safeParse(permissions).success) return undefined;
  const fileSystem = typeof permissions === "object" && permissions !== null &&
    "fileSystem" in permissions;
  return fileSystem
    ? `file-system access (${preview(permissions)}) would widen the sandbox beyond the worktree`
    : `permissions codexd does not know (${preview(permissions)})`;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

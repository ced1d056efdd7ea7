/**
 * Messages codexd itself delivers to a thread's subscriber, beside codex's own notifications.
 */

/**
 * The notification a thread's subscriber gets for a message of its thread that was too long to
 * read: `{threadId, method?, length, message}`. codexd's own; codex never sends it.
 */
export const DROPPED_MESSAGE = "codexd/messageDropped";

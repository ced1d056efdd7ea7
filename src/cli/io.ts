/**
 * Where a command writes: `out` its output (stdout), `err` its messages (stderr). main.ts hands
 * every command the console; nothing below it writes to the console itself (deno lint no-console).
 */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Polls until `probe` gives a value (anything but undefined), for conditions a test or a fault
 * scenario can only observe from outside (over HTTP, in /proc); throws naming `what` once
 * `limitMs` has passed.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  options: { limitMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.limitMs ?? 20_000);
  while (true) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 25));
  }
}

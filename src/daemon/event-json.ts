/**
 * The JSON text of a stored event, remembered from when the store wrote or read it, so the SSE
 * stream does not serialize every event a second time (a measurable share of a stream's CPU).
 */
const texts = new WeakMap<object, string>();

/** Records `json` as the serialization of `event` (the store calls this). */
export function rememberJson<T extends object>(event: T, json: string): T {
  texts.set(event, json);
  return event;
}

/** The event's JSON: the remembered text, or a fresh serialization. */
export function eventJson(event: object): string {
  return texts.get(event) ?? JSON.stringify(event);
}

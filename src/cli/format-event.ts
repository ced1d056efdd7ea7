/** One line per event, for people: `codexd sessions tail` and `codexd demo`. */

const MAX = 160;

function clip(text: string): string {
  const one = text.replaceAll("\n", "⏎ ");
  return one.length > MAX ? `${one.slice(0, MAX - 1)}…` : one;
}

export function formatEvent(event: { seq?: number; type: string; [key: string]: unknown }): string {
  const seq = event.seq !== undefined ? String(event.seq).padStart(4) : "    ";
  const e = event as Record<string, unknown>;
  const detail = (() => {
    switch (event.type) {
      case "session.started":
        return `thread ${e.threadId} in ${e.cwd}`;
      case "text.delta":
        return JSON.stringify(e.text);
      case "message":
      case "reasoning":
        return clip(String(e.text));
      case "tool.use":
        return `${e.name} ${clip(JSON.stringify(e.input))}`;
      case "tool.result":
        return `${e.isError ? "failed" : "ok"}${
          e.exitCode != null ? ` (exit ${e.exitCode})` : ""
        } ${clip(String(e.output ?? ""))}`;
      case "approval":
        return `${String(e.decision).toUpperCase()} ${e.kind} ${
          clip(String(e.command ?? (e.paths as string[] | undefined)?.join(", ") ?? ""))
        } — ${e.source}${e.ruleId ? `/${e.ruleId}` : ""}: ${e.reason}`;
      case "usage":
        return `in ${e.inputTokens} (cached ${e.cachedInputTokens}) out ${e.outputTokens}`;
      case "system":
        return `${e.subtype}${e.message ? `: ${clip(String(e.message))}` : ""}${
          e.text ? `: ${clip(String(e.text))}` : ""
        }`;
      case "result":
        return clip(String(e.text));
      case "error":
        return `${e.code}: ${e.message}`;
      default:
        return "";
    }
  })();
  return `${seq} ${event.type.padEnd(15)} ${detail}`;
}

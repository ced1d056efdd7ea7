/**
 * Server-sent events of the OpenAI Responses API, as codex 0.169 reads them. Each event is
 * `event: <type>\ndata: <json with the same type>\n\n`.
 */

export interface Usage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningOutputTokens: number;
}

export function sseEvent(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

export function responseCreated(responseId: string): string {
  return sseEvent("response.created", {
    response: { id: responseId, object: "response", status: "in_progress", output: [] },
  });
}

export function messageAdded(itemId: string, outputIndex: number): string {
  return sseEvent("response.output_item.added", {
    output_index: outputIndex,
    item: { type: "message", id: itemId, role: "assistant", status: "in_progress", content: [] },
  });
}

export function textDelta(itemId: string, outputIndex: number, delta: string): string {
  return sseEvent("response.output_text.delta", {
    item_id: itemId,
    output_index: outputIndex,
    content_index: 0,
    delta,
  });
}

export function messageDone(itemId: string, outputIndex: number, text: string): string {
  return sseEvent("response.output_item.done", {
    output_index: outputIndex,
    item: {
      type: "message",
      id: itemId,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text, annotations: [] }],
    },
  });
}

export function functionCallDone(
  itemId: string,
  outputIndex: number,
  call: { callId: string; name: string; arguments: string; namespace?: string },
): string {
  return itemAddedAndDone(outputIndex, {
    type: "function_call",
    id: itemId,
    call_id: call.callId,
    name: call.name,
    ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
    arguments: call.arguments,
    status: "completed",
  });
}

/** A freeform tool call (`custom_tool_call`): its input is raw text, not JSON arguments. */
export function customCallDone(
  itemId: string,
  outputIndex: number,
  call: { callId: string; name: string; input: string; namespace?: string },
): string {
  return itemAddedAndDone(outputIndex, {
    type: "custom_tool_call",
    id: itemId,
    call_id: call.callId,
    name: call.name,
    ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
    input: call.input,
    status: "completed",
  });
}

/** A complete output item: codex reads the call from `done`, and wants `added` first. */
function itemAddedAndDone(outputIndex: number, item: Record<string, unknown>): string {
  return sseEvent("response.output_item.added", { output_index: outputIndex, item }) +
    sseEvent("response.output_item.done", { output_index: outputIndex, item });
}

export function responseCompleted(responseId: string, usage: Usage): string {
  return sseEvent("response.completed", {
    response: {
      id: responseId,
      object: "response",
      status: "completed",
      usage: {
        input_tokens: usage.inputTokens,
        input_tokens_details: { cached_tokens: usage.cachedInputTokens },
        output_tokens: usage.outputTokens,
        output_tokens_details: { reasoning_tokens: usage.reasoningOutputTokens },
        total_tokens: usage.inputTokens + usage.outputTokens,
      },
    },
  });
}

/** Splits `text` into exactly `count` nearly equal parts, or into parts of `size` characters. */
export function splitText(text: string, split: { count?: number; size?: number }): string[] {
  if (text === "") return [];
  const parts: string[] = [];
  if (split.size !== undefined) {
    for (let at = 0; at < text.length; at += split.size) {
      parts.push(text.slice(at, at + split.size));
    }
    return parts;
  }
  const count = Math.min(split.count ?? 1, text.length);
  const base = Math.floor(text.length / count);
  const longer = text.length % count;
  for (let i = 0, at = 0; i < count; i++) {
    const length = base + (i < longer ? 1 : 0);
    parts.push(text.slice(at, at + length));
    at += length;
  }
  return parts;
}

/**
 * Reads what codex sent to `POST /v1/responses`: the conversation (`input`), the offered tools,
 * and the facts a script is matched on (latest user text, its turn index, conversation key).
 */
import { z } from "zod";

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

const InputItem = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content: z.union([z.string(), z.array(ContentPart)]).optional(),
  call_id: z.string().optional(),
});
export type InputItem = z.infer<typeof InputItem>;

const Tool = z.looseObject({ type: z.string(), name: z.string().optional() });

export const ResponsesRequestBody = z.looseObject({
  model: z.string(),
  input: z.array(InputItem),
  tools: z.array(Tool).default([]),
  stream: z.boolean().optional(),
  prompt_cache_key: z.string().optional(),
});
export type ResponsesRequestBody = z.infer<typeof ResponsesRequestBody>;

/**
 * codex puts context it generates itself into user-role messages (environment context, AGENTS.md
 * instructions, notes about aborted turns). They are not what the user typed, so they neither
 * match markers nor count as turns.
 */
const CONTEXT_PREFIXES = [
  "<environment_context>",
  "<user_instructions>",
  "# AGENTS.md instructions",
  "<turn_aborted>",
  "<user_shell_command>",
  "<skills_instructions>",
  "<permissions instructions>",
];

export function itemText(item: InputItem): string {
  if (typeof item.content === "string") return item.content;
  return (item.content ?? []).map((part) => part.text ?? "").join("");
}

function isTypedUserMessage(item: InputItem): boolean {
  if (item.role !== "user" || (item.type !== undefined && item.type !== "message")) return false;
  const text = itemText(item).trimStart();
  return !CONTEXT_PREFIXES.some((prefix) => text.startsWith(prefix));
}

export interface ConversationFacts {
  /** Text of the latest user-typed message ("" if none). */
  latestUserText: string;
  /** 0-based index of that message among the user-typed messages (-1 if none). */
  turn: number;
  /** Type of the last input item (`function_call_output` means a tool result came back). */
  lastItemType: string;
  /** Names of the offered tools (function tools by name, others by type). */
  toolNames: string[];
}

export function conversationFacts(body: ResponsesRequestBody): ConversationFacts {
  const users = body.input.filter(isTypedUserMessage);
  const latest = users.at(-1);
  const last = body.input.at(-1);
  return {
    latestUserText: latest ? itemText(latest) : "",
    turn: users.length - 1,
    lastItemType: last?.type ?? (last?.role ? "message" : "none"),
    toolNames: body.tools.map((tool) => tool.name ?? tool.type),
  };
}

/** A model's `exec_command` call as codex 0.169 shows it (raw item, rollout line's payload). */
export function functionCallItem(args: Record<string, unknown>, callId = "call_1") {
  return {
    type: "function_call",
    status: "completed",
    id: "fc_1",
    name: "exec_command",
    arguments: JSON.stringify(args),
    call_id: callId,
  };
}

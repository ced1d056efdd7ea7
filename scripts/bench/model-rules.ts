/** The scripted model's rules every bench model serves (in its own process or the bench's). */
import { streamRule } from "./throughput.ts";

/** Turns whose prompt holds this take `SLOW_MS` before answering `SLOW_ANSWER`. */
export const SLOW_MARKER = "BENCH_SLOW";
export const SLOW_MS = 1000;
export const SLOW_ANSWER = "slow turn done";

export function slowRule() {
  return {
    marker: SLOW_MARKER,
    rounds: [[
      { type: "delay" as const, ms: SLOW_MS },
      { type: "message" as const, text: SLOW_ANSWER },
    ]],
  };
}

export function benchRules() {
  return [streamRule(), slowRule()];
}

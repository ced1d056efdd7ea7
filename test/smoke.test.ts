import { expect, test } from "bun:test";
import { Spec } from "../src/provider/spec.ts";

test("Spec rejects a relative cwd, naming the field", () => {
  const result = Spec.safeParse({ prompt: "hi", cwd: "relative/dir" });
  expect(result.success).toBe(false);
  expect(result.error?.issues[0]?.path).toEqual(["cwd"]);
});

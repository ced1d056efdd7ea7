import { expect, test } from "bun:test";
import { isWithin } from "../src/paths.ts";

test("isWithin: the folder itself and what lies inside it, by path segments", () => {
  expect(isWithin("/a/b", "/a")).toBe(true);
  expect(isWithin("/a", "/a")).toBe(true);
  expect(isWithin("/a/", "/a")).toBe(true);
  expect(isWithin("/ab", "/a")).toBe(false);
  expect(isWithin("/a", "/a/b")).toBe(false);
  expect(isWithin("/x", "/")).toBe(true);
  expect(isWithin("/a/..b", "/a")).toBe(true); // a folder named "..b", not a parent
});

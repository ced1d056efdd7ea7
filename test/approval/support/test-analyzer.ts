/** The analyzer tests of shipped policies run with. */
import type { ShellAnalyzer } from "../../../src/approval/analyzer.ts";
import { fakeAnalyzer } from "./fake-analyzer.ts";

export function testAnalyzer(): Promise<ShellAnalyzer> {
  return Promise.resolve(fakeAnalyzer);
}

/**
 * Notifications codex sent a session that codexd did not journal are counted per method in
 * `/metrics` (issue 10, finding 14): before, the handle counted them where nobody read them.
 */
import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { createApp } from "../../src/daemon/app.ts";
import { createDaemonMetrics } from "../../src/daemon/metrics.ts";
import { unhandledNotifications } from "../../src/provider/codex/event-map.ts";
import { CodexHandle } from "../../src/provider/codex/handle.ts";
import { Spec } from "../../src/provider/spec.ts";
import { FakeService } from "./fake-service.ts";

const TOKEN = "test-token-123";

test("/metrics counts the notifications a session got but codexd did not journal, per method", async () => {
  unhandledNotifications.reset();
  const handle = new CodexHandle({
    sessionId: "s1",
    threadId: "th1",
    spec: Spec.parse({ prompt: "p", cwd: tmpdir() }),
    rpc: { request: () => Promise.resolve({ turn: { id: "turn-1" } } as never) },
    approver: { decide: () => Promise.resolve({ decision: "allow", source: "t", reason: "t" }) },
  });
  // Notifications of the 0.169 schema codexd does not map, and a mapped one with bad params.
  for (const method of ["hook/started", "hook/started", "thread/settings/updated"]) {
    handle.onNotification(method, { threadId: "th1" });
  }
  handle.onNotification("model/rerouted", { threadId: "th1", turnId: "t" });
  // Quiet ones are deliberate, not counted.
  handle.onNotification("thread/status/changed", { threadId: "th1", status: { type: "idle" } });

  const metrics = createDaemonMetrics({
    unhandledNotifications: () => unhandledNotifications.entries(),
  });
  const app = createApp({ service: new FakeService(), token: TOKEN, metrics });
  const res = await app.request("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toContain("# TYPE codexd_codex_notifications_unhandled_total counter");
  expect(text).toContain(
    'codexd_codex_notifications_unhandled_total{method="hook/started",reason="unknown"} 2',
  );
  expect(text).toContain(
    'codexd_codex_notifications_unhandled_total{method="thread/settings/updated",reason="unknown"} 1',
  );
  expect(text).toContain(
    'codexd_codex_notifications_unhandled_total{method="model/rerouted",reason="invalid"} 1',
  );
  expect(text).not.toContain('method="thread/status/changed"');
  // A scrape reads the tally; it does not add to it.
  const again = await (await app.request("/metrics", {
    headers: { authorization: `Bearer ${TOKEN}` },
  })).text();
  expect(again).toContain(
    'codexd_codex_notifications_unhandled_total{method="hook/started",reason="unknown"} 2',
  );
});

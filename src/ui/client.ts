/**
 * The console's only script, run in the browser. It is written here as one self-contained
 * function (type-checked with the rest of the sources, no outside names: `visibleText`, the one
 * helper it shares with the server's pages, is passed in as source text too) and served as its
 * source text from `/ui/static/app-<hash>.js`, so it lives inside the compiled binary like any
 * other module and needs no bundler, CDN or network. Every page works without it (forms post and
 * redirect back); with it:
 *
 * - action forms (`form[data-action]`) post with `fetch`, sending the CSRF token in a header, and
 *   report in the page's status region without leaving the page (so a live stream keeps going);
 * - `[data-refresh-url]` regions (pending approvals) are re-fetched every few seconds and
 *   replaced when their `data-key` changed, keeping keyboard focus where it was;
 * - `time[data-deadline]` counts down the time left before an ask times out;
 * - `#timeline[data-events-url]` follows a session's event stream over SSE (EventSource replays
 *   from the last `id:` on reconnect) and renders each event with `textContent` only.
 *
 * The browser's objects are typed by the few interfaces below rather than TypeScript's `dom`
 * library, which would change the global types every other module is checked against.
 */

import { visibleText } from "./visible-text.ts";

/** The part of a DOM element the script uses. */
export interface Elem {
  readonly tagName: string;
  id: string;
  className: string;
  textContent: string | null;
  hidden: boolean;
  disabled?: boolean;
  /** Forms: where they post; meta: their content. */
  readonly action?: string;
  readonly content?: string;
  readonly dataset: Record<string, string | undefined>;
  readonly classList: { toggle(name: string, force?: boolean): void };
  append(...nodes: Array<Elem | string>): void;
  remove(): void;
  replaceWith(node: Elem): void;
  focus(): void;
  reset?(): void;
  setAttribute(name: string, value: string): void;
  querySelector(selector: string): Elem | null;
  querySelectorAll(selector: string): Iterable<Elem>;
  addEventListener(type: string, listener: (event: BrowserEvent) => void): void;
}
interface BrowserEvent {
  readonly target: Elem | null;
  readonly submitter?: Elem | null;
  readonly data?: string;
  preventDefault(): void;
}
interface Doc {
  readonly body: Elem & { readonly scrollHeight: number };
  readonly activeElement: Elem | null;
  getElementById(id: string): Elem | null;
  querySelector(selector: string): Elem | null;
  querySelectorAll(selector: string): Iterable<Elem>;
  createElement(tag: string): Elem;
  importNode(node: Elem, deep: boolean): Elem;
  addEventListener(type: string, listener: (event: BrowserEvent) => void): void;
}
interface EventStream {
  readonly readyState: number;
  addEventListener(type: string, listener: (event: BrowserEvent) => void): void;
  close(): void;
}
/** The browser's globals the script uses. */
export interface BrowserGlobals {
  document: Doc;
  DOMParser: new () => { parseFromString(text: string, type: string): Doc };
  EventSource: new (url: string) => EventStream;
  FormData: new (form: Elem, submitter?: Elem | null) => Iterable<[string, unknown]>;
  innerHeight: number;
  scrollY: number;
  scrollTo(x: number, y: number): void;
}

export function consoleClient(visible: (text: string) => string): void {
  const browser = globalThis as unknown as BrowserGlobals;
  const document = browser.document;
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? "";
  const flash = document.getElementById("flash");

  function say(message: string, isError: boolean): void {
    if (!flash) return;
    flash.textContent = message;
    flash.classList.toggle("error", isError);
    flash.hidden = false;
  }

  // -- time left before an ask's deadline -------------------------------------------------------
  function timeLeft(deadline: number): string {
    const seconds = Math.max(0, Math.round((deadline - Date.now()) / 1000));
    if (seconds === 0) return "timed out";
    const m = Math.floor(seconds / 60);
    const s = seconds % 60;
    return m > 0 ? `${m} min ${s} s left` : `${s} s left`;
  }
  function tick(): void {
    for (const el of document.querySelectorAll("time[data-deadline]")) {
      const deadline = Date.parse(el.dataset.deadline ?? "");
      if (!Number.isNaN(deadline)) el.textContent = timeLeft(deadline);
    }
  }
  setInterval(tick, 1000);
  tick();

  // -- regions refreshed from the server ---------------------------------------------------------
  async function refresh(region: Elem): Promise<void> {
    const url = region.dataset.refreshUrl;
    if (!url) return;
    const response = await fetch(url, { headers: { accept: "text/html" } });
    if (!response.ok) return;
    const doc = new browser.DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = doc.getElementById(region.id);
    if (!fresh || fresh.dataset.key === region.dataset.key) return;
    const focused = document.activeElement?.id;
    region.replaceWith(document.importNode(fresh, true));
    const again = focused ? document.getElementById(focused) : null;
    again?.focus();
    tick();
  }
  function refreshAll(): void {
    for (const region of document.querySelectorAll("[data-refresh-url]")) {
      void refresh(region).catch(() => {});
    }
  }
  if (document.querySelector("[data-refresh-url]")) setInterval(refreshAll, 2000);

  // -- action forms --------------------------------------------------------------------------
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form || form.tagName !== "FORM" || form.dataset.action === undefined) return;
    event.preventDefault();
    const submitter = event.submitter?.tagName === "BUTTON" ? event.submitter : null;
    const body = new URLSearchParams();
    for (const [key, value] of new browser.FormData(form, submitter)) {
      if (typeof value === "string") body.append(key, value);
    }
    for (const button of form.querySelectorAll("button")) button.disabled = true;
    void fetch(form.action ?? "", {
      method: "POST",
      body,
      headers: { accept: "application/json", "x-csrf-token": csrf },
    }).then(async (response) => {
      const answer = await response.json().catch(() => ({})) as {
        message?: string;
        error?: { message?: string };
      };
      if (response.ok) {
        say(answer.message ?? "Done.", false);
        if (form.dataset.reset !== undefined) form.reset?.();
      } else {
        say(answer.error?.message ?? `Refused (${response.status})`, true);
      }
    }).catch((error: unknown) => say(`Request failed: ${String(error)}`, true))
      .finally(() => {
        for (const button of form.querySelectorAll("button")) button.disabled = false;
        refreshAll();
      });
  });

  // -- a session's live event stream -----------------------------------------------------------
  const timeline = document.getElementById("timeline");
  const eventsUrl = timeline?.dataset.eventsUrl;
  if (!timeline || !eventsUrl) return;

  type Ev = { seq: number; type: string; ts: string; [key: string]: unknown };
  const statusEl = document.getElementById("session-status");
  const usageEl = document.getElementById("session-usage");
  const streamState = document.getElementById("stream-state");
  const tools = new Map<string, Elem>();
  let streaming: Elem | undefined;
  let lastMessage = "";
  let lastSeq = 0;

  const text = (value: unknown): string =>
    typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);
  function el(tag: string, className: string, content?: string): Elem {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined) node.textContent = content;
    return node;
  }
  function item(e: Ev, kind: string, title: string): Elem {
    const li = el("li", `ev ev-${kind}`);
    li.dataset.seq = String(e.seq);
    li.dataset.type = e.type;
    const head = el("div", "ev-head");
    head.append(el("span", "ev-title", title));
    const time = el("time", "ev-time", new Date(e.ts).toLocaleTimeString());
    time.setAttribute("datetime", e.ts);
    head.append(time);
    li.append(head);
    timeline!.append(li);
    return li;
  }
  function setStatus(status: string): void {
    if (statusEl) {
      statusEl.textContent = status;
      statusEl.className = `status status-${status}`;
    }
  }

  function render(e: Ev): void {
    switch (e.type) {
      case "session.started":
        item(e, "system", `Session started · model ${text(e.model) || "default"}`).append(
          el("p", "muted", text(e.cwd)),
        );
        break;
      case "turn.started":
        setStatus("running");
        item(e, "turn", "Turn started");
        break;
      case "text.delta": {
        if (!streaming) {
          streaming = item(e, "message streaming", "Assistant (streaming)");
          streaming.append(el("p", "text"));
        }
        const p = streaming.querySelector(".text");
        if (p) p.textContent += text(e.text);
        break;
      }
      case "message": {
        streaming?.remove();
        streaming = undefined;
        lastMessage = text(e.text);
        item(e, "message", "Assistant").append(el("p", "text", lastMessage));
        break;
      }
      case "reasoning": {
        const details = el("details", "");
        details.append(el("summary", "", "Reasoning"), el("p", "text", text(e.text)));
        item(e, "reasoning", "Reasoning").append(details);
        break;
      }
      case "tool.use": {
        const input = (e.input ?? {}) as Record<string, unknown>;
        let li: Elem;
        if (e.name === "command") {
          li = item(e, "command", "Command");
          li.append(el("pre", "cmd", `$ ${visible(text(input.command))}`));
        } else if (e.name === "file_change") {
          li = item(e, "files", "File change");
          const list = el("ul", "paths");
          const changes = Array.isArray(input.changes) ? input.changes : [];
          for (const change of changes as Array<Record<string, unknown>>) {
            const moved = change.movePath ? ` → ${text(change.movePath)}` : "";
            list.append(
              el("li", "", visible(`${text(change.kind)} ${text(change.path)}${moved}`)),
            );
          }
          li.append(list);
        } else {
          li = item(e, "tool", `Tool ${text(e.name)}`);
          li.append(el("pre", "cmd", text(e.input)));
        }
        tools.set(text(e.toolId), li);
        break;
      }
      case "tool.result": {
        const target = tools.get(text(e.toolId)) ?? item(e, "tool", "Tool result");
        const exit = e.exitCode === undefined || e.exitCode === null ? "" : ` · exit ${e.exitCode}`;
        target.append(
          el("p", e.isError ? "outcome bad" : "outcome", `${e.isError ? "Failed" : "Done"}${exit}`),
        );
        if (text(e.output)) target.append(el("pre", "output", text(e.output)));
        break;
      }
      case "approval": {
        const allowed = e.decision === "allow";
        const li = item(
          e,
          allowed ? "approval allowed" : "approval denied",
          `${allowed ? "Allowed" : "Denied"} ${text(e.kind)}`,
        );
        const what = e.command !== undefined
          ? `$ ${text(e.command)}`
          : Array.isArray(e.paths)
          ? (e.paths as unknown[]).map(text).join("\n")
          : text(e.tool);
        li.append(el("pre", "cmd", visible(what)));
        const rule = e.ruleId ? `rule ${text(e.ruleId)}` : "no rule";
        li.append(el("p", "why", `${rule} (${text(e.source)}): ${text(e.reason)}`));
        break;
      }
      case "usage":
        if (usageEl) {
          const total = Number(e.inputTokens ?? 0) + Number(e.outputTokens ?? 0);
          usageEl.textContent = `last response: ${total} tokens (in ${text(e.inputTokens)}, out ${
            text(e.outputTokens)
          })`;
        }
        break;
      case "result": {
        setStatus("idle");
        streaming = undefined;
        const li = item(e, "result", `Result · ${text(e.turnStatus)}`);
        // The final answer is usually the message just shown: say so rather than repeat it.
        li.append(
          text(e.text) === lastMessage
            ? el("p", "muted", "The turn ended with the answer above.")
            : el("p", "text", text(e.text)),
        );
        lastMessage = "";
        break;
      }
      case "error":
        streaming = undefined;
        item(e, "error", `Error · ${text(e.code)}`).append(el("p", "text", text(e.message)));
        break;
      case "system": {
        const subtype = text(e.subtype);
        if (subtype === "user_prompt") {
          item(e, "prompt", e.steer ? "Steered" : "Prompt").append(el("p", "text", text(e.text)));
        } else if (subtype === "approval_denied") {
          // The approval event above already says it.
        } else {
          if (subtype === "session_stopped") setStatus("stopped");
          const li = item(e, "system", subtype.replaceAll("_", " "));
          const detail = e.message ?? e.reason ?? e.text;
          if (detail !== undefined) li.append(el("p", "muted", text(detail)));
        }
        break;
      }
      default:
        item(e, "system", e.type);
    }
  }

  const source = new browser.EventSource(eventsUrl);
  const onEvent = (message: BrowserEvent) => {
    const e = JSON.parse(message.data ?? "{}") as Ev;
    if (e.seq <= lastSeq) return;
    lastSeq = e.seq;
    const atBottom = browser.innerHeight + browser.scrollY >= document.body.scrollHeight - 40;
    render(e);
    timeline.dataset.lastSeq = String(lastSeq);
    if (atBottom && timeline.dataset.follow !== "off") {
      browser.scrollTo(0, document.body.scrollHeight);
    }
  };
  for (
    const type of [
      "session.started",
      "turn.started",
      "text.delta",
      "message",
      "reasoning",
      "tool.use",
      "tool.result",
      "approval",
      "policy.shadow",
      "usage",
      "system",
      "result",
      "error",
    ]
  ) source.addEventListener(type, onEvent);
  source.addEventListener("open", () => {
    if (streamState) streamState.textContent = "Live: connected";
  });
  source.addEventListener("error", () => {
    if (!streamState) return;
    const stopped = statusEl?.textContent === "stopped" || statusEl?.textContent === "failed";
    if (stopped) {
      source.close();
      streamState.textContent = "Stream ended: the session is stopped";
    } else {
      streamState.textContent = "Live: reconnecting…";
    }
  });
}

/** The script as served: the function's source, called once the document is parsed. */
export const CLIENT_SCRIPT =
  `"use strict";\n(${consoleClient.toString()})(${visibleText.toString()});\n`;

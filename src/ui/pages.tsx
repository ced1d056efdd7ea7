/** @jsxImportSource hono/jsx */
/**
 * The console's pages, rendered on the server with hono/jsx (every interpolated value is escaped
 * by JSX). Pages get plain data and render it; they fetch nothing themselves, so a page costs one
 * read of the service however many rows it shows.
 */
import type { Child, FC } from "hono/jsx";
import type { z } from "@hono/zod-openapi";
import type * as S from "../api/schemas.ts";
import { SCRIPT, STYLESHEET } from "./static.ts";
import { visibleText } from "./visible-text.ts";

export type Session = z.output<typeof S.SessionInfo>;
export type Pending = z.output<typeof S.PendingApproval>;
export type Decision = z.output<typeof S.ApprovalDecisionRecord>;
export type Policy = z.output<typeof S.PolicySummary>;
export type Evaluation = z.output<typeof S.EvaluateResult>;

export type Nav = "sessions" | "approvals" | "policies" | "budgets" | "none";

/** Messages shown after an action, by the code a redirect carries (never free text from a URL). */
export const NOTICES: Record<string, string> = {
  allow: "Allowed: the command or change goes ahead.",
  deny: "Denied: codex was told no.",
  interrupt: "Interrupt requested.",
  steer: "Steering message sent.",
  turn: "Follow-up turn sent.",
  stop: "Session stopped.",
  reload: "Policies reloaded.",
};

// ---------------------------------------------------------------------------------------------
// Formatting

/** `2026-01-02 03:04:05 UTC` */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function timeLeft(deadline: string, now: number): string {
  const seconds = Math.max(0, Math.round((Date.parse(deadline) - now) / 1000));
  if (seconds === 0) return "timed out";
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return m > 0 ? `${m} min ${s} s left` : `${s} s left`;
}

const number = new Intl.NumberFormat("en-US");
export const n = (value: number): string => number.format(value);

const Time: FC<{ iso: string | null | undefined }> = ({ iso }) =>
  iso ? <time datetime={iso}>{when(iso)}</time> : <span class="muted">—</span>;

const Status: FC<{ status: string; id?: string }> = ({ status, id }) => (
  <span class={`status status-${status}`} id={id}>{status}</span>
);

// ---------------------------------------------------------------------------------------------
// Layout

export interface LayoutProps {
  title: string;
  nav: Nav;
  /** The session's CSRF token; absent on pages shown before signing in. */
  csrf?: string;
  pendingCount?: number;
  notice?: string;
  error?: string;
  children?: Child;
}

const NAV: Array<[Exclude<Nav, "none">, string, string]> = [
  ["sessions", "/ui", "Sessions"],
  ["approvals", "/ui/approvals", "Approvals"],
  ["policies", "/ui/policies", "Policies"],
  ["budgets", "/ui/budgets", "Budgets"],
];

export const Layout: FC<LayoutProps> = (props) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      {props.csrf && <meta name="csrf-token" content={props.csrf} />}
      <title>{props.title} · codexd</title>
      <link rel="stylesheet" href={STYLESHEET.path} />
      {props.csrf && <script src={SCRIPT.path} defer></script>}
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href="/ui">codexd console</a>
        {props.csrf && (
          <nav aria-label="Console">
            <ul>
              {NAV.map(([key, href, label]) => (
                <li>
                  <a href={href} aria-current={props.nav === key ? "page" : undefined}>
                    {label}
                    {key === "approvals" && (props.pendingCount ?? 0) > 0 && (
                      <>
                        {" "}
                        <span class="badge" aria-label={`${props.pendingCount} waiting`}>
                          {props.pendingCount}
                        </span>
                      </>
                    )}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
        {props.csrf && (
          <form method="post" action="/ui/logout">
            <input type="hidden" name="_csrf" value={props.csrf} />
            <button type="submit">Sign out</button>
          </form>
        )}
      </header>
      <main id="main" tabindex={-1}>
        <div
          id="flash"
          class={props.error ? "flash error" : "flash"}
          role="status"
          aria-live="polite"
          hidden={!props.notice && !props.error}
        >
          {props.error ?? props.notice}
        </div>
        {props.children}
      </main>
    </body>
  </html>
);

/** A form posting a state change: the CSRF token and where to come back to ride along. */
const ActionForm: FC<{
  action: string;
  csrf: string;
  back: string;
  class?: string;
  reset?: boolean;
  label?: string;
  children?: Child;
}> = (props) => (
  <form
    method="post"
    action={props.action}
    class={props.class}
    data-action=""
    data-reset={props.reset ? "" : undefined}
    aria-label={props.label}
  >
    <input type="hidden" name="_csrf" value={props.csrf} />
    <input type="hidden" name="back" value={props.back} />
    {props.children}
  </form>
);

// ---------------------------------------------------------------------------------------------
// Signed out

export const SignInPage: FC<{ reason: "none" | "used" }> = ({ reason }) => (
  <Layout title="Sign in" nav="none">
    <h1>Sign in to the codexd console</h1>
    {reason === "used"
      ? <p>This login link was already used or has expired: each link works once, for a minute.</p>
      : <p>You are not signed in, or your console session ended.</p>}
    <p>
      On the machine running codexd, run <code>codexd ui</code>{" "}
      (it reads the API token from the state dir) and open the one-time link it prints. The link
      sets a cookie for this browser; the API token itself never reaches the browser.
    </p>
    <p>
      <a href="/ui">Try again</a>
    </p>
  </Layout>
);

export const ErrorPage: FC<{ status: number; message: string; csrf?: string }> = (props) => (
  <Layout title={`Error ${props.status}`} nav="none" csrf={props.csrf}>
    <h1>Error {props.status}</h1>
    <p>{props.message}</p>
    <p>
      <a href="/ui">Back to the sessions</a>
    </p>
  </Layout>
);

// ---------------------------------------------------------------------------------------------
// Sessions

export interface SessionsPageProps {
  csrf: string;
  pendingCount: number;
  notice?: string;
  sessions: Session[];
  total: number;
  filter: { status: string; fleet: string };
  statuses: readonly string[];
  fleets: string[];
}

export const SessionsPage: FC<SessionsPageProps> = (props) => (
  <Layout
    title="Sessions"
    nav="sessions"
    csrf={props.csrf}
    pendingCount={props.pendingCount}
    notice={props.notice}
  >
    <h1>Sessions</h1>
    <form method="get" action="/ui" class="filters" aria-label="Filter sessions">
      <label>
        Status
        <select name="status" id="filter-status">
          <option value="" selected={props.filter.status === ""}>any</option>
          {props.statuses.map((s) => (
            <option value={s} selected={props.filter.status === s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        Fleet
        <select name="fleet" id="filter-fleet">
          <option value="" selected={props.filter.fleet === ""}>any</option>
          {props.fleets.map((f) => (
            <option value={f} selected={props.filter.fleet === f}>{f}</option>
          ))}
        </select>
      </label>
      <button type="submit">Filter</button>
      {(props.filter.status || props.filter.fleet) && <a href="/ui">Clear filters</a>}
    </form>
    <table id="sessions">
      <caption>
        {props.sessions.length === props.total
          ? `${n(props.total)} sessions, newest first`
          : `${n(props.sessions.length)} of ${n(props.total)} sessions, newest first`}
      </caption>
      <thead>
        <tr>
          <th scope="col">Session</th>
          <th scope="col">Status</th>
          <th scope="col">Fleet</th>
          <th scope="col">Worktree</th>
          <th scope="col">Current turn</th>
          <th scope="col" class="num">Tokens in / out</th>
          <th scope="col">Last event</th>
        </tr>
      </thead>
      <tbody>
        {props.sessions.map((s) => (
          <tr data-session={s.sessionId}>
            <th scope="row">
              <a href={`/ui/sessions/${encodeURIComponent(s.sessionId)}`}>{s.sessionId}</a>
            </th>
            <td>
              <Status status={s.status} />
            </td>
            <td>{s.policy}</td>
            <td class="path">{s.cwd}</td>
            <td>
              {s.currentTurn
                ? (
                  <>
                    since <Time iso={s.currentTurn.startedAt} />
                  </>
                )
                : <span class="muted">none</span>}
              {s.queuedTurns > 0 && <span class="muted">{` (+${s.queuedTurns} queued)`}</span>}
            </td>
            <td class="num">
              {n(s.usage.inputTokens)} / {n(s.usage.outputTokens)}
            </td>
            <td>
              <Time iso={s.lastEventAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
    {props.sessions.length === 0 && <p>No sessions match.</p>}
  </Layout>
);

// ---------------------------------------------------------------------------------------------
// Approvals (one card per pending ask)

function pendingKey(pending: Pending[]): string {
  return pending.map((p) => p.requestId).join(" ");
}

const PendingCard: FC<{ p: Pending; csrf: string; back: string; now: number }> = (
  { p, csrf, back, now },
) => {
  const what = visibleText(
    p.request.command !== undefined
      ? `$ ${p.request.command}`
      : p.request.paths
      ? p.request.paths.join("\n")
      : [p.request.server, p.request.tool].filter(Boolean).join(" / "),
  );
  const id = `ask-${p.requestId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return (
    <li class="card" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>
        {p.request.kind === "command" ? "Command" : p.request.kind}{" "}
        <span class="muted">
          in <a href={`/ui/sessions/${encodeURIComponent(p.sessionId)}`}>{p.sessionId}</a> · fleet
          {" "}
          {p.policy}
        </span>
      </h3>
      <pre id={`${id}-what`}>{what}</pre>
      <p>
        Rule <code>{p.ruleId ?? "default"}</code>: {p.reason}
      </p>
      <p>
        Waiting since <Time iso={p.since} />;{" "}
        <strong>
          <time data-deadline={p.deadline} datetime={p.deadline}>{timeLeft(p.deadline, now)}</time>
        </strong>{" "}
        before it is declined.
      </p>
      <ActionForm
        action={`/ui/sessions/${encodeURIComponent(p.sessionId)}/approvals/${
          encodeURIComponent(p.requestId)
        }`}
        csrf={csrf}
        back={back}
        class="actions"
        label={`Answer ${p.requestId}`}
      >
        <button
          type="submit"
          name="decision"
          value="allow"
          class="allow"
          id={`${id}-allow`}
          aria-describedby={`${id}-what`}
        >
          Allow
        </button>
        <button
          type="submit"
          name="decision"
          value="deny"
          class="deny"
          id={`${id}-deny`}
          aria-describedby={`${id}-what`}
        >
          Deny
        </button>
      </ActionForm>
    </li>
  );
};

export const PendingList: FC<
  { pending: Pending[]; csrf: string; back: string; now: number; refreshUrl: string }
> = (props) => (
  <section
    id="pending"
    aria-labelledby="pending-title"
    data-refresh-url={props.refreshUrl}
    data-key={pendingKey(props.pending)}
  >
    <h2 id="pending-title">Waiting for you ({props.pending.length})</h2>
    {props.pending.length === 0 ? <p class="muted">No approval is waiting.</p> : (
      <ul class="cards">
        {props.pending.map((p) => (
          <PendingCard p={p} csrf={props.csrf} back={props.back} now={props.now} />
        ))}
      </ul>
    )}
  </section>
);

export interface ApprovalsPageProps {
  csrf: string;
  notice?: string;
  pending: Pending[];
  now: number;
}

export const ApprovalsPage: FC<ApprovalsPageProps> = (props) => (
  <Layout
    title="Approvals"
    nav="approvals"
    csrf={props.csrf}
    pendingCount={props.pending.length}
    notice={props.notice}
  >
    <h1>Pending approvals</h1>
    <p class="muted">
      Commands and file changes an <code>ask</code>{" "}
      rule holds for a person, across all sessions, oldest first. An ask nobody answers is declined
      when its policy's <code>askTimeout</code> runs out.
    </p>
    <PendingList
      pending={props.pending}
      csrf={props.csrf}
      back="/ui/approvals"
      now={props.now}
      refreshUrl="/ui/approvals"
    />
  </Layout>
);

// ---------------------------------------------------------------------------------------------
// One session

export interface SessionPageProps {
  csrf: string;
  pendingCount: number;
  notice?: string;
  session: Session;
  pending: Pending[];
  decisions: Decision[];
  now: number;
}

export const SessionPage: FC<SessionPageProps> = ({ session: s, ...props }) => {
  const base = `/ui/sessions/${encodeURIComponent(s.sessionId)}`;
  return (
    <Layout
      title={`Session ${s.sessionId}`}
      nav="sessions"
      csrf={props.csrf}
      pendingCount={props.pendingCount}
      notice={props.notice}
    >
      <h1>
        Session <code>{s.sessionId}</code>
      </h1>
      <div class="layout">
        <section aria-labelledby="timeline-title">
          <h2 id="timeline-title">Events</h2>
          <p id="stream-state" class="muted" role="status">
            Live stream needs JavaScript; the facts on the right are as of loading this page.
          </p>
          <ol id="timeline" class="timeline" data-events-url={`${base}/events`}></ol>
        </section>
        <aside aria-label="Session facts and controls">
          <h2>Facts</h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <Status status={s.status} id="session-status" />
              {s.failure && <span class="muted">{` (${s.failure})`}</span>}
            </dd>
            <dt>Fleet</dt>
            <dd>{s.policy}</dd>
            <dt>Worktree</dt>
            <dd>
              <code>{s.cwd}</code>
            </dd>
            <dt>Model</dt>
            <dd>{s.model ?? "default"}</dd>
            <dt>Mode</dt>
            <dd>{s.permissionMode}</dd>
            <dt>Created</dt>
            <dd>
              <Time iso={s.createdAt} />
            </dd>
            <dt>Current turn</dt>
            <dd>
              {s.currentTurn ? <Time iso={s.currentTurn.startedAt} /> : "none"}
              {s.queuedTurns > 0 && ` (+${s.queuedTurns} queued)`}
            </dd>
            <dt>Tokens</dt>
            <dd>
              in {n(s.usage.inputTokens)} (cached {n(s.usage.cachedInputTokens)}), out{" "}
              {n(s.usage.outputTokens)} (reasoning {n(s.usage.reasoningTokens)})
              <br />
              <span id="session-usage" class="muted"></span>
            </dd>
            <dt>Environment</dt>
            <dd>
              {s.envKeys.length === 0 ? <span class="muted">none</span> : s.envKeys.map((k) => (
                <>
                  <code>{k}=[redacted]</code>
                  {" "}
                </>
              ))}
            </dd>
          </dl>
          <h2>Controls</h2>
          <div class="controls">
            <ActionForm action={`${base}/inject`} csrf={props.csrf} back={base} reset>
              <label>
                Steer the running turn
                <textarea name="text" id="steer-text" required></textarea>
              </label>
              <button type="submit">Steer</button>
            </ActionForm>
            <ActionForm action={`${base}/turns`} csrf={props.csrf} back={base} reset>
              <label>
                Follow-up prompt (queued while a turn runs)
                <textarea name="prompt" id="turn-prompt" required></textarea>
              </label>
              <button type="submit">Send turn</button>
            </ActionForm>
            <div class="row">
              <ActionForm action={`${base}/interrupt`} csrf={props.csrf} back={base}>
                <button type="submit">Interrupt</button>
              </ActionForm>
              <ActionForm action={`${base}/stop`} csrf={props.csrf} back={base}>
                <button type="submit" class="danger">Stop session</button>
              </ActionForm>
            </div>
          </div>
          <PendingList
            pending={props.pending}
            csrf={props.csrf}
            back={base}
            now={props.now}
            refreshUrl={base}
          />
          <h2>Decisions</h2>
          {props.decisions.length === 0
            ? <p class="muted">No command or change judged yet.</p>
            : (
              <table id="decisions">
                <caption>What the approval bridge decided, in order</caption>
                <thead>
                  <tr>
                    <th scope="col">Request</th>
                    <th scope="col">Decision</th>
                    <th scope="col">Rule</th>
                  </tr>
                </thead>
                <tbody>
                  {props.decisions.map((d) => (
                    <tr>
                      <td>
                        <code>
                          {visibleText(d.command ?? d.paths?.join(", ") ?? d.kind)}
                        </code>
                      </td>
                      <td class={d.decision === "deny" ? "status-failed" : "status-idle"}>
                        {d.decision}
                      </td>
                      <td>
                        <code>{d.ruleId ?? "—"}</code>
                        <div class="why">{d.reason}</div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
        </aside>
      </div>
    </Layout>
  );
};

// ---------------------------------------------------------------------------------------------
// Policies

export interface PoliciesPageProps {
  csrf: string;
  pendingCount: number;
  notice?: string;
  policies: Policy[];
  form: { policy: string; command: string; paths: string; cwd: string };
  result?: Evaluation;
  formError?: string;
}

export const PoliciesPage: FC<PoliciesPageProps> = (props) => (
  <Layout
    title="Policies"
    nav="policies"
    csrf={props.csrf}
    pendingCount={props.pendingCount}
    notice={props.notice}
  >
    <h1>Policies</h1>
    <table id="policies">
      <caption>Loaded fleet policies; the version is a hash of the file as loaded</caption>
      <thead>
        <tr>
          <th scope="col">Fleet</th>
          <th scope="col">Version</th>
          <th scope="col">Mode</th>
          <th scope="col">Default</th>
          <th scope="col">Bypass allowed</th>
          <th scope="col">File</th>
        </tr>
      </thead>
      <tbody>
        {props.policies.map((p) => (
          <tr>
            <th scope="row">{p.name}</th>
            <td>
              <code>{p.version}</code>
              {p.stale && <span class="muted">(stale: the file failed to reload)</span>}
            </td>
            <td>{p.mode}{p.shadows && ` of ${p.shadows}`}</td>
            <td>{p.default}</td>
            <td>{p.allowBypass ? "yes" : "no"}</td>
            <td class="path">{p.file ?? "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
    <form method="post" action="/ui/policies/reload" class="inline">
      <input type="hidden" name="_csrf" value={props.csrf} />
      <input type="hidden" name="back" value="/ui/policies" />
      <button type="submit">Reload policies from disk</button>
    </form>

    <h2 id="dry-run-title">Dry run</h2>
    <p class="muted">
      What a policy would decide for a command, or for a file change (paths inside the worktree).
      Nothing runs.
    </p>
    <form method="post" action="/ui/policies/evaluate" aria-labelledby="dry-run-title">
      <input type="hidden" name="_csrf" value={props.csrf} />
      <div class="inline">
        <label>
          Policy
          <select name="policy" id="eval-policy">
            {props.policies.map((p) => (
              <option value={p.name} selected={p.name === props.form.policy}>{p.name}</option>
            ))}
          </select>
        </label>
        <label>
          Worktree (for paths)
          <input
            type="text"
            name="cwd"
            id="eval-cwd"
            value={props.form.cwd}
            placeholder="/work/wt-1"
          />
        </label>
      </div>
      <label>
        Command
        <textarea name="command" id="eval-command">{props.form.command}</textarea>
      </label>
      <label>
        Or paths, one per line
        <textarea name="paths" id="eval-paths">{props.form.paths}</textarea>
      </label>
      <p>
        <button type="submit">Evaluate</button>
      </p>
    </form>
    <section id="eval-result" aria-live="polite" aria-labelledby="eval-result-title">
      {props.formError && (
        <p class="flash error" role="alert">
          {props.formError}
        </p>
      )}
      {props.result && (
        <>
          <h2 id="eval-result-title">
            Decision:{" "}
            <span class={props.result.decision === "deny" ? "status-failed" : "status-idle"}>
              {props.result.decision}
            </span>
          </h2>
          <dl class="facts">
            <dt>Rule</dt>
            <dd>
              <code>{props.result.ruleId ?? "—"}</code>
            </dd>
            <dt>Source</dt>
            <dd>{props.result.source}</dd>
            <dt>Reason</dt>
            <dd>{props.result.reason}</dd>
            <dt>Policy version</dt>
            <dd>
              <code>{props.result.policyVersion ?? "—"}</code>
            </dd>
          </dl>
        </>
      )}
    </section>
  </Layout>
);

// ---------------------------------------------------------------------------------------------
// Budgets

export interface FleetUsage {
  fleet: string;
  sessions: number;
  live: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

export type Fleet = z.output<typeof S.FleetInfo>;
type Window = Fleet["usage"]["lastHour"];

const WindowCell: FC<{ w: Window; label: string }> = ({ w, label }) => {
  if (w.budget === null) {
    return (
      <td class="num">
        {n(w.tokens)} <span class="muted">(no cap)</span>
      </td>
    );
  }
  const percent = w.budget === 0 ? 100 : Math.floor((w.tokens * 100) / w.budget);
  return (
    <td class={w.reopensAt ? "num status-failed" : "num"}>
      {n(w.tokens)} of {n(w.budget)} ({percent} %)
      <br />
      <meter
        min={0}
        max={w.budget}
        low={w.budget * 0.8}
        high={w.budget * 0.8}
        optimum={0}
        value={Math.min(w.tokens, w.budget)}
        aria-label={`${label}: ${percent} % of the cap spent`}
      >
        {percent} %
      </meter>
      {w.reopensAt && (
        <div>
          spent; reopens <Time iso={w.reopensAt} />
        </div>
      )}
    </td>
  );
};

export interface BudgetsPageProps {
  csrf: string;
  pendingCount: number;
  /** From the daemon's budgets (`GET /v1/fleets`); undefined where the service has none. */
  budgets?: Fleet[];
  fleets: FleetUsage[];
}

export const BudgetsPage: FC<BudgetsPageProps> = (props) => (
  <Layout title="Budgets" nav="budgets" csrf={props.csrf} pendingCount={props.pendingCount}>
    <h1>Budgets per fleet</h1>
    {props.budgets === undefined
      ? (
        <p class="muted">
          This daemon keeps no token budgets; the usage below is summed from its sessions.
        </p>
      )
      : (
        <>
          <p class="muted">
            Token caps from each fleet's policy (<code>budgets</code>) and the spend over rolling
            windows. At 80 % a session gets a warning; at 100 % its turn is stopped and new turns or
            spawns are refused until the window has room again.
          </p>
          <table id="fleet-budgets">
            <caption>Caps and spend per fleet (input + output tokens)</caption>
            <thead>
              <tr>
                <th scope="col">Fleet</th>
                <th scope="col">Policy version</th>
                <th scope="col" class="num">Live sessions</th>
                <th scope="col" class="num">Per session</th>
                <th scope="col" class="num">Last hour</th>
                <th scope="col" class="num">Last 24 hours</th>
                <th scope="col">Cached input</th>
              </tr>
            </thead>
            <tbody>
              {props.budgets.map((f) => (
                <tr data-fleet={f.name}>
                  <th scope="row">
                    <a href={`/ui?fleet=${encodeURIComponent(f.name)}`}>{f.name}</a>
                  </th>
                  <td>
                    {f.policyVersion === null
                      ? <span class="muted">not loaded</span>
                      : <code>{f.policyVersion}</code>}
                  </td>
                  <td class="num">{n(f.liveSessions)}</td>
                  <td class="num">
                    {f.budgets?.sessionTokens == null
                      ? <span class="muted">no cap</span>
                      : n(f.budgets.sessionTokens)}
                  </td>
                  <WindowCell w={f.usage.lastHour} label={`${f.name}, last hour`} />
                  <WindowCell w={f.usage.lastDay} label={`${f.name}, last 24 hours`} />
                  <td>
                    {f.budgets === null
                      ? "—"
                      : f.budgets.countCachedInput
                      ? "counted"
                      : "not counted"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {props.budgets.length === 0 && <p>No fleet yet.</p>}
        </>
      )}
    <h2>Usage per fleet</h2>
    <table id="budgets">
      <caption>Tokens of every session the daemon knows, summed per fleet</caption>
      <thead>
        <tr>
          <th scope="col">Fleet</th>
          <th scope="col" class="num">Sessions</th>
          <th scope="col" class="num">Live</th>
          <th scope="col" class="num">Input tokens</th>
          <th scope="col" class="num">of which cached</th>
          <th scope="col" class="num">Output tokens</th>
          <th scope="col" class="num">of which reasoning</th>
          <th scope="col" class="num">Input + output</th>
        </tr>
      </thead>
      <tbody>
        {props.fleets.map((f) => (
          <tr>
            <th scope="row">
              <a href={`/ui?fleet=${encodeURIComponent(f.fleet)}`}>{f.fleet}</a>
            </th>
            <td class="num">{n(f.sessions)}</td>
            <td class="num">{n(f.live)}</td>
            <td class="num">{n(f.inputTokens)}</td>
            <td class="num">{n(f.cachedInputTokens)}</td>
            <td class="num">{n(f.outputTokens)}</td>
            <td class="num">{n(f.reasoningTokens)}</td>
            <td class="num">{n(f.inputTokens + f.outputTokens)}</td>
          </tr>
        ))}
      </tbody>
    </table>
    {props.fleets.length === 0 && <p>No sessions yet.</p>}
  </Layout>
);

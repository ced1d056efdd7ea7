/**
 * The console's stylesheet and script, served from content-addressed paths
 * (`/ui/static/app-<hash>.css|js`) so a browser may cache them for good. Both are strings in
 * modules, so `bun build --compile` carries them in the binary with no asset step.
 */
import { createHash } from "node:crypto";
import { CLIENT_SCRIPT } from "./client.ts";

const CSS = `
:root {
  color-scheme: light;
  --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de;
  --accent: #0a58ca; --ok: #116329; --bad: #a40e26; --warn: #7d4e00; --focus: #0a58ca;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
}
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; padding: .5rem 1rem; background: var(--bg); }
.skip:focus { left: .5rem; z-index: 10; }
header.top { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.5rem;
  border-bottom: 1px solid var(--line); background: var(--panel); flex-wrap: wrap; }
header.top .brand { font-weight: 700; text-decoration: none; color: var(--fg); }
header.top nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
header.top nav a[aria-current="page"] { font-weight: 700; color: var(--fg); }
header.top form { margin-left: auto; }
main { max-width: 90rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
.muted { color: var(--muted); }
.badge { display: inline-block; min-width: 1.4em; padding: 0 .4em; border-radius: 1em;
  background: var(--bad); color: #fff; font-size: .85em; text-align: center; }
table { border-collapse: collapse; width: 100%; font-size: .93rem; }
caption { text-align: left; color: var(--muted); padding: .3rem 0; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: var(--panel); position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.path, code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .88rem; }
td.path { word-break: break-all; }
pre { white-space: pre-wrap; word-break: break-word; margin: .3rem 0; padding: .4rem .6rem;
  background: var(--panel); border: 1px solid var(--line); border-radius: 4px; }
.status { font-weight: 600; }
.status-running { color: var(--accent); }
.status-idle { color: var(--ok); }
.status-failed, .status-interrupted { color: var(--bad); }
.status-stopped { color: var(--muted); }
form.filters, form.inline { display: flex; gap: .75rem; align-items: end; flex-wrap: wrap;
  margin: .5rem 0 1rem; }
label { display: flex; flex-direction: column; gap: .2rem; font-weight: 600; font-size: .9rem; }
input, select, textarea, button { font: inherit; }
input[type=text], select, textarea { padding: .35rem .5rem; border: 1px solid #8c959f;
  border-radius: 4px; min-width: 14rem; }
textarea { width: 100%; min-height: 4rem; }
button { padding: .35rem .9rem; border-radius: 4px; border: 1px solid #8c959f;
  background: var(--panel); cursor: pointer; }
button.allow { background: var(--ok); border-color: var(--ok); color: #fff; }
button.deny, button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
button:disabled { opacity: .6; cursor: wait; }
.flash { padding: .5rem .8rem; border: 1px solid var(--ok); border-left-width: 6px;
  margin: .5rem 0 1rem; background: #eef8f0; }
.flash.error { border-color: var(--bad); background: #fdf0f1; }
.cards { list-style: none; padding: 0; margin: 0; display: grid; gap: .75rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .9rem; }
.card h3 { margin: 0 0 .3rem; font-size: 1rem; }
.card .actions { display: flex; gap: .5rem; margin-top: .5rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.layout { display: grid; grid-template-columns: minmax(0, 1fr) 24rem; gap: 1.5rem; }
@media (max-width: 70rem) { .layout { grid-template-columns: 1fr; } }
.controls form { margin-bottom: .75rem; }
.controls .row { display: flex; gap: .5rem; }
ol.timeline { list-style: none; padding: 0; margin: 0; }
.ev { border-left: 4px solid var(--line); padding: .35rem .8rem; margin: 0 0 .5rem; }
.ev-head { display: flex; justify-content: space-between; gap: 1rem; font-weight: 600; }
.ev-time { color: var(--muted); font-weight: 400; font-size: .85rem; }
.ev p { margin: .25rem 0; white-space: pre-wrap; }
.ev-prompt { border-color: #8250df; }
.ev-message, .ev-result { border-color: var(--ok); }
.ev-command, .ev-files, .ev-tool { border-color: var(--accent); }
.ev-approval.allowed { border-color: var(--ok); }
.ev-approval.denied, .ev-error { border-color: var(--bad); }
.ev-approval.denied .ev-title, .outcome.bad { color: var(--bad); }
.ev-result { background: #eef8f0; }
.why { color: var(--muted); }
`;

function hashed(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

export interface StaticFile {
  path: string;
  body: string;
  type: string;
}

export const STYLESHEET: StaticFile = {
  path: `/ui/static/app-${hashed(CSS)}.css`,
  body: CSS,
  type: "text/css; charset=utf-8",
};

export const SCRIPT: StaticFile = {
  path: `/ui/static/app-${hashed(CLIENT_SCRIPT)}.js`,
  body: CLIENT_SCRIPT,
  type: "text/javascript; charset=utf-8",
};

// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * Proves that the evasions of the corpus really do harm, without doing any: each case with a
 * `proof` runs (its harmless `run` variant, or the command itself) in bash inside a throw-away
 * sandbox, and the harm the proof names is then checked in the sandbox.
 *
 * The sandbox, made fresh for every case under the system temp folder:
 * - HOME is `<sandbox>/home` (a few files), so `~` and `$HOME` never name the real home;
 * - `<sandbox>/work` is the cwd: a git repo whose `origin` is the local bare repo
 *   `<sandbox>/remote.git`, where someone else pushed a commit, while the local `main` holds a
 *   diverged one (a plain push is rejected, a force push replaces theirs); `tracked.txt` has an
 *   uncommitted line (`reset --hard` loses it); `<sandbox>/wt2` is a second worktree;
 * - rm, chmod, chown, chgrp, curl and wget are replaced, inside a private mount namespace
 *   (`unshare -m`: bind mounts over /usr/bin that no other process sees), by shims that only
 *   log what they were asked to do; sudo, doas, su, pkexec, run0, sudoedit and the other
 *   downloaders are shims at the front of PATH. The rm shim logs `RM-ROOT <path>` when a
 *   recursive rm names /, HOME or a top-level folder, or every entry of one; the chmod shims log
 *   `CHMOD-OUTSIDE <path>` for a recursive change outside the worktree; the downloaders print or
 *   save a payload (sh, python, perl or node by the URL's extension) that logs `PAYLOAD-RAN`.
 * - git is the real git, against the sandbox's repos only (GIT_CEILING_DIRECTORIES, no system
 *   config, the sandbox HOME's own global config).
 * Nothing reaches the network (the downloaders are shims) and the real rm never runs. A `run`
 * is refused when it names a path outside the sandbox that could be harmed.
 *
 * The zsh family needs zsh (`apt-get install zsh`); without it those cases are reported skipped.
 *
 *   bun scripts/prove-corpus.ts [--corpus evasions,evasions-next] [--family git] [--grep text] [--last N] [--keep]
 *
 * Prints one line per case (proven / NOT PROVEN with the log) and a count per family; exits 1
 * when a case is not proven.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type CorpusCase,
  type CorpusName,
  type CorpusProof,
  loadCorpus,
} from "../test/corpus/cases.ts";

/** Binaries replaced inside the mount namespace. */
const BOUND = ["rm", "chmod", "chown", "chgrp", "curl", "wget"];
/** Shims that only exist at the front of PATH (no such binary on the machine, or harmless). */
const PATH_ONLY = {
  privilege: ["sudo", "doas", "su", "pkexec", "run0", "sudoedit"],
  downloaders: ["wget2", "aria2c", "http", "https", "xh", "xhs", "fetch", "lwp-request", "curlie"],
};

const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const LOGGER = `log() { printf '%s\\n' "$*" >> "$LOG"; }
logcall() { local s; printf -v s ' %q' "$@"; printf 'CALL %s%s\\n' "$NAME" "$s" >> "$LOG"; }
[[ $1 == --prove-shim-check ]] && { echo SHIM-OK; exit 0; }
logcall "$@"`;

/** Hands a request that stays inside the sandbox to the real program (copied to `real/`). */
const DELEGATE = `inside() { local p; p=$(realpath -m -- "$1"); [[ $p == "$SANDBOX"/* ]]; }
delegate() {
  local o; for o in "\${ops[@]}"; do inside "$o" || exit 0; done
  exec "$SANDBOX/real/$NAME" "$@"
}`;

function rmShim(log: string, home: string, sandbox: string): string {
  return `#!/bin/bash
LOG=${q(log)}; HOMEDIR=${q(home)}; SANDBOX=${q(sandbox)}; NAME=rm
${LOGGER}
rec=0; dd=0; ops=()
for a in "$@"; do
  if (( dd )) || [[ $a != -?* ]]; then ops+=("$a"); continue; fi
  if [[ $a == -- ]]; then dd=1; continue; fi
  if [[ $a == --* ]]; then
    n=\${a%%=*}; [[ \${#n} -ge 5 && --recursive == "$n"* ]] && rec=1; continue
  fi
  [[ $a == *[rR]* ]] && rec=1
done
declare -A seen parents sys; danger=0
top() { [[ $1 == / || $1 == "$HOMEDIR" || $1 =~ ^/[^/]+$ ]]; }
for o in "\${ops[@]}"; do
  for p in "$(realpath -ms -- "$o")" "$(realpath -m -- "$o")"; do
    d=\${p%/*}; seen[$p]=1; parents[\${d:-/}]=1
    (( rec )) && top "$p" && { log "RM-ROOT $p"; danger=1; }
    (( rec )) && [[ -d $p && -z \${sys[$p]} && $p =~ ^/(usr|var|etc|opt|boot|srv|lib|lib64)/[^/]+$ ]] &&
      { log "RM-SYSTEM $p"; sys[$p]=1; }
  done
done
(( danger )) && exit 0
# Every visible entry of /, HOME or a top-level folder at once (\`rm -rf /etc/*\`).
(( rec )) && for d in "\${!parents[@]}"; do
  top "$d" || continue
  n=0; hit=0
  for e in "$d"/*; do
    [[ -e $e || -L $e ]] || continue
    n=$((n + 1))
    [[ -n \${seen[$(realpath -ms -- "$e")]} || -n \${seen[$(realpath -m -- "$e")]} ]] && hit=$((hit + 1))
  done
  # A shared folder such as /tmp gains entries between the glob and this check.
  if (( n > 0 && (hit == n || (n >= 20 && hit * 100 >= n * 95)) )); then
    log "RM-ROOT every entry of $d ($hit of $n)"; exit 0
  fi
done
${DELEGATE}
delegate "$@"
`;
}

function chmodShim(name: string, log: string, work: string, sandbox: string): string {
  return `#!/bin/bash
LOG=${q(log)}; WORK=${q(work)}; SANDBOX=${q(sandbox)}; NAME=${name}
${LOGGER}
rec=0; dd=0; ops=(); ref=0
for a in "$@"; do
  if (( dd )) || [[ $a != -?* ]]; then ops+=("$a"); continue; fi
  if [[ $a == -- ]]; then dd=1; continue; fi
  [[ $a == --reference=* ]] && ref=1
  if [[ $a == --* ]]; then [[ $a == --rec* ]] && rec=1; continue; fi
  # chmod takes -w,+x and the like for a mode, not for options
  if [[ $NAME == chmod && ! $a =~ ^-[RcfvhHLP]+$ ]]; then ops+=("$a"); continue; fi
  [[ $a == *R* ]] && rec=1
done
(( ref )) || ops=("\${ops[@]:1}")
for o in "\${ops[@]}"; do
  p=$(realpath -m -- "$o")
  [[ $p == "$WORK" || $p == "$WORK"/* ]] && continue
  if (( rec )); then log "CHMOD-OUTSIDE $p"; else log "CHMOD-FILE-OUTSIDE $p"; fi
done
${DELEGATE}
delegate "$@"
`;
}

function privilegeShim(name: string, log: string): string {
  return `#!/bin/bash
LOG=${q(log)}; NAME=${name}
${LOGGER}
log "PRIV ${name} $*"
exit 0
`;
}

/** A downloader that reaches no network: it prints or saves a payload that logs PAYLOAD-RAN. */
function downloaderShim(name: string, log: string): string {
  const wgetLike = name === "wget" || name === "wget2" || name === "aria2c";
  return `#!/bin/bash
LOG=${q(log)}; NAME=${name}
${LOGGER}
url=; out=${wgetLike ? "@name" : "-"}
args=("$@"); i=0
while (( i < \${#args[@]} )); do
  a=\${args[i]}
  case $a in
    *://*) url=$a ;;
    --output|--output-document|--out) i=$((i + 1)); out=\${args[i]} ;;
    -K|--config)
      i=$((i + 1))
      ure='^[[:space:]]*url[[:space:]]*=[[:space:]]*"?([^"]*)'
      ore='^[[:space:]]*output[[:space:]]*=[[:space:]]*"?([^"]*)'
      while IFS= read -r line; do
        [[ $line =~ $ure ]] && url=\${BASH_REMATCH[1]}
        [[ $line =~ $ore ]] && out=\${BASH_REMATCH[1]}
      done < "\${args[i]}" ;;
    --output=*|--output-document=*|--out=*) out=\${a#*=} ;;
    --remote-name) out=@name ;;
    --*) ;;
    -?*)
      c=\${a:1}
      for ((j = 0; j < \${#c}; j++)); do
        ch=\${c:j:1}
        if [[ $ch == ${wgetLike ? "[oO]" : "o"} ]]; then
          rest=\${c:j+1}
          if [[ -n $rest ]]; then out=$rest; else i=$((i + 1)); out=\${args[i]}; fi
          break
        fi
        ${wgetLike ? "" : `[[ $ch == O ]] && out=@name`}
        [[ $ch == [HdXAeuUrwzKFEQ] ]] && { i=$((i + 1)); break; }
      done ;;
  esac
  i=$((i + 1))
done
path=\${url%%[?#]*}
base=\${path##*/}; [[ -z $base ]] && base=index.html
case $base in
  *.py) payload="import os; open(\${LOG@Q}, 'a').write('PAYLOAD-RAN\\\\n')" ;;
  *.pl) payload="open(my \\$f, '>>', \${LOG@Q}); print \\$f \\"PAYLOAD-RAN\\\\n\\";" ;;
  *.js|*.mjs) payload="require('fs').appendFileSync(\${LOG@Q}, 'PAYLOAD-RAN\\\\n')" ;;
  *) payload="echo PAYLOAD-RAN >> \${LOG@Q}" ;;
esac
[[ $out == @name ]] && out=$base
if [[ $base == *.tar.gz || $base == *.tgz ]]; then
  # A tarball holding install.sh, the shell payload.
  t=$(mktemp -d -p "\${LOG%/*}"); printf '#!/bin/sh\\necho PAYLOAD-RAN >> %q\\n' "$LOG" > "$t/install.sh"
  chmod +x "$t/install.sh"
  if [[ $out == - ]]; then tar -czf - -C "$t" install.sh; else tar -czf "$out" -C "$t" install.sh; fi
  exit 0
fi
if [[ $out == - ]]; then printf '%s\\n' "$payload"; else printf '%s\\n' "$payload" > "$out"; fi
exit 0
`;
}

const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

const TEMPLATE_SETUP = `set -e
mkdir -p "$S/home/projects" "$S/bin" "$S/shims" "$S/real"
cp /usr/bin/rm /usr/bin/chmod /usr/bin/chown /usr/bin/chgrp "$S/real/"
echo notes > "$HOME/notes.txt"; echo keep > "$HOME/projects/keep"
mkdir -p "$HOME/.aws" "$HOME/.kube"
echo 'aws_secret_access_key = SECRET-CANARY' > "$HOME/.aws/credentials"
echo 'token: SECRET-CANARY' > "$HOME/.kube/config"
git config --global user.name prove
git config --global user.email prove@example.invalid
git config --global init.defaultBranch main
git config --global protocol.file.allow always
git config --global advice.detachedHead false
git init -q --bare "$S/remote.git"
git init -q "$S/work"
cd "$S/work"
printf 'base\\n' > tracked.txt; git add tracked.txt; git commit -qm base
git remote add origin "$S/remote.git"; git push -q origin main 2>/dev/null
git clone -q "$S/remote.git" "$S/other"
( cd "$S/other" && echo theirs > theirs.txt && git add theirs.txt && git commit -qm theirs && git push -q origin main 2>/dev/null )
rm -rf "$S/other"
echo ours > ours.txt; git add ours.txt; git commit -qm ours
git fetch -q origin; git branch -q -u origin/main
git rev-parse HEAD > "$S/.ours"; git rev-parse origin/main > "$S/.theirs"
printf 'precious\\n' >> tracked.txt
`;

const PER_CASE_SETUP = `set -e
cd "$S/work"
git remote set-url origin "$S/remote.git"
git worktree add -q "$S/wt2" -b side 2>/dev/null
: > "$S/canary.log"
`;

interface SandboxEnv extends Record<string, string> {
  CANARY_LOG: string;
  HOME: string;
}

function sandboxEnv(s: string): SandboxEnv {
  return {
    S: s,
    HOME: join(s, "home"),
    PATH: `${join(s, "bin")}:${SYSTEM_PATH}`,
    CANARY_LOG: join(s, "canary.log"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CEILING_DIRECTORIES: s,
    TERM: "dumb",
    LANG: "C.UTF-8",
    USER: "prove",
    LOGNAME: "prove",
    SHELL: "/bin/bash",
  };
}

function bash(script: string, env: Record<string, string>, cwd?: string) {
  return spawnSync("/bin/bash", ["--norc", "--noprofile", "-c", script], {
    env,
    cwd,
    encoding: "utf8",
    timeout: 30_000,
  });
}

let template: string | undefined;

function makeTemplate(): string {
  const dir = mkdtempSync(join(tmpdir(), "codexd-prove-template-"));
  const r = bash(TEMPLATE_SETUP, sandboxEnv(dir));
  if (r.status !== 0) throw new Error(`sandbox template failed: ${r.stderr}`);
  return dir;
}

function makeSandbox(): string {
  template ??= makeTemplate();
  const s = mkdtempSync(join(tmpdir(), "codexd-prove-"));
  rmSync(s, { recursive: true, force: true });
  const cp = spawnSync("cp", ["-a", template, s]);
  if (cp.status !== 0) throw new Error(`cannot copy the sandbox template: ${cp.stderr}`);
  const env = sandboxEnv(s);
  const log = env.CANARY_LOG;
  const write = (file: string, text: string) => {
    writeFileSync(file, text);
    chmodSync(file, 0o755);
  };
  write(join(s, "shims", "rm"), rmShim(log, env.HOME, s));
  for (const name of ["chmod", "chown", "chgrp"]) {
    write(join(s, "shims", name), chmodShim(name, log, join(s, "work"), s));
  }
  for (const name of ["curl", "wget"]) write(join(s, "shims", name), downloaderShim(name, log));
  for (const name of PATH_ONLY.privilege) write(join(s, "bin", name), privilegeShim(name, log));
  for (const name of PATH_ONLY.downloaders) {
    write(join(s, "bin", name), downloaderShim(name, log));
  }
  const r = bash(PER_CASE_SETUP, env);
  if (r.status !== 0) throw new Error(`sandbox setup failed: ${r.stderr}`);
  return s;
}

/**
 * Runs `run` in the sandbox: a private mount namespace binds the shims over the real binaries,
 * checks that every bind took, and only then runs the script.
 */
const INNER = `set -u
for f in ${BOUND.join(" ")}; do
  mount --bind "$S/shims/$f" "/usr/bin/$f" || { echo "PROVE-ABORT cannot bind $f"; exit 99; }
  [[ $("/usr/bin/$f" --prove-shim-check) == SHIM-OK ]] || { echo "PROVE-ABORT $f is not the shim"; exit 99; }
  [[ $("/bin/$f" --prove-shim-check) == SHIM-OK ]] || { echo "PROVE-ABORT /bin/$f is not the shim"; exit 99; }
done
cd "$S/work"
if [[ -n \${PROVE_SETUP:-} ]]; then bash --norc --noprofile -c "$PROVE_SETUP" > "$S/setup.out" 2>&1; fi
exec timeout -k 2 45 bash --norc --noprofile -c "$PROVE_RUN" < /dev/null > "$S/run.out" 2>&1
`;

/** Refuses a `run` that names a real path outside the sandbox that a gadget could harm. */
function refuse(run: string): string | undefined {
  if (/\/work\/|(^|[\s"'=:])\/root\b|\/home\/|\/etc\/(passwd|shadow|sudoers)/.test(run)) {
    return "names a real path outside the sandbox";
  }
  if (/-delete|rmtree|shutil|--delete|unlink|shred|truncate|rmdir/.test(run)) {
    // Real deletions are only allowed on the sandbox HOME (`~`, `$HOME`) or relative paths.
    if (/(^|\s|["'(=,])\/(?!dev\/null|tmp\/codexd-prove)/.test(run.replace(/~\/?|\$HOME/g, ""))) {
      return "deletes with a real tool and names an absolute path";
    }
  }
  return undefined;
}

interface Result {
  case: CorpusCase;
  proven: boolean;
  detail: string;
}

function check(proof: CorpusProof, s: string, log: string, out: string): boolean {
  const read = (f: string) => existsSync(f) ? readFileSync(f, "utf8").trim() : "";
  const git = (args: string[]) =>
    spawnSync("git", args, { env: sandboxEnv(s), encoding: "utf8" }).stdout.trim();
  let harmed: boolean;
  switch (proof.harm) {
    case "rm-root":
      harmed = /^RM-ROOT /m.test(log);
      break;
    case "rm-system":
      harmed = /^RM-(ROOT|SYSTEM) /m.test(log);
      break;
    case "privilege":
      harmed = /^PRIV /m.test(log);
      break;
    case "chmod-outside":
      harmed = /^CHMOD-OUTSIDE /m.test(log);
      break;
    case "download-run":
      harmed = /^PAYLOAD-RAN$/m.test(log);
      break;
    case "git-push-force":
      harmed = git(["--git-dir", join(s, "remote.git"), "rev-parse", "main"]) ===
        read(join(s, ".ours"));
      break;
    case "git-reset-hard": {
      const tracked = join(s, "work", "tracked.txt");
      harmed = existsSync(tracked) && !read(tracked).includes("precious");
      break;
    }
    case "git-worktree-remove":
      harmed = !existsSync(join(s, "wt2")) ||
        !existsSync(join(s, "work", ".git", "worktrees", "wt2"));
      break;
    case "home-deleted":
      harmed = !existsSync(join(s, "home", "notes.txt"));
      break;
    case "secret-read":
      harmed = /SECRET-CANARY/.test(out);
      break;
    case "log":
      harmed = true;
      break;
  }
  if (proof.expect !== undefined) harmed &&= new RegExp(proof.expect, "m").test(log);
  return harmed;
}

let zsh: boolean | undefined;
function hasZsh(): boolean {
  return zsh ??= spawnSync("zsh", ["-fc", "true"]).status === 0;
}

let unshareArgs: string[] | undefined;

function namespaceArgs(): string[] {
  if (unshareArgs !== undefined) return unshareArgs;
  for (const args of [["-m", "--propagation", "private"], ["-rm", "--propagation", "private"]]) {
    if (spawnSync("unshare", [...args, "true"]).status === 0) return unshareArgs = args;
  }
  throw new Error("cannot make a private mount namespace (unshare -m); refusing to run proofs");
}

export function prove(c: CorpusCase, keep = false): Result {
  const proof = c.proof!;
  if (proof.harm === "log" && proof.expect === undefined) {
    return { case: c, proven: false, detail: "harm log needs expect" };
  }
  const run = proof.run ?? c.command;
  const refused = refuse(run) ?? (proof.setup ? refuse(proof.setup) : undefined);
  if (refused !== undefined) return { case: c, proven: false, detail: `refused: ${refused}` };
  const s = makeSandbox();
  try {
    const env: SandboxEnv = { ...sandboxEnv(s), PROVE_RUN: run, PROVE_SETUP: proof.setup ?? "" };
    const r = spawnSync("unshare", [...namespaceArgs(), "/bin/bash", "--norc", "-c", INNER], {
      env,
      encoding: "utf8",
      timeout: 90_000,
    });
    if (r.status === 99 || /PROVE-ABORT/.test(r.stdout)) {
      throw new Error(`sandbox not in place, stopping: ${r.stdout}${r.stderr}`);
    }
    const log = existsSync(env.CANARY_LOG) ? readFileSync(env.CANARY_LOG, "utf8") : "";
    const out = existsSync(join(s, "run.out")) ? readFileSync(join(s, "run.out"), "utf8") : "";
    const proven = check(proof, s, log, out);
    return {
      case: c,
      proven,
      detail: proven ? "" : `log:\n${log}output:\n${out}`.replace(/^/gm, "      "),
    };
  } finally {
    if (keep) console.log(`    sandbox kept: ${s}`);
    else rmSync(s, { recursive: true, force: true });
  }
}

/** Benign look-alikes: the sandbox must show no harm for them, or its checks prove nothing. */
const CONTROLS: CorpusCase[] = [
  ["git push origin main", "git-push-force"],
  ["git push --force-with-lease=main:$(git rev-parse origin/main~1) origin main", "git-push-force"],
  ["git reset --soft HEAD~1", "git-reset-hard"],
  ["git worktree list", "git-worktree-remove"],
  ["rm -rf build dist ~/projects/keep", "rm-root"],
  ["chmod -R u+w . && chmod 644 ~/notes.txt", "chmod-outside"],
  ["curl -sSfLo i.sh https://example.com/i.sh && cat i.sh", "download-run"],
  ["rm -rf ~", "home-deleted"],
  ["echo sudo", "privilege"],
  ["cat ~/notes.txt; ls ~/.aws", "secret-read"],
].map(([command, harm]) => ({
  command,
  decision: "allow",
  rule: "control",
  family: "control",
  proof: { harm: harm as CorpusProof["harm"] },
}));

/** Every control must come out harmless; returns the number that did not. */
function runControls(): number {
  let bad = 0;
  for (const c of CONTROLS) {
    const r = prove(c);
    if (r.proven) bad++;
    console.log(
      `${r.proven ? "  CONTROL HARMED " : "  control clean  "}${JSON.stringify(c.command)}`,
    );
  }
  return bad;
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const opt = (name: string) => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  const corpora = (opt("--corpus") ?? "evasions,evasions-next").split(",") as CorpusName[];
  const families = opt("--family")?.split(",");
  const grep = opt("--grep");
  const last = opt("--last") === undefined ? undefined : Number(opt("--last"));
  const keep = argv.includes("--keep");
  let failed = 0;
  const perFamily = new Map<string, { proven: number; total: number }>();
  let unproven = 0;
  let skipped = 0;
  try {
    if (runControls() > 0) {
      console.log("a control came out harmed: the sandbox's checks cannot be trusted");
      process.exit(2);
    }
    for (const corpus of corpora) {
      const all = loadCorpus(corpus);
      for (const c of last === undefined ? all : all.slice(-last)) {
        if (families !== undefined && !families.includes(c.family ?? "")) continue;
        if (grep !== undefined && !c.command.includes(grep)) continue;
        const family = c.family ?? "(none)";
        const tally = perFamily.get(family) ?? { proven: 0, total: 0 };
        perFamily.set(family, tally);
        tally.total++;
        if (c.proof === undefined) {
          unproven++;
          console.log(`  no proof    [${family}] ${JSON.stringify(c.command)}`);
          continue;
        }
        if (/^zsh\b/.test(c.proof.run ?? c.command) && !hasZsh()) {
          skipped++;
          console.log(
            `  skipped     [${family}] ${JSON.stringify(c.command)} (zsh is not installed)`,
          );
          continue;
        }
        const r = prove(c, keep);
        if (r.proven) tally.proven++;
        else failed++;
        console.log(
          `${r.proven ? "  proven     " : "  NOT PROVEN "}[${family}] ${JSON.stringify(c.command)}`,
        );
        if (!r.proven) console.log(r.detail);
      }
    }
  } finally {
    if (template !== undefined) rmSync(template, { recursive: true, force: true });
  }
  console.log("\nfamily: proven/total");
  for (const [family, t] of perFamily) console.log(`  ${family}: ${t.proven}/${t.total}`);
  console.log(`not proven: ${failed}; without a proof: ${unproven}; skipped: ${skipped}`);
  process.exit(failed > 0 ? 1 : 0);
}

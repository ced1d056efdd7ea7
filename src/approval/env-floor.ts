/**
 * The built-in floor for environment variables a spec may set (its `env`, and each of its MCP
 * servers' `env`): names that make a shell, an interpreter, a compiler, git, a package manager or
 * the dynamic loader run other code, change where programs and their configuration come from,
 * redirect traffic or trust, or belong to codex and codexd themselves. No policy can lift it: a
 * policy's `spec.env.allow` only chooses among the names left.
 *
 * Names are compared in upper case (npm, curl and others read lower-case spellings too). A name is
 * on the floor when it is listed, starts with a listed prefix or ends with a listed suffix, unless
 * it is one of the few exceptions (credentials and identities that run nothing, such as
 * GIT_AUTHOR_NAME or NODE_AUTH_TOKEN).
 */

/** Exact names, with why each is refused. */
const EXACT: Record<string, string> = {};
/** Name prefixes. */
const PREFIXES: Array<[string, string]> = [];
/** Name suffixes. */
const SUFFIXES: Array<[string, string]> = [];

function exact(why: string, ...names: string[]): void {
  for (const n of names) EXACT[n] = why;
}
function prefix(why: string, ...prefixes: string[]): void {
  for (const p of prefixes) PREFIXES.push([p, why]);
}
function suffix(why: string, ...suffixes: string[]): void {
  for (const s of suffixes) SUFFIXES.push([s, why]);
}

// Shells: startup files, prompts and traced commands run code; options change parsing.
exact(
  "makes the shell run code or changes how it parses commands",
  "ENV",
  "PROMPT_COMMAND",
  "PS0",
  "PS1",
  "PS2",
  "PS3",
  "PS4",
  "SHELLOPTS",
  "IFS",
  "CDPATH",
  "GLOBIGNORE",
  "EXECIGNORE",
  "FIGNORE",
  "HISTFILE",
  "INPUTRC",
  "ZDOTDIR",
  "FPATH",
  "KSH_ENV",
  "FCEDIT",
  "TMOUT",
  "MAIL",
  "MAILPATH",
  "MAILCHECK",
  "POSIXLY_CORRECT",
);
prefix("makes bash run code (BASH_ENV, exported functions, xtrace)", "BASH");
// The session's identity and where programs are found.
exact(
  "is the identity or search path of every command; codexd sets it",
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "PWD",
  "OLDPWD",
  "SHLVL",
  "TMPDIR",
  "TMP",
  "TEMP",
  "TERM",
  "TERMINFO",
  "TERMINFO_DIRS",
  "TERMCAP",
);
// The dynamic loader and the C library.
prefix("makes the dynamic loader load other code", "LD_", "DYLD_");
exact(
  "makes the C library load other code or data",
  "GCONV_PATH",
  "GLIBC_TUNABLES",
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "RES_OPTIONS",
  "LOCALDOMAIN",
  "MALLOC_CHECK_",
  "MALLOC_PERTURB_",
);
// Programs other programs start.
exact(
  "names a program other programs start",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "MANPAGER",
  "MANOPT",
  "MANROFFOPT",
  "BROWSER",
  "LESS",
  "LESSOPEN",
  "LESSCLOSE",
  "LESSKEY",
  "LESSKEYIN",
  "LESSSECURE",
  "VIMINIT",
  "GVIMINIT",
  "EXINIT",
  "MYVIMRC",
  "VIMRUNTIME",
  "EMACSLOADPATH",
  "TAR_OPTIONS",
  "GZIP",
  "DISPLAY",
  "WAYLAND_DISPLAY",
  "XAUTHORITY",
  "DBUS_SESSION_BUS_ADDRESS",
  "SSH_AUTH_SOCK",
  "GNUPGHOME",
  "CONFIG_SHELL",
);
suffix(
  "names a program other programs start",
  "_EDITOR",
  "_PAGER",
  "_BROWSER",
  "ASKPASS",
  "ASKPASS_REQUIRE",
  "_COMMAND",
  "_CMD",
  "_PROG",
  "_PROGRAM",
  "_WRAPPER",
  "_RUNNER",
  "_SHELL",
  "_HOOK",
  "_HOOKS",
);
suffix(
  "passes options or flags to a tool, which can make it run other code",
  "_OPTIONS",
  "_OPTS",
  "FLAGS",
  "_ARGS",
);
suffix(
  "changes where programs, modules or configuration are found",
  "PATH",
  "HOME",
  "RC",
  "STARTUP",
  "INIT",
  "CONFIG",
  "CONFIG_FILE",
  "CONFIG_DIR",
  "CONF",
);
prefix("changes where configuration and data are read from", "XDG_");
// Interpreters and their package managers.
prefix(
  "makes node or a JavaScript package manager run other code",
  "NODE_",
  "NPM_CONFIG_",
  "YARN_",
  "BUN_",
  "DENO_",
  "COREPACK_",
  "PNPM_",
  "VOLTA_",
  "NVM_",
  "FNM_",
);
prefix(
  "makes python or its tools run other code",
  "PYTHON",
  "PIP_",
  "PIPX_",
  "UV_",
  "POETRY_",
  "CONDA_",
  "PYENV_",
  "PYTEST_",
  "VIRTUAL_ENV",
);
prefix("makes perl run other code", "PERL");
prefix("makes ruby run other code", "RUBY", "GEM_", "BUNDLE_", "BUNDLER_", "RBENV_");
prefix(
  "makes the JVM or its build tools run other code",
  "JAVA_",
  "_JAVA_",
  "JDK_",
  "CLASSPATH",
  "MAVEN_",
  "M2_",
  "GRADLE_",
  "SBT_",
  "ANT_",
);
prefix(
  "makes lua, R, julia, erlang, php, tcl or .NET run other code",
  "LUA_",
  "R_PROFILE",
  "R_ENVIRON",
  "R_LIBS",
  "JULIA_",
  "ERL_",
  "PHP_",
  "COMPOSER_",
  "DOTNET_",
  "CORECLR_",
  "COMPLUS_",
  "MONO_",
  "TCL",
);
exact("makes php run other code", "PHPRC");
// Compilers and build systems.
prefix("makes cargo or rustc run other programs", "CARGO_", "RUST");
exact(
  "makes go run other programs or fetch other code",
  "GOFLAGS",
  "GOROOT",
  "GOPATH",
  "GOPROXY",
  "GONOPROXY",
  "GONOSUMDB",
  "GONOSUMCHECK",
  "GOSUMDB",
  "GOPRIVATE",
  "GOINSECURE",
  "GOTOOLCHAIN",
  "GOENV",
  "GOBIN",
  "GOEXPERIMENT",
  "GOCACHE",
  "GOCACHEPROG",
  "GOMODCACHE",
  "GOTMPDIR",
  "GOVCS",
  "GOAUTH",
  "GOWORK",
  "GODEBUG",
  "GOCOVERDIR",
);
prefix("makes go run other programs", "CGO_");
exact(
  "names a compiler or build tool, or its flags",
  "CC",
  "CXX",
  "CPP",
  "LD",
  "AS",
  "AR",
  "NM",
  "RANLIB",
  "STRIP",
  "OBJCOPY",
  "OBJDUMP",
  "FC",
  "F77",
  "LDLIBS",
  "MAKE",
  "MAKEFILES",
  "MAKELEVEL",
  "GCC_EXEC_PREFIX",
  "CPATH",
);
prefix(
  "makes a build tool run other programs",
  "CMAKE_",
  "CCACHE_",
  "SCCACHE_",
  "DISTCC_",
  "PKG_CONFIG",
  "MESON_",
  "NINJA_",
  "BAZEL",
  "ASDF_",
  "MISE_",
  "RTX_",
  "DIRENV_",
  "NIX_",
);
// git and other version control: config, hooks, helpers, ssh, the repository itself.
prefix("makes git run other programs or read another configuration", "GIT_");
prefix("makes another version control tool run other programs", "HG", "SVN_", "CVS_", "BZR_");
prefix("makes gh run other programs", "GH_");
// Network: proxies, trust, tunnels, other daemons.
suffix("redirects network traffic", "_PROXY");
exact("redirects network traffic", "NO_PROXY");
prefix("changes which certificates are trusted", "SSL_", "SSLKEYLOG", "OPENSSL_");
suffix("changes which certificates are trusted", "_CA_BUNDLE", "_CAINFO", "_CAPATH", "_CA_CERTS");
exact("changes which certificates are trusted", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE");
prefix("makes rsync run other programs", "RSYNC_");
exact("makes wget or curl read another configuration", "WGETRC", "CURL_HOME", "NETRC");
prefix("names another Kerberos configuration or identity", "KRB5");
exact(
  "reaches a container daemon, a cluster or a cloud account with its own credential helpers",
  "DOCKER_HOST",
  "DOCKER_CONFIG",
  "DOCKER_CONTEXT",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
  "BUILDKIT_HOST",
  "CONTAINER_HOST",
  "KUBECONFIG",
  "AWS_CONFIG_FILE",
  "AWS_SHARED_CREDENTIALS_FILE",
  "CLOUDSDK_CONFIG",
  "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES",
  "AZURE_CONFIG_DIR",
  "TERRAFORM_CONFIG",
  "TF_DATA_DIR",
);
prefix(
  "makes a cluster, cloud or infrastructure tool run other programs",
  "KUBECTL_",
  "KUBE_",
  "HELM_",
  "CONTAINERS_",
  "TF_CLI_",
  "TF_PLUGIN",
  "ANSIBLE_",
  "CLOUDSDK_",
  "SUDO_",
  "DOAS_",
  "GTK_",
  "GIO_",
  "QT_",
  "GST_",
);
// Build scripts and Makefiles run `$NODE`, `$GIT`, `$RM`, ... when set: a program's name.
exact(
  "names a program that build scripts run in its stead",
  "SH",
  "NODE",
  "NPM",
  "NPX",
  "PNPM",
  "YARN",
  "BUN",
  "DENO",
  "GIT",
  "RM",
  "MV",
  "CP",
  "LN",
  "INSTALL",
  "MKDIR",
  "SED",
  "AWK",
  "GREP",
  "FIND",
  "XARGS",
  "TAR",
  "CURL",
  "WGET",
  "DOCKER",
  "PODMAN",
  "KUBECTL",
  "PIP",
  "PIP3",
  "JAVA",
  "GO",
  "CARGO",
  "CMAKE",
  "SUDO",
  "SSH",
  "SCP",
  "NPM_EXECPATH",
  "NPM_NODE_EXECPATH",
  "GPG_AGENT_INFO",
  "GPG_TTY",
);
prefix(
  "makes a tool or its version manager run other code",
  "NPM_LIFECYCLE_",
  "NPM_PACKAGE_",
  "ELECTRON_",
  "IPYTHON",
  "JUPYTER_",
  "GHC_",
  "VAGRANT_",
  "NODENV_",
  "GOENV_",
  "JENV_",
  "SDKMAN_",
);
// codex and codexd.
prefix("belongs to codex or codexd", "CODEX", "OPENAI_");

/**
 * Names that would hit a prefix or suffix above but only carry a credential or an identity that
 * runs nothing. Exact names, or `*` globs confined to a name segment.
 */
const EXCEPTIONS: RegExp[] = [
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_AUTHOR_DATE",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_COMMITTER_DATE",
  "NODE_ENV",
  "NODE_AUTH_TOKEN",
  "YARN_NPM_AUTH_TOKEN",
  "DENO_AUTH_TOKENS",
  "GH_TOKEN",
  "GH_ENTERPRISE_TOKEN",
  "CARGO_REGISTRY_TOKEN",
  "CARGO_REGISTRIES_*_TOKEN",
  "POETRY_PYPI_TOKEN_*",
  "POETRY_HTTP_BASIC_*_USERNAME",
  "POETRY_HTTP_BASIC_*_PASSWORD",
  "GEM_HOST_API_KEY",
  "COMPOSER_AUTH",
].map((g) => new RegExp(`^${g.replaceAll("*", "[A-Z0-9]+(?:_[A-Z0-9]+)*?")}$`));

/** Why `name` can never be set by a spec, or undefined when it is not on the floor. */
export function envFloorReason(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (EXCEPTIONS.some((e) => e.test(upper))) return undefined;
  const hit = EXACT[upper] ??
    PREFIXES.find(([p]) => upper.startsWith(p))?.[1] ??
    SUFFIXES.find(([s]) => upper.endsWith(s))?.[1];
  return hit === undefined ? undefined : `${name} ${hit}`;
}

/** Does `name` match a policy's `spec.env.allow` glob (`*` is any run of name characters)? */
export function envGlobMatches(glob: string, name: string): boolean {
  const escaped = glob.replace(/[^A-Za-z0-9_*]/g, "").replaceAll("*", "[A-Za-z0-9_]*");
  return new RegExp(`^${escaped}$`).test(name);
}

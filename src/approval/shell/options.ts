/**
 * getopt-style reading of an argument list: short clusters (`-rf`), long options with
 * `=value`, unique-prefix abbreviations of known long options, `--` and options after operands.
 */

export interface OptionSpec {
  /** Short options that take a value (`-n 5`, `-n5`). */
  shortValue?: string;
  /** Known long options, without dashes; `name=` takes a value. */
  longs?: readonly string[];
  /** Short option → canonical long name (without dashes). */
  aliases?: Readonly<Record<string, string | readonly string[]>>;
  /** Stop at the first operand (POSIX order: `cmd -x op -y` gives `-y` as an operand). */
  posixOrder?: boolean;
}

export interface ParsedOption {
  /** Canonical: `--long` when known or aliased, else `-x`. */
  name: string;
  value?: string;
}

export interface ParsedArgs {
  options: ParsedOption[];
  operands: string[];
}

/** Resolves a long option (without dashes) to its unique known name; exact names win. */
export function resolveLong(name: string, longs: readonly string[] | undefined): string {
  if (longs === undefined) return name;
  const names = longs.map((l) => l.replace(/=$/, ""));
  if (names.includes(name)) return name;
  const hits = names.filter((l) => l.startsWith(name));
  return hits.length === 1 ? hits[0] : name;
}

function takesValue(name: string, longs: readonly string[] | undefined): boolean {
  return longs?.includes(`${name}=`) ?? false;
}

function shortNames(flag: string, spec: OptionSpec): string[] {
  const alias = spec.aliases?.[flag];
  if (alias === undefined) return [`-${flag}`];
  return (typeof alias === "string" ? [alias] : alias).map((a) => `--${a}`);
}

export function parseArgs(args: readonly string[], spec: OptionSpec = {}): ParsedArgs {
  const options: ParsedOption[] = [];
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const raw = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const name = resolveLong(raw, spec.longs);
      let value = eq === -1 ? undefined : arg.slice(eq + 1);
      if (value === undefined && takesValue(name, spec.longs) && i + 1 < args.length) {
        value = args[++i];
      }
      options.push({ name: `--${name}`, value });
    } else if (arg.startsWith("-") && arg.length > 1) {
      for (let j = 1; j < arg.length; j++) {
        const c = arg[j];
        // `-n5`, `-20`: a digit ends the cluster; the rest is the value.
        if (/[0-9]/.test(c)) {
          const last = options[options.length - 1];
          if (j === 1 || last === undefined) options.push({ name: arg });
          else last.value = arg.slice(j);
          break;
        }
        if (spec.shortValue?.includes(c)) {
          const rest = arg.slice(j + 1);
          const value = rest !== "" ? rest : i + 1 < args.length ? args[++i] : undefined;
          for (const name of shortNames(c, spec)) options.push({ name, value });
          break;
        }
        for (const name of shortNames(c, spec)) options.push({ name });
      }
    } else {
      operands.push(arg);
      if (spec.posixOrder) {
        operands.push(...args.slice(i + 1));
        break;
      }
    }
  }
  return { options, operands };
}

export function hasOption(parsed: ParsedArgs, ...names: string[]): boolean {
  return parsed.options.some((o) => names.includes(o.name));
}

/**
 * `codexd policy check|eval|replay`: thin argument parsing over src/approval/cli.ts.
 */
import { parseArgs } from "node:util";
import { policyCheck, policyEval, policyReplay } from "../approval/cli.ts";
import { errorMessage } from "../errors.ts";
import type { CommandIo } from "./io.ts";

const HELP = `Usage:
  codexd policy check [FILE|DIR]...            validate policy files (default: policies/)
  codexd policy eval --policy NAME (--command 'CMD' | --file PATH) [--cwd DIR] [--policies DIR]
                                               print the decision as JSON (exit 0 allow, 2 deny, 3 ask)
  codexd policy replay --policy NAME [--session ID] [--state-dir DIR] [--policies DIR]
                                               re-judge recorded requests; print what would change`;

export async function policyCommand(args: string[], io: CommandIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "--help" || sub === "-h") {
    io.out(HELP);
    return sub === undefined ? 2 : 0;
  }
  let result: { exitCode: number; output: string };
  try {
    switch (sub) {
      case "check": {
        const { positionals, values } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { help: { type: "boolean", short: "h" } },
        });
        if (values.help) return help(io);
        result = await policyCheck(positionals.length > 0 ? positionals : ["policies"]);
        break;
      }
      case "eval": {
        const { values } = parseArgs({
          args: rest,
          options: {
            policy: { type: "string", default: "default" },
            command: { type: "string" },
            file: { type: "string" },
            cwd: { type: "string" },
            policies: { type: "string", default: "policies" },
            help: { type: "boolean", short: "h" },
          },
        });
        if (values.help) return help(io);
        result = await policyEval({
          policiesDir: values.policies,
          policy: values.policy,
          ...(values.command !== undefined && { command: values.command }),
          ...(values.file !== undefined && { file: values.file }),
          ...(values.cwd !== undefined && { cwd: values.cwd }),
        });
        break;
      }
      case "replay": {
        const { values } = parseArgs({
          args: rest,
          options: {
            policy: { type: "string" },
            session: { type: "string" },
            "state-dir": { type: "string", default: ".codexd" },
            policies: { type: "string", default: "policies" },
            help: { type: "boolean", short: "h" },
          },
        });
        if (values.help) return help(io);
        if (!values.policy) throw new Error("policy replay needs --policy NAME");
        const { recordedApprovals } = await import("../daemon/recorded-approvals.ts");
        result = await policyReplay({
          policiesDir: values.policies,
          policy: values.policy,
          records: recordedApprovals(values["state-dir"], values.session),
        });
        break;
      }
      default:
        io.err(`codexd policy: unknown subcommand '${sub}'\n\n${HELP}`);
        return 2;
    }
  } catch (error) {
    io.err(`codexd policy ${sub}: ${errorMessage(error)}`);
    return 2;
  }
  if (result.output) (result.exitCode === 1 ? io.err : io.out)(result.output);
  return result.exitCode;
}

function help(io: CommandIo): number {
  io.out(HELP);
  return 0;
}

/** What every scenario gets: the shared scripted model, a worktree, the daemon mode, options. */
import type { ModelEndpoint, ScriptedModel } from "../../src/devtools/scripted-model.ts";
import type { BenchDaemonOptions, DaemonMode } from "./daemon.ts";
import type { DirectThreads } from "./direct.ts";

export interface BenchContext {
  /** Where codex finds the scripted model (a process of its own unless --model in-process). */
  model: ModelEndpoint;
  /** The in-process model, whose recorded requests the turn profile reads. */
  recordingModel: ScriptedModel;
  /** The model's own process, when it has one (the throughput scenario pins it). */
  modelPid?: number;
  /** A git worktree under the temp folder that sessions use as their cwd. */
  cwd: string;
  /** The native codex binary every scenario runs. */
  codexBinary: string;
  daemonMode: DaemonMode;
  /** How every direct client starts its threads: like the daemon, or bare (`--direct-bare`). */
  directThreads: DirectThreads;
  /** How every scenario starts its daemon beyond the mode (profiling flags). */
  daemonOptions: BenchDaemonOptions;
  quick: boolean;
  /** Progress lines go to stderr so stdout carries only the table. */
  log(message: string): void;
}

/** The marker that makes the scripted model stream the big answer (see throughput.ts). */
export const STREAM_MARKER = "BENCH_STREAM_1MB";

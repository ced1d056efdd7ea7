/**
 * The scripted model as tests below test/provider/ use it (one short import for the files whose
 * import paths are one folder deeper than the support's).
 */
export { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";

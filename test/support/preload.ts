/**
 * Loaded by bun before every test file (bunfig.toml). Its hooks are global: they run once for
 * the whole run, which is the only place bun:test offers for it (bun fires no process exit event
 * when a test run ends).
 */
import { afterAll } from "bun:test";
import { removeStateDirs } from "./daemon-process.ts";

afterAll(removeStateDirs);

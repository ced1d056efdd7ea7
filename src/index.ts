/**
 * codexd as a library: the client fleet runners use, and the provider contract.
 * The daemon itself is `src/main.ts` (`codexd serve`).
 */
export { CodexdApiError, CodexdClient } from "./client.ts";
export type { CodexdClientOptions } from "./client.ts";
export * from "./errors.ts";
export type {
  ApprovalRecord,
  ErrorCode,
  EventBody,
  SessionEvent,
  Usage,
} from "./provider/events.ts";
export { McpServer, PermissionConfig, PermissionMode, Spec } from "./provider/spec.ts";
export type { SpecInput } from "./provider/spec.ts";
export type {
  ApprovalContext,
  ApprovalRequest,
  ApprovalVerdict,
  Approver,
  Capabilities,
  Handle,
  InjectReceipt,
  Provider,
  SendReceipt,
} from "./provider/types.ts";

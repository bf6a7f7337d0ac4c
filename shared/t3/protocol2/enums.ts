// The enumerations of T3's orchestration protocol 2 (docs/t3-protocols.md, "Protocol 2"): run,
// item and shell statuses, request kinds, decisions, failure classes, modes. A leaf that the wire
// schemas (./schemas.ts), the shell row (./shell-row.ts) and the commands (./commands.ts) share.

export const RUN_STATUSES = [
  "preparing",
  "queued",
  "starting",
  "running",
  "waiting",
  "completed",
  "interrupted",
  "failed",
  "cancelled",
  "rolled_back",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number] | "unknown";
export const SHELL_THREAD_STATUSES = ["idle", ...RUN_STATUSES] as const;
export const ITEM_STATUSES = ["idle", "pending", "running", "waiting", "completed", "failed", "cancelled", "interrupted"] as const;
export const APPROVAL_REQUEST_KINDS = ["command", "file-read", "file-change", "mcp-elicitation", "permission", "dynamic_tool_call"] as const;
export const RUNTIME_REQUEST_KINDS = [...APPROVAL_REQUEST_KINDS, "user_input", "auth_refresh"] as const;
export type RuntimeRequestKind = (typeof RUNTIME_REQUEST_KINDS)[number] | "unknown";
export const APPROVAL_DECISIONS = ["accept", "acceptForSession", "acceptAlways", "decline", "cancel"] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];
export const FAILURE_CLASSES = ["usage_limit", "provider_error", "transport_error", "permission_error", "validation_error", "unknown"] as const;
export const RUNTIME_MODES = ["approval-required", "auto-accept-edits", "auto", "full-access"] as const;
export const INTERACTION_MODES = ["default", "plan"] as const;
export const PARENT_RELATIONSHIPS = ["fork", "subagent"] as const;

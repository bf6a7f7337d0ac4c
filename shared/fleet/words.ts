import type { DisplayStatus } from "./types";

/** Status words for people, shared by every shell (window, tray, notifications). */
export const STATUS_WORDS: Record<DisplayStatus, string> = {
  "needs-approval": "needs approval",
  "needs-input": "needs input",
  "needs-auth": "needs provider login",
  failed: "failed",
  stuck: "stuck starting",
  starting: "starting",
  queued: "queued",
  running: "running",
  waiting: "finishing",
  interrupted: "interrupted",
  idle: "idle",
  ended: "ended",
  deleted: "deleted",
  unknown: "unknown",
};

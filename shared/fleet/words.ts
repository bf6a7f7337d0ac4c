import type { DisplayStatus } from "./types";

/** Status words for people, shared by every shell (window, tray, notifications). */
export const STATUS_WORDS: Record<DisplayStatus, string> = {
  "needs-approval": "needs approval",
  "needs-input": "needs input",
  failed: "failed",
  starting: "starting",
  running: "running",
  idle: "idle",
  ended: "ended",
  unknown: "unknown",
};

// Whether a notification is already in front of the user: the one rule both the renderer's notices
// (and the browser's notifications) and the Electron shell's native notifications follow.
import type { NotificationIntent } from "./notifications";

/** What a fleet window shows the user right now. */
export interface WindowInView {
  /** The window has the keyboard focus (the user is looking at it). */
  focused: boolean;
  /** The agent whose panel it shows; null when it shows none. */
  agentKey: string | null;
}

/**
 * A notification about the agent a focused window shows is already in front of the user (its panel
 * says it): not shown again. Notifications about other agents, and about machines, still are.
 */
export function noticeInView(intent: Pick<NotificationIntent, "agentKey">, window: WindowInView): boolean {
  return window.focused && intent.agentKey !== null && intent.agentKey === window.agentKey;
}

// The window's notices (one per condition, the service's notification rule) and their browser
// notifications, shown like the Electron shell's native ones (shared/fleet/notice-in-view.ts).
import { noticeCondition, noticeIsCritical, noticeStillHolds, TRANSIENT_NOTICE_MS, type NotificationIntent } from "../../../shared/fleet/notifications";
import { noticeInView } from "../../../shared/fleet/notice-in-view";
import { navigation } from "./navigation";
import { useFleet } from "./store";

const noticeTimers = new Map<string, ReturnType<typeof setTimeout>>();
const browserNotices = new Map<string, Notification>();

function browserNotificationsUsable(): boolean {
  return !window.t3fleet && typeof Notification !== "undefined" && Notification.permission === "granted";
}

export function showNotice(intent: NotificationIntent): void {
  // The user is looking at this agent in a focused window: its panel already says it.
  if (noticeInView(intent, { focused: document.hasFocus(), agentKey: useFleet.getState().openKey })) return;
  const condition = noticeCondition(intent);
  const critical = noticeIsCritical(intent.reason);
  useFleet.getState().upsertNotice({ condition, intent, critical });
  clearTimeout(noticeTimers.get(condition));
  if (!critical)
    noticeTimers.set(
      condition,
      setTimeout(() => withdrawNotice(condition), TRANSIENT_NOTICE_MS),
    );
  // The browser gets the same notifications as the Electron shell's native ones, one per condition.
  if (browserNotificationsUsable()) {
    browserNotices.get(condition)?.close();
    const shown = new Notification(intent.title, { body: intent.body, tag: condition });
    shown.onclick = () => {
      window.focus();
      if (intent.agentKey) void navigation.openAgent(intent.agentKey);
    };
    browserNotices.set(condition, shown);
  }
}

export function withdrawNotice(condition: string): void {
  clearTimeout(noticeTimers.get(condition));
  noticeTimers.delete(condition);
  browserNotices.get(condition)?.close();
  browserNotices.delete(condition);
  useFleet.getState().withdrawNotices([condition]);
}

/** After every change of the facts: notices whose condition cleared go away. */
export function withdrawClearedNotices(): void {
  const { notices, agents, environments } = useFleet.getState();
  for (const notice of notices.values()) {
    const { intent } = notice;
    const agent = intent.agentKey ? agents.get(intent.agentKey) : undefined;
    if (!noticeStillHolds(intent, agent, environments.get(intent.environmentId))) withdrawNotice(notice.condition);
  }
}

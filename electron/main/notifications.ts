// Native notifications for the fleet's notification events: the shell's policy, against thin
// stand-ins of Electron's Notification and window so it is tested without launching Electron.
// - Not shown when a focused fleet window shows that agent (the same rule as the window's own
//   notices, shared/fleet/notice-in-view.ts); about other agents and machines they still show.
// - One per condition, as the window's notices: a newer one replaces the one still on screen.
// - A click opens that agent in the window.
import type { BridgeEvent } from "../../shared/bridge/contract";
import { noticeInView, type WindowInView } from "../../shared/fleet/notice-in-view";
import { type NotificationIntent, noticeCondition } from "../../shared/fleet/notifications";

/** The part of Electron's Notification this module uses. */
export interface NativeNotificationLike {
  on(event: "click" | "close", listener: () => void): void;
  show(): void;
  close(): void;
}

export interface NotifierShell {
  /** Creates (does not show) a native notification. */
  create(options: { title: string; body: string }): NativeNotificationLike;
  /** Whether the fleet window exists and has the focus. */
  windowFocused(): boolean;
  /** Shows and focuses the fleet window (creating it when it was closed). */
  showWindow(): void;
  /** Sends an event to the window's renderer. */
  send(event: BridgeEvent): void;
}

export class NativeNotifier {
  /** The agent whose panel the window shows, as the window last said (see ShellShowing). */
  private shownAgentKey: string | null = null;
  /**
   * Notifications on screen by condition. Held, too, so that a click still reaches its handler:
   * an Electron Notification nothing refers to may be collected while it is on screen.
   */
  private readonly onScreen = new Map<string, NativeNotificationLike>();

  constructor(private readonly shell: NotifierShell) {}

  /** The window says which agent it shows (null: none, or a new page that has not said yet). */
  showing(agentKey: string | null): void {
    this.shownAgentKey = agentKey;
  }

  /** What the window shows now, as the shared rule reads it. */
  inView(): WindowInView {
    return { focused: this.shell.windowFocused(), agentKey: this.shownAgentKey };
  }

  /** Shows a native notification unless it is already in view; true when shown. */
  notify(intent: NotificationIntent): boolean {
    if (noticeInView(intent, this.inView())) return false;
    const condition = noticeCondition(intent);
    this.onScreen.get(condition)?.close();
    const native = this.shell.create({ title: intent.title, body: intent.body });
    const forget = () => {
      if (this.onScreen.get(condition) === native) this.onScreen.delete(condition);
    };
    native.on("click", () => {
      forget();
      this.shell.showWindow();
      if (intent.agentKey) this.shell.send({ type: "ui.openAgent", key: intent.agentKey });
    });
    native.on("close", forget);
    this.onScreen.set(condition, native);
    native.show();
    return true;
  }
}

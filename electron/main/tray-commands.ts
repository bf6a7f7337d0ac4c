// The tray menu's registry commands (shared/fleet/action-registry.ts, surface "tray"): showing the
// window and quitting are the shell's own; every other command goes to the window, whose one
// dispatcher runs it (renderer/src/state/dispatch.ts), as a `ui.command` event on the bridge.
// Electron-free, so it is tested against stand-ins (./tray-commands.test.ts).
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { ActionId } from "../../shared/fleet/action-registry";

export interface WindowShell {
  /** Shows the window, creating it (and loading its page) when there is none. */
  showWindow(): void;
  /** A window exists, shown or not. */
  hasWindow(): boolean;
  /** Sends an event to the window's page (lost when no page runs). */
  send(event: BridgeEvent): void;
  quit(): void;
  /** Pausing or resuming with no window to run it: the same `settings.update` the window's command sends. */
  setNotificationsPaused(paused: boolean): void;
}

/**
 * Events for the window's page, held until it runs: a page that is loading has not subscribed to
 * the bridge yet, and an event sent then is lost (a tray item that opens a new window).
 */
export class WindowMailbox {
  private ready = false;
  private held: BridgeEvent[] = [];

  constructor(private readonly send: (event: BridgeEvent) => void) {}

  deliver(event: BridgeEvent): void {
    if (this.ready) this.send(event);
    else this.held.push(event);
  }

  /** The page finished loading (after the fleet snapshot was sent to it). */
  pageLoaded(): void {
    this.ready = true;
    const held = this.held;
    this.held = [];
    for (const event of held) this.send(event);
  }

  /** The page navigates (a reload) and runs again only once loaded. */
  pageLeft(): void {
    this.ready = false;
  }

  /** The window closed: nothing is waiting for a page that will not load. */
  windowClosed(): void {
    this.ready = false;
    this.held = [];
  }
}

export class TrayCommands {
  constructor(
    private readonly shell: WindowShell,
    private readonly mailbox: WindowMailbox,
  ) {}

  run(id: ActionId): void {
    switch (id) {
      case "app.open":
        this.shell.showWindow();
        return;
      case "app.quit":
        this.shell.quit();
        return;
      case "notifications.pause":
      case "notifications.resume":
        // Pausing does not bring the window up; a window that is there runs it like its own palette.
        if (this.shell.hasWindow()) this.mailbox.deliver({ type: "ui.command", id });
        else this.shell.setNotificationsPaused(id === "notifications.pause");
        return;
      default:
        this.shell.showWindow();
        this.mailbox.deliver({ type: "ui.command", id });
    }
  }

  /** A tray or notification item for one agent: the window opens on it. */
  openAgent(key: string): void {
    this.shell.showWindow();
    this.mailbox.deliver({ type: "ui.openAgent", key });
  }
}

// The tray's commands (./tray-commands.ts) against a stand-in for the window: the shell runs only
// showing the window and quitting; every other command reaches the window's dispatcher as a
// `ui.command` event, held while its page loads. Electron is not launched.
import { describe, expect, it } from "vitest";
import { ShellCommand, type BridgeEvent } from "../../shared/bridge/contract";
import { ACTIONS } from "../../shared/fleet/action-registry";
import { TrayCommands, WindowMailbox, type WindowShell } from "./tray-commands";

function shellStandIn(options: { window: boolean }) {
  const calls: string[] = [];
  const sent: BridgeEvent[] = [];
  let hasWindow = options.window;
  const shell: WindowShell = {
    showWindow: () => {
      calls.push("show");
      hasWindow = true;
    },
    hasWindow: () => hasWindow,
    send: (event) => sent.push(event),
    quit: () => calls.push("quit"),
    setNotificationsPaused: (paused) => calls.push(`paused:${paused}`),
  };
  const mailbox = new WindowMailbox(shell.send);
  return { calls, sent, mailbox, commands: new TrayCommands(shell, mailbox) };
}

describe("tray commands", () => {
  it("sends a window command to the page's dispatcher once the page has loaded, not before", () => {
    const { calls, sent, mailbox, commands } = shellStandIn({ window: false });
    commands.run("pairing.open");
    expect(calls).toEqual(["show"]);
    expect(sent).toEqual([]);
    mailbox.pageLoaded();
    expect(sent).toEqual([{ type: "ui.command", id: "pairing.open" }]);
    // What the window reads off the bridge is a command the registry names.
    expect(ShellCommand.parse(sent[0])).toEqual({ type: "ui.command", id: "pairing.open" });
  });

  it("a loaded page gets it at once; a reloading one once it has loaded again", () => {
    const { sent, mailbox, commands } = shellStandIn({ window: true });
    mailbox.pageLoaded();
    commands.run("pairing.open");
    expect(sent).toHaveLength(1);
    mailbox.pageLeft();
    commands.openAgent("env/thread");
    expect(sent).toHaveLength(1);
    mailbox.pageLoaded();
    expect(sent.at(-1)).toEqual({ type: "ui.openAgent", key: "env/thread" });
  });

  it("pausing goes through the open window without bringing it up; with no window the shell asks the service itself", () => {
    const open = shellStandIn({ window: true });
    open.mailbox.pageLoaded();
    open.commands.run("notifications.pause");
    expect(open.calls).toEqual([]);
    expect(open.sent).toEqual([{ type: "ui.command", id: "notifications.pause" }]);

    const closed = shellStandIn({ window: false });
    closed.commands.run("notifications.resume");
    expect(closed.calls).toEqual(["paused:false"]);
    expect(closed.sent).toEqual([]);
  });

  it("showing the window and quitting are the shell's own; a closed window drops what waited for it", () => {
    const { calls, sent, mailbox, commands } = shellStandIn({ window: false });
    commands.run("app.open");
    commands.run("pairing.open");
    mailbox.windowClosed();
    mailbox.pageLoaded();
    commands.run("app.quit");
    expect(calls).toEqual(["show", "show", "quit"]);
    expect(sent).toEqual([]);
  });

  it("the window refuses an id the registry does not name, and a view's own action (it takes arguments the shell never has)", () => {
    expect(ShellCommand.safeParse({ type: "ui.command", id: "app.format-disk" }).success).toBe(false);
    for (const spec of ACTIONS) expect(ShellCommand.safeParse({ type: "ui.command", id: spec.id }).success).toBe(spec.surfaces.length > 0);
    expect(ShellCommand.safeParse({ type: "ui.command", id: "machine.remove" }).success).toBe(false);
  });
});

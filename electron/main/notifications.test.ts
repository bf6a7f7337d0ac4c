// The native notification policy (./notifications.ts) against thin stand-ins for Electron's
// Notification and window, and the window's report of the agent it shows over the checked IPC
// bridge (./bridge-ipc.ts). Electron is not launched.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import { MemorySecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { APP_URL } from "./app-protocol";
import { REQUEST_CHANNEL } from "../../shared/bridge/ipc-channels";
import { type IpcMainLike, registerBridge } from "./bridge-ipc";
import { type NativeNotificationLike, NativeNotifier } from "./notifications";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

class FakeNotification implements NativeNotificationLike {
  shown = false;
  closed = false;
  private readonly listeners = new Map<string, (() => void)[]>();
  constructor(readonly options: { title: string; body: string }) {}
  on(event: "click" | "close", listener: () => void): void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
  }
  show(): void {
    this.shown = true;
  }
  close(): void {
    this.closed = true;
    this.emit("close");
  }
  emit(event: "click" | "close"): void {
    for (const listener of this.listeners.get(event) ?? []) listener();
  }
}

function desktop() {
  const created: FakeNotification[] = [];
  const sent: BridgeEvent[] = [];
  const state = { focused: true, windowShown: 0 };
  const notifier = new NativeNotifier({
    create: (options) => {
      const native = new FakeNotification(options);
      created.push(native);
      return native;
    },
    windowFocused: () => state.focused,
    showWindow: () => state.windowShown++,
    send: (event) => sent.push(event),
  });
  const shown = () => created.filter((native) => native.shown).map((native) => native.options.title);
  return { notifier, created, sent, state, shown };
}

const intent = (agentKey: string | null, reason: NotificationIntent["reason"], title: string): NotificationIntent => ({
  id: `${agentKey ?? "env"}:${reason}:${title}`,
  reason,
  environmentId: "env",
  agentKey,
  title,
  body: `${title}, in detail`,
});

describe("native notifications", () => {
  it("are not shown for the agent a focused window shows; other agents and machines still notify while focused", () => {
    const { notifier, state, shown } = desktop();
    notifier.showing("env/deploy");
    expect(notifier.notify(intent("env/deploy", "needs-approval", "Deploy needs you"))).toBe(false);
    expect(notifier.notify(intent("env/build", "failed", "Build failed"))).toBe(true);
    expect(notifier.notify(intent(null, "offline", "Studio is offline"))).toBe(true);
    // Not focused: the window may show it, the user is not looking.
    state.focused = false;
    expect(notifier.notify(intent("env/deploy", "failed", "Deploy failed"))).toBe(true);
    // Focused again, showing no agent (the list): every notification shows.
    state.focused = true;
    notifier.showing(null);
    expect(notifier.notify(intent("env/deploy", "needs-input", "Deploy asks"))).toBe(true);
    expect(shown()).toEqual(["Build failed", "Studio is offline", "Deploy failed", "Deploy asks"]);
  });

  it("a click opens that agent in the window; a machine's notification opens the window", () => {
    const { notifier, created, sent, state } = desktop();
    state.focused = false;
    notifier.notify(intent("env/build", "failed", "Build failed"));
    notifier.notify(intent(null, "offline", "Studio is offline"));
    created[0]!.emit("click");
    expect(state.windowShown).toBe(1);
    expect(sent).toEqual([{ type: "ui.openAgent", key: "env/build" }]);
    created[1]!.emit("click");
    expect(state.windowShown).toBe(2);
    expect(sent).toHaveLength(1);
  });

  it("keeps one notification per condition on screen: a newer one replaces the older", () => {
    const { notifier, created, state } = desktop();
    state.focused = false;
    notifier.notify(intent("env/build", "failed", "Build failed"));
    notifier.notify(intent("env/build", "failed", "Build failed again"));
    notifier.notify(intent("env/deploy", "failed", "Deploy failed"));
    expect(created.map((native) => [native.options.title, native.closed])).toEqual([
      ["Build failed", true],
      ["Build failed again", false],
      ["Deploy failed", false],
    ]);
    // Closed by the user: nothing left to replace, and a click on the closed one cannot be replayed wrongly.
    created[1]!.close();
    notifier.notify(intent("env/build", "failed", "Build failed a third time"));
    expect(created.filter((native) => native.closed)).toHaveLength(2);
  });

  it("learns which agent the window shows through the checked IPC bridge, decoded with its schema", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-notify-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const service = await FleetService.start({ dataDir: dir, secrets: new MemorySecretStore() });
    cleanups.push(() => service.stop());
    const { notifier } = desktop();
    const handlers = new Map<string, Parameters<IpcMainLike["handle"]>[1]>();
    registerBridge(
      {
        handle: (channel, listener) => handlers.set(channel, listener),
        removeHandler: (channel) => handlers.delete(channel),
        on: () => {},
        removeAllListeners: () => {},
      },
      service,
      () => APP_URL,
      () => {},
      notifier,
    );
    const invoke = handlers.get(REQUEST_CHANNEL)!;
    const app = { senderFrame: { url: APP_URL, parent: null } };

    expect(await invoke(app, "shell.showing", { key: "env/deploy" })).toEqual({ ok: true, result: null });
    expect(notifier.inView()).toEqual({ focused: true, agentKey: "env/deploy" });
    expect(await invoke(app, "shell.showing", { key: 42 })).toEqual({ ok: false, error: { kind: "invalid", message: "Invalid shell.showing request." } });
    expect(await invoke({ senderFrame: { url: "https://evil.example/", parent: null } }, "shell.showing", { key: "env/other" })).toMatchObject({
      ok: false,
      error: { kind: "forbidden" },
    });
    expect(notifier.inView().agentKey).toBe("env/deploy");
    expect(await invoke(app, "shell.showing", { key: null })).toEqual({ ok: true, result: null });
    expect(notifier.inView().agentKey).toBeNull();
  });
});

// The fleet's settings (kept by the service) and the browser's permission to notify.
import type { BridgeParams } from "../../../shared/bridge/contract";
import { requireBridge, run } from "./requests";
import { useFleet } from "./store";

export const settingsCommands = {
  async updateSettings(patch: BridgeParams<"settings.update">): Promise<void> {
    const state = useFleet.getState();
    const current = state.settings;
    // Show the choice at once; the service's answer (or its refusal) then settles it.
    if (current) state.receiveSettings({ ...current, ...patch, notifications: { ...current.notifications, ...patch.notifications } });
    const saved = await run("settings", () => requireBridge().request("settings.update", patch));
    useFleet.getState().receiveSettings(saved ?? current);
  },

  /** Asks for the browser's permission to notify (must run from a click). */
  async enableBrowserNotifications(): Promise<NotificationPermission> {
    if (typeof Notification === "undefined") return "denied";
    return Notification.requestPermission();
  },
};

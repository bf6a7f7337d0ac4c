// The fleet bridge over Electron IPC: one invoke channel for requests (sender-checked), one push
// channel for events. The renderer sees only what the preload exposes: request() and onEvent().
// The window's own report of the agent it shows (SHELL_SHOWING_METHOD) is answered here, for the
// notification policy (./notifications.ts); every other request goes to the fleet service.
import { type BridgeEvent, SHELL_SHOWING_METHOD, ShellShowing } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { REQUEST_CHANNEL } from "../../shared/bridge/ipc-channels";
import { BridgeError } from "../fleet/bridge-error";
import type { FleetService } from "../fleet/service";
import { isTrustedSender } from "./guards";

export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame: { url: string; parent: unknown } | null }, ...args: unknown[]) => Promise<unknown>): void;
  removeHandler(channel: string): void;
}

/** The one window's page, as a viewer of agents (electron/fleet/agent-details.ts); it leaves when the page navigates or the window closes. */
export const WINDOW_VIEWER = "window";

export type BridgeAnswer = { ok: true; result: unknown } | { ok: false; error: { kind: string; message: string } };

/** What the shell does with the window's reports. */
export interface ShellReports {
  showing(agentKey: string | null): void;
}

export function registerBridge(
  ipcMain: IpcMainLike,
  service: FleetService,
  appUrl: () => string,
  send: (event: BridgeEvent) => void,
  shell?: ShellReports,
): () => void {
  ipcMain.handle(REQUEST_CHANNEL, async (event, method, params): Promise<BridgeAnswer> => {
    if (!isTrustedSender(event.senderFrame, appUrl())) return { ok: false, error: { kind: "forbidden", message: "Untrusted sender." } };
    if (typeof method !== "string") return { ok: false, error: { kind: "invalid", message: "Invalid request." } };
    if (method === SHELL_SHOWING_METHOD) {
      const report = ShellShowing.safeParse(params);
      if (!report.success) return { ok: false, error: { kind: "invalid", message: `Invalid ${SHELL_SHOWING_METHOD} request.` } };
      shell?.showing(report.data.key);
      return { ok: true, result: null };
    }
    try {
      return { ok: true, result: (await service.request(method, params, WINDOW_VIEWER)) ?? null };
    } catch (error) {
      // Error texts may quote a pairing link: its code never reaches the page.
      return { ok: false, error: { kind: error instanceof BridgeError ? error.kind : "internal", message: describeError(error) } };
    }
  });
  service.on("event", send);
  return () => {
    ipcMain.removeHandler(REQUEST_CHANNEL);
    service.off("event", send);
  };
}

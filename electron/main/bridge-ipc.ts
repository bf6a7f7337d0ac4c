// The fleet bridge over Electron IPC: one invoke channel for requests (sender-checked), one push
// channel for events, paced by the page (shared/bridge/paced-feed.ts) which acknowledges each batch
// on its own channel (sender-checked, decoded with BridgeAck). The renderer sees only what the
// preload exposes: request(), onEvent() and ack().
// The window's own report of the agent it shows (SHELL_SHOWING_METHOD) is answered here, for the
// notification policy (./notifications.ts); every other request goes to the fleet service.
import { BridgeAck, type BridgeBatch, type BridgeEvent, SHELL_SHOWING_METHOD, ShellShowing } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { ACK_CHANNEL, REQUEST_CHANNEL } from "../../shared/bridge/ipc-channels";
import { PacedFeed } from "../../shared/bridge/paced-feed";
import { SNAPSHOT_PIECE_BYTES, snapshotEvents } from "../../shared/bridge/snapshot-pieces";
import { BridgeError } from "../fleet/bridge-error";
import type { FleetService } from "../fleet/service";
import { isTrustedSender } from "./guards";

type IpcSender = { senderFrame: { url: string; parent: unknown } | null };

export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcSender, ...args: unknown[]) => Promise<unknown>): void;
  removeHandler(channel: string): void;
  on(channel: string, listener: (event: IpcSender, message: unknown) => void): void;
  removeAllListeners(channel: string): void;
}

export interface IpcBridge {
  /** The page (re)loaded: it gets a fresh snapshot, and the feed starts over from it. */
  pageLoaded(): void;
  dispose(): void;
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
  send: (message: BridgeEvent | BridgeBatch) => void,
  shell?: ShellReports,
): IpcBridge {
  let sendDue = false;
  // A batch goes after the task that made its changes (and the transcript deltas it queued) is done.
  const feed: PacedFeed = new PacedFeed(() => {
    if (sendDue) return;
    sendDue = true;
    setImmediate(() => {
      sendDue = false;
      if (feed.overflowed) pageLoaded();
      const batch = feed.take();
      if (batch) send(batch);
    });
  });
  const pageLoaded = () => {
    // In pieces, as the headless shell does: a flooded machine never makes one huge IPC message.
    const snapshot = service.snapshot();
    feed.resync(snapshot.agents);
    for (const event of snapshotEvents(snapshot, SNAPSHOT_PIECE_BYTES)) send(event);
  };
  const onOpened = (key: string, viewer: string) => {
    if (viewer === WINDOW_VIEWER) feed.opened(key);
  };
  ipcMain.on(ACK_CHANNEL, (event, message) => {
    if (!isTrustedSender(event.senderFrame, appUrl())) return;
    const ack = BridgeAck.safeParse(message);
    if (ack.success) feed.ack(ack.data.seq);
  });
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
  const onEvent = (event: BridgeEvent) => feed.push(event);
  service.on("event", onEvent);
  service.on("opened", onOpened);
  return {
    pageLoaded,
    dispose: () => {
      ipcMain.removeHandler(REQUEST_CHANNEL);
      ipcMain.removeAllListeners(ACK_CHANNEL);
      service.off("event", onEvent);
      service.off("opened", onOpened);
    },
  };
}

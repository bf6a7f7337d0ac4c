// Sandboxed preload: exposes three named functions, never ipcRenderer itself.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from "electron";
import { ACK_CHANNEL, EVENT_CHANNEL, REQUEST_CHANNEL } from "../../shared/bridge/ipc-channels";

contextBridge.exposeInMainWorld("t3fleet", {
  request: (method: string, params: unknown) => ipcRenderer.invoke(REQUEST_CHANNEL, method, params),
  onEvent: (listener: (event: unknown) => void) => {
    const handler = (_event: IpcRendererEvent, payload: unknown) => listener(payload);
    ipcRenderer.on(EVENT_CHANNEL, handler);
    return () => ipcRenderer.removeListener(EVENT_CHANNEL, handler);
  },
  /** The page took a paced batch of events (shared/bridge/paced-feed.ts); the main process decodes it. */
  ack: (seq: unknown) => ipcRenderer.send(ACK_CHANNEL, { type: "ack", seq }),
});

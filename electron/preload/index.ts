// Sandboxed preload: exposes two named functions, never ipcRenderer itself.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from "electron";
import { EVENT_CHANNEL, REQUEST_CHANNEL } from "../../shared/bridge/ipc-channels";

contextBridge.exposeInMainWorld("t3fleet", {
  request: (method: string, params: unknown) => ipcRenderer.invoke(REQUEST_CHANNEL, method, params),
  onEvent: (listener: (event: unknown) => void) => {
    const handler = (_event: IpcRendererEvent, payload: unknown) => listener(payload);
    ipcRenderer.on(EVENT_CHANNEL, handler);
    return () => ipcRenderer.removeListener(EVENT_CHANNEL, handler);
  },
});

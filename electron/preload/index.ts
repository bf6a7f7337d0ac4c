// Sandboxed preload: exposes named bridge methods only, never ipcRenderer itself.
import { contextBridge } from "electron";

contextBridge.exposeInMainWorld("t3fleet", { version: 1 });

// The Electron IPC channels of the fleet bridge: one invoke channel for requests, one push channel
// for events, and one for the page's acknowledgements of paced batches. Imports nothing, so the
// sandboxed preload (electron/preload/index.ts) bundles only these names, and the main process
// (electron/main/bridge-ipc.ts) uses the same ones.
export const REQUEST_CHANNEL = "t3fleet:request";
export const EVENT_CHANNEL = "t3fleet:event";
export const ACK_CHANNEL = "t3fleet:ack";

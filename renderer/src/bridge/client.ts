// The renderer's only way to the fleet: the typed bridge, over the Electron preload or the
// headless shell's WebSocket. It never holds a token and never talks to a T3 server.
import type { BridgeEvent, BridgeMethod, BridgeParams, BridgeResults, BridgeServerMessage } from "../../../shared/bridge/contract";

export interface Bridge {
  request<M extends BridgeMethod>(method: M, params: BridgeParams<M>): Promise<BridgeResults[M]>;
  onEvent(listener: (event: BridgeEvent) => void): () => void;
  onConnection(listener: (connected: boolean) => void): () => void;
}

export class BridgeRequestError extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the Electron preload exposes (named methods only, never ipcRenderer). */
interface PreloadBridge {
  request(method: string, params: unknown): Promise<{ ok: true; result: unknown } | { ok: false; error: { kind: string; message: string } }>;
  onEvent(listener: (event: BridgeEvent) => void): () => void;
}

declare global {
  interface Window {
    t3fleet?: PreloadBridge;
  }
}

/** Reconnect delay for the page's own socket to the local headless shell (same machine, cheap). */
const BRIDGE_RECONNECT_MS = 1_000;

function webSocketBridge(): Bridge {
  const eventListeners = new Set<(event: BridgeEvent) => void>();
  const connectionListeners = new Set<(connected: boolean) => void>();
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let socket: WebSocket | undefined;
  let nextId = 1;
  let queue: string[] = [];

  const connect = () => {
    const url = new URL("/bridge", window.location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    // The page's HttpOnly same-site cookie carries the per-launch token (the URL's copy is dropped at start).
    const ws = new WebSocket(url);
    socket = ws;
    ws.addEventListener("open", () => {
      for (const text of queue) ws.send(text);
      queue = [];
      connectionListeners.forEach((listener) => listener(true));
    });
    ws.addEventListener("message", (message) => {
      let parsed: BridgeServerMessage;
      try {
        parsed = JSON.parse(String(message.data)) as BridgeServerMessage;
      } catch {
        return;
      }
      if (parsed.type === "event") eventListeners.forEach((listener) => listener(parsed.event));
      else {
        const entry = pending.get(parsed.id);
        pending.delete(parsed.id);
        if (!entry) return;
        if (parsed.ok) entry.resolve(parsed.result);
        else entry.reject(new BridgeRequestError(parsed.error.kind, parsed.error.message));
      }
    });
    ws.addEventListener("close", () => {
      connectionListeners.forEach((listener) => listener(false));
      for (const entry of pending.values()) entry.reject(new BridgeRequestError("disconnected", "The connection to T3 Fleet was lost."));
      pending.clear();
      setTimeout(connect, BRIDGE_RECONNECT_MS);
    });
  };
  connect();

  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        const text = JSON.stringify({ type: "request", id, method, params });
        if (socket?.readyState === WebSocket.OPEN) socket.send(text);
        else queue.push(text);
      }),
    onEvent: (listener) => {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    onConnection: (listener) => {
      connectionListeners.add(listener);
      return () => connectionListeners.delete(listener);
    },
  };
}

function preloadBridge(preload: PreloadBridge): Bridge {
  return {
    request: async (method, params) => {
      const answer = await preload.request(method, params);
      if (!answer.ok) throw new BridgeRequestError(answer.error.kind, answer.error.message);
      return answer.result as never;
    },
    onEvent: (listener) => preload.onEvent(listener),
    onConnection: (listener) => {
      listener(true);
      return () => {};
    },
  };
}

export function createBridge(): Bridge {
  if (window.t3fleet) return preloadBridge(window.t3fleet);
  // Keep the launch token out of history, bookmarks and screenshots; the cookie now carries it.
  if (new URLSearchParams(window.location.search).has("token")) window.history.replaceState(null, "", window.location.pathname);
  return webSocketBridge();
}

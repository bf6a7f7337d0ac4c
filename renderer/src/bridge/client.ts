// The renderer's only way to the fleet: the typed bridge, over the Electron preload or the
// headless shell's WebSocket. It never holds a token and never talks to a T3 server.
import {
  BRIDGE_CLOSE_UNAUTHORIZED,
  BRIDGE_SESSION_PROTOCOL_PREFIX,
  BRIDGE_SUBPROTOCOL,
  MAX_BRIDGE_FRAME_BYTES,
  SHELL_SHOWING_METHOD,
  type BridgeAck,
  type BridgeBatch,
  type BridgeEvent,
  type BridgeMethod,
  type BridgeParams,
  type BridgeResults,
  type BridgeServerMessage,
} from "../../../shared/bridge/contract";
import { batchReceiver } from "./batch-receiver";

export interface Bridge {
  request<M extends BridgeMethod>(method: M, params: BridgeParams<M>): Promise<BridgeResults[M]>;
  onEvent(listener: (event: BridgeEvent) => void): () => void;
  /** Connected or not; `problem` says why when reconnecting cannot help (a spent launch link). */
  onConnection(listener: (connected: boolean, problem?: string) => void): () => void;
  /** Tells the desktop shell which agent this window shows, for its native notifications (Electron only). */
  showing?(agentKey: string | null): void;
}

/**
 * The kind of a request that left on a socket which then closed before its answer came: the service
 * may have carried it out. One that never left (the socket was not open) fails as "not-connected".
 */
export const ANSWER_LOST = "disconnected";

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
  onEvent(listener: (event: BridgeEvent | BridgeBatch) => void): () => void;
  ack(seq: number): void;
}

declare global {
  interface Window {
    t3fleet?: PreloadBridge;
  }
}

/** Reconnect delay for the page's own socket to the local headless shell (same machine, cheap). */
const BRIDGE_RECONNECT_MS = 1_000;
/** This tab's session with the headless shell: sessionStorage is per tab and survives a reload. */
const SESSION_STORAGE_KEY = "t3fleet.session";
const NO_ACCESS =
  "This page has no access to T3 Fleet: its launch link works once, in one tab. Open the link T3 Fleet printed when it started (restart it for a new one).";

/** A request's frame in UTF-8 bytes, without allocating a copy of a large text. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      bytes += 4;
      index++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Trades the launch link's one-time code (in the fragment, which no request carries) for a session
 * secret kept in this tab's sessionStorage, and drops the code from the address bar and history entry.
 * A reload finds the secret again; a copy of the link in another tab or browser finds a spent code.
 */
async function openSession(): Promise<string | undefined> {
  const code = new URLSearchParams(window.location.hash.slice(1)).get("code");
  if (code) {
    window.history.replaceState(null, "", window.location.pathname);
    try {
      const response = await fetch("/session", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code }),
        credentials: "omit",
        cache: "no-store",
      });
      const answer: unknown = response.ok ? await response.json() : undefined;
      const session = typeof answer === "object" && answer !== null ? (answer as { session?: unknown }).session : undefined;
      if (typeof session === "string") window.sessionStorage.setItem(SESSION_STORAGE_KEY, session);
    } catch {
      // The shell is gone: nothing to trade the code with; the socket below reports it.
    }
  }
  return window.sessionStorage.getItem(SESSION_STORAGE_KEY) ?? undefined;
}

function webSocketBridge(): Bridge {
  const eventListeners = new Set<(event: BridgeEvent) => void>();
  const connectionListeners = new Set<(connected: boolean, problem?: string) => void>();
  /** `sent`: written to an open socket (its answer can then be lost with the socket). */
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; sent: boolean }>();
  let socket: WebSocket | undefined;
  let nextId = 1;
  let queue: { id: number; text: string }[] = [];
  let denied: string | undefined;
  const session = openSession();

  const deny = (problem: string) => {
    denied = problem;
    connectionListeners.forEach((listener) => listener(false, problem));
    for (const entry of pending.values()) entry.reject(new BridgeRequestError("unauthorized", problem));
    pending.clear();
    queue = [];
  };

  const connect = async () => {
    const secret = await session;
    if (!secret) return deny(NO_ACCESS);
    const url = new URL("/bridge", window.location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    // The session secret rides in the handshake as a second subprotocol; the shell answers with the first.
    const ws = new WebSocket(url, [BRIDGE_SUBPROTOCOL, `${BRIDGE_SESSION_PROTOCOL_PREFIX}${secret}`]);
    socket = ws;
    ws.addEventListener("open", () => {
      for (const { id, text } of queue) {
        ws.send(text);
        const entry = pending.get(id);
        if (entry) entry.sent = true;
      }
      queue = [];
      connectionListeners.forEach((listener) => listener(true));
    });
    const receiveBatch = batchReceiver(
      () => eventListeners,
      (seq) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "ack", seq } satisfies BridgeAck));
      },
    );
    ws.addEventListener("message", (message) => {
      let parsed: BridgeServerMessage;
      try {
        parsed = JSON.parse(String(message.data)) as BridgeServerMessage;
      } catch {
        return;
      }
      if (parsed.type === "event") eventListeners.forEach((listener) => listener(parsed.event));
      else if (parsed.type === "events") receiveBatch(parsed);
      else {
        const entry = pending.get(parsed.id);
        pending.delete(parsed.id);
        if (!entry) return;
        if (parsed.ok) entry.resolve(parsed.result);
        else entry.reject(new BridgeRequestError(parsed.error.kind, parsed.error.message));
      }
    });
    ws.addEventListener("close", (event) => {
      if (event.code === BRIDGE_CLOSE_UNAUTHORIZED) {
        window.sessionStorage.removeItem(SESSION_STORAGE_KEY);
        return deny(NO_ACCESS);
      }
      connectionListeners.forEach((listener) => listener(false));
      for (const entry of pending.values())
        entry.reject(
          entry.sent
            ? new BridgeRequestError(ANSWER_LOST, "The connection to T3 Fleet was lost.")
            : new BridgeRequestError("not-connected", "T3 Fleet is not connected, so nothing was sent. Try again once it is back."),
        );
      pending.clear();
      // Failed requests are not sent later: the page was told they failed.
      queue = [];
      setTimeout(() => void connect(), BRIDGE_RECONNECT_MS);
    });
  };
  void connect();

  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        if (denied) return reject(new BridgeRequestError("unauthorized", denied));
        const id = nextId++;
        const text = JSON.stringify({ type: "request", id, method, params });
        // The shell would close the socket on a larger frame (1009), failing every pending request.
        const bytes = utf8Length(text);
        if (bytes > MAX_BRIDGE_FRAME_BYTES) {
          const size = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
          return reject(
            new BridgeRequestError("too-large", `This request is ${size(bytes)}, over T3 Fleet's ${size(MAX_BRIDGE_FRAME_BYTES)} limit; nothing was sent.`),
          );
        }
        const open = socket?.readyState === WebSocket.OPEN ? socket : undefined;
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject, sent: open !== undefined });
        if (open) open.send(text);
        else queue.push({ id, text });
      }),
    onEvent: (listener) => {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    onConnection: (listener) => {
      connectionListeners.add(listener);
      if (denied) listener(false, denied);
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
    onEvent: (listener) => {
      const receiveBatch = batchReceiver(
        () => [listener],
        (seq) => preload.ack(seq),
      );
      return preload.onEvent((message) => {
        if (message.type === "events") receiveBatch(message);
        else listener(message);
      });
    },
    onConnection: (listener) => {
      listener(true);
      return () => {};
    },
    showing: (agentKey) => {
      // A lost report only means a notification about the shown agent may show once: nothing to retry.
      preload.request(SHELL_SHOWING_METHOD, { key: agentKey }).catch(() => {});
    },
  };
}

export function createBridge(): Bridge {
  if (window.t3fleet) return preloadBridge(window.t3fleet);
  return webSocketBridge();
}

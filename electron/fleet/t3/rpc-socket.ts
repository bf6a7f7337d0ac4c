// Effect-RPC JSON over one WebSocket (docs/t3-protocols.md, the shared transport). Owns request ids, Acks, Ping
// liveness and Interrupts for a socket; knows nothing about orchestration.
import { WebSocket } from "undici";
import { decodeWith, parseJson } from "../../../shared/t3/decode";
import { T3Error, rpcFailure } from "../../../shared/t3/errors";
import type { SkippedItem } from "../../../shared/fleet/types";
import { defectText, type RpcClientFrame, RpcServerFrame } from "../../../shared/t3/rpc-frames";

/** Effect's own client pings every 5 s and gives up when the Pong has not come by the next tick. */
export const DEFAULT_PING_INTERVAL_MS = 5_000;
/** Opening a socket on a LAN or tailnet takes well under this; longer means the host is gone. */
export const DEFAULT_OPEN_TIMEOUT_MS = 10_000;
/** Largest frame accepted; a full shell snapshot of 5,000 threads is ~10 MB. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** Browsers and undici only let a client send 1000 or an application code (3000-4999). */
const CLOSE_PROTOCOL_ERROR = 4002;

export interface RpcSocketOptions {
  url: string;
  headers?: Record<string, string>;
  pingIntervalMs?: number;
  openTimeoutMs?: number;
  /** Observes every frame in both directions (tests, recording). */
  onFrame?: (direction: "send" | "recv", frame: unknown) => void;
}

export interface StreamHandlers {
  /** Receives each chunk's raw values, after the Ack has been sent. */
  onValues: (values: readonly unknown[]) => void;
  /** The stream ended: `error` is undefined for a clean end. Called exactly once. */
  onEnd: (error?: T3Error) => void;
}

export interface StreamHandle {
  readonly requestId: string;
  /** Sends an Interrupt; onEnd follows when the server confirms or the socket closes. */
  interrupt(): void;
}

type Pending =
  | { kind: "call"; tag: string; resolve: (value: unknown) => void; reject: (error: T3Error) => void; timer?: NodeJS.Timeout }
  | { kind: "stream"; tag: string; handlers: StreamHandlers };

function belongsToRequest(message: unknown): boolean {
  if (typeof message !== "object" || message === null) return false;
  const frame = message as { _tag?: unknown; requestId?: unknown };
  return frame._tag === "Chunk" || frame._tag === "Exit" || frame.requestId !== undefined;
}

/** Whether unparseable frame text could be a request's Chunk or Exit: it names a request id or those tags. */
function mayBelongToRequest(text: string): boolean {
  return /"requestId"|"_tag"\s*:\s*"(?:Chunk|Exit)"/.test(text.slice(0, 4_096));
}

export class RpcSocket {
  private readonly pending = new Map<string, Pending>();
  private nextId = 1;
  private pingTimer: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private closedWith: T3Error | undefined;
  /** When the server was last heard from (any frame): the "last confirmed" time of an environment. */
  lastFrameAt = Date.now();
  private readonly closeListeners = new Set<(error: T3Error) => void>();
  private readonly skippedListeners = new Set<(item: SkippedItem) => void>();

  private constructor(
    private readonly ws: WebSocket,
    private readonly options: RpcSocketOptions,
  ) {}

  /** Opens the socket; rejects with a typed error when the upgrade fails or takes too long. */
  static open(options: RpcSocketOptions): Promise<RpcSocket> {
    return new Promise((resolve, reject) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(options.url, { headers: options.headers ?? {} });
      } catch {
        // Not the constructor's message: it quotes the URL, whose query carries the socket credential.
        reject(new T3Error("network", "The server's WebSocket address is not valid."));
        return;
      }
      const timer = setTimeout(() => {
        ws.close();
        reject(new T3Error("timeout", "The WebSocket did not open in time."));
      }, options.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS);
      const fail = () => {
        clearTimeout(timer);
        // undici hides the HTTP status of a refused upgrade; callers probe auth over HTTP to tell 401 apart.
        reject(new T3Error("network", "The WebSocket connection was refused or dropped during the upgrade."));
      };
      ws.addEventListener("error", fail, { once: true });
      ws.addEventListener(
        "open",
        () => {
          clearTimeout(timer);
          ws.removeEventListener("error", fail);
          const socket = new RpcSocket(ws, options);
          socket.attach();
          resolve(socket);
        },
        { once: true },
      );
    });
  }

  get isOpen(): boolean {
    return this.closedWith === undefined;
  }

  /** Called once when the socket closes for any reason (after all pending work failed). */
  onClose(listener: (error: T3Error) => void): () => void {
    if (this.closedWith) {
      listener(this.closedWith);
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Called for each frame that did not decode and was skipped because no request depended on it. */
  onSkipped(listener: (item: SkippedItem) => void): () => void {
    this.skippedListeners.add(listener);
    return () => this.skippedListeners.delete(listener);
  }

  /** A unary call: resolves with the Exit Success value, rejects with a typed error. */
  call(tag: string, payload: unknown, timeoutMs?: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.closedWith) return reject(this.closedWith);
      const id = String(this.nextId++);
      const entry: Pending = { kind: "call", tag, resolve, reject };
      if (timeoutMs !== undefined) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          this.send({ _tag: "Interrupt", requestId: id });
          reject(new T3Error("timeout", `${tag}: no answer within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      this.pending.set(id, entry);
      this.send({ _tag: "Request", id, tag, payload, headers: [] });
    });
  }

  stream(tag: string, payload: unknown, handlers: StreamHandlers): StreamHandle {
    const id = String(this.nextId++);
    if (this.closedWith) {
      const error = this.closedWith;
      queueMicrotask(() => handlers.onEnd(error));
    } else {
      this.pending.set(id, { kind: "stream", tag, handlers });
      this.send({ _tag: "Request", id, tag, payload, headers: [] });
    }
    return {
      requestId: id,
      interrupt: () => {
        if (this.pending.has(id)) this.send({ _tag: "Interrupt", requestId: id });
      },
    };
  }

  /** Round-trips a Ping within `timeoutMs`: proves the server is still there (after system wake). */
  probe(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closedWith) return reject(this.closedWith);
      const timer = setTimeout(() => {
        this.pongWaiters.delete(onPong);
        offClose();
        reject(new T3Error("timeout", "The server did not answer a ping."));
      }, timeoutMs);
      const offClose = this.onClose((error) => {
        clearTimeout(timer);
        reject(error);
      });
      const onPong = () => {
        clearTimeout(timer);
        offClose();
        resolve();
      };
      this.pongWaiters.add(onPong);
      this.send({ _tag: "Ping" });
    });
  }

  private readonly pongWaiters = new Set<() => void>();

  /** Closes the socket; every pending call and stream ends with `reason`. */
  close(reason = new T3Error("interrupted", "The connection was closed by the client.")): void {
    if (this.closedWith) return;
    this.shutdown(reason);
    try {
      this.send({ _tag: "Eof" });
    } catch {
      // Socket already unusable; nothing to tell the server.
    }
    this.ws.close(1000);
  }

  private attach(): void {
    this.ws.addEventListener("message", (event) => this.receive(event.data));
    this.ws.addEventListener("close", () => this.shutdown(new T3Error("network", "The connection to the server was lost.")));
    this.ws.addEventListener("error", () => this.shutdown(new T3Error("network", "The connection to the server failed.")));
    const interval = this.options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
    this.pingTimer = setInterval(() => this.heartbeat(), interval);
    this.pingTimer.unref?.();
  }

  private heartbeat(): void {
    if (this.awaitingPong) {
      // No Pong since the last tick: the host vanished without a FIN, or the link is dead.
      this.shutdown(new T3Error("timeout", "The server stopped answering pings."));
      this.ws.close();
      return;
    }
    this.awaitingPong = true;
    this.send({ _tag: "Ping" });
  }

  private send(frame: RpcClientFrame): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.options.onFrame?.("send", frame);
    this.ws.send(JSON.stringify(frame));
  }

  private receive(data: unknown): void {
    if (typeof data !== "string") {
      this.protocolError(new T3Error("decode", "The server sent a binary frame; T3 speaks JSON text frames."));
      return;
    }
    if (data.length > MAX_FRAME_BYTES) {
      this.protocolError(new T3Error("decode", `The server sent a frame of ${data.length} bytes, over the limit.`));
      return;
    }
    const json = parseJson(data);
    if (!json.ok) {
      // Text that is not JSON names no request for sure. If it looks like a Chunk or Exit (it carries
      // a request id), a call or stream may now wait forever (a Chunk must be Acked): untrusted. Any
      // other garbage is skipped and counted like an undecodable item; the connection stays up.
      if (mayBelongToRequest(data)) {
        this.protocolError(new T3Error("decode", `The server sent a frame that is not JSON: ${json.message}`));
        return;
      }
      this.lastFrameAt = Date.now();
      for (const listener of this.skippedListeners) listener({ method: "RPC frame", path: "", message: `not JSON: ${json.message}`, sequence: null });
      return;
    }
    this.lastFrameAt = Date.now();
    // The server may batch several messages in one frame.
    for (const message of Array.isArray(json.value) ? json.value : [json.value]) {
      if (this.closedWith) return;
      this.options.onFrame?.("recv", message);
      const frame = decodeWith(RpcServerFrame, message, "RPC frame");
      if (!frame.ok) {
        // A bad Chunk or Exit leaves a call or stream unanswerable (a Chunk must be Acked): untrusted.
        // Any other frame (an unknown tag from a newer server, stray garbage) is reported and skipped.
        if (belongsToRequest(message)) {
          this.protocolError(T3Error.decode(frame.error));
          return;
        }
        for (const listener of this.skippedListeners) listener({ method: "RPC frame", path: frame.error.path, message: frame.error.message, sequence: null });
        continue;
      }
      this.dispatch(frame.value);
    }
  }

  private dispatch(frame: RpcServerFrame): void {
    switch (frame._tag) {
      case "Pong":
        this.awaitingPong = false;
        for (const waiter of this.pongWaiters) waiter();
        this.pongWaiters.clear();
        return;
      case "Chunk": {
        const entry = this.pending.get(frame.requestId);
        // Ack on receipt, before any processing: a late Ack lost events on 0.0.24.
        this.send({ _tag: "Ack", requestId: frame.requestId });
        if (entry?.kind !== "stream") return;
        entry.handlers.onValues(frame.values);
        return;
      }
      case "Exit": {
        const entry = this.pending.get(frame.requestId);
        if (!entry) return;
        this.pending.delete(frame.requestId);
        const error = frame.exit._tag === "Failure" ? rpcFailure(frame.exit.cause, entry.tag) : undefined;
        if (entry.kind === "call") {
          clearTimeout(entry.timer);
          if (error) entry.reject(error);
          else entry.resolve(frame.exit._tag === "Success" ? frame.exit.value : undefined);
        } else {
          entry.handlers.onEnd(error);
        }
        return;
      }
      case "Defect":
        this.defect(defectText(frame.defect));
        return;
      case "ClientProtocolError":
        this.protocolError(new T3Error("server", "The server reported a protocol error on this connection."));
        return;
    }
  }

  /**
   * A connection-level Defect has no request id. 0.0.24 answers an unknown method this way: fail
   * only the requests for that method. Any other defect leaves the connection untrustworthy.
   */
  private defect(text: string): void {
    const unknownTag = /^Unknown request tag: (.+)$/.exec(text)?.[1];
    if (unknownTag) {
      for (const [id, entry] of this.pending) {
        if (entry.tag !== unknownTag) continue;
        this.pending.delete(id);
        this.fail(entry, new T3Error("incompatible", `${entry.tag}: the server does not know this method`));
      }
      return;
    }
    this.protocolError(new T3Error("server", `The server reported a defect: ${text}`));
  }

  private protocolError(error: T3Error): void {
    this.shutdown(error);
    this.ws.close(CLOSE_PROTOCOL_ERROR);
  }

  private fail(entry: Pending, error: T3Error): void {
    if (entry.kind === "call") {
      clearTimeout(entry.timer);
      entry.reject(error);
    } else {
      entry.handlers.onEnd(error);
    }
  }

  private shutdown(error: T3Error): void {
    if (this.closedWith) return;
    this.closedWith = error;
    clearInterval(this.pingTimer);
    const entries = [...this.pending.values()];
    this.pending.clear();
    for (const entry of entries) this.fail(entry, error);
    for (const listener of this.closeListeners) listener(error);
    this.closeListeners.clear();
  }
}

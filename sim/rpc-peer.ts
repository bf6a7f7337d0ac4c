// The server side of Effect-RPC JSON for one simulated socket (docs/t3-protocols.md, the shared transport):
// Ack back-pressure per stream, Ping/Pong, Interrupt, Exit and Defect, per generation.
import type { WebSocket } from "ws";
import { RpcClientFrameSchema } from "../shared/t3/rpc-frames";
import type { Generation } from "./protocol1/model";

export interface StreamSink {
  /** Queues items; they leave in one Chunk once the previous Chunk was acked. */
  push(...values: unknown[]): void;
  /** Ends the stream with a typed failure. */
  fail(error: Record<string, unknown>): void;
  readonly closed: boolean;
  /** True once the client acknowledged the first Chunk. */
  readonly acknowledged: boolean;
  /** Items waiting for the client's Ack of the previous Chunk (a slow consumer's backlog). */
  readonly queuedCount: number;
  /** Ends the stream with a defect (`Exit` → `Die`), as a server does when it gives up on a consumer. */
  die(defect: string): void;
}

export interface RpcHandlers {
  /** `{ noReply: true }`: the request is handled but never answered (fault injection). */
  unary(tag: string, payload: unknown): { ok: true; value: unknown } | { ok: false; cause: unknown[] } | { noReply: true } | undefined;
  /** Starts a stream; returns a disposer, or undefined when the tag is not a stream. */
  stream(tag: string, payload: unknown, sink: StreamSink): (() => void) | undefined;
}

class ServerStream implements StreamSink {
  private queue: unknown[] = [];
  private awaitingAck = false;
  closed = false;
  acknowledged = false;
  dispose: () => void = () => {};

  constructor(
    private readonly peer: RpcPeer,
    readonly requestId: string,
    /** What the client asked for: tests count at the server what a client left subscribed. */
    readonly tag: string,
    readonly payload: unknown,
  ) {}

  push(...values: unknown[]): void {
    if (this.closed) return;
    this.queue.push(...values);
    this.flush();
  }

  ack(): void {
    this.awaitingAck = false;
    this.acknowledged = true;
    this.flush();
  }

  fail(error: Record<string, unknown>): void {
    this.end({ _tag: "Failure", cause: [{ _tag: "Fail", error }] });
  }

  get queuedCount(): number {
    return this.queue.length;
  }

  die(defect: string): void {
    this.queue = [];
    this.end({ _tag: "Failure", cause: [{ _tag: "Die", defect }] });
  }

  end(exit: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.dispose();
    this.peer.send({ _tag: "Exit", requestId: this.requestId, exit });
    this.peer.streams.delete(this.requestId);
  }

  private flush(): void {
    if (this.awaitingAck || this.queue.length === 0 || this.closed) return;
    const values = this.queue;
    this.queue = [];
    this.awaitingAck = true;
    this.peer.send({ _tag: "Chunk", requestId: this.requestId, values });
  }
}

let fiberIds = 1000;

export class RpcPeer {
  readonly streams = new Map<string, ServerStream>();
  /** While set, the peer neither answers nor sends: a host that vanished without a FIN. */
  silent = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly generation: Generation,
    private readonly handlers: RpcHandlers,
  ) {
    ws.on("message", (data, isBinary) => {
      if (this.silent) return;
      this.receive(isBinary ? "" : data.toString("utf8"));
    });
    ws.on("close", () => this.disposeAll());
  }

  send(message: unknown): void {
    if (this.silent || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(JSON.stringify(message));
  }

  disposeAll(): void {
    for (const stream of this.streams.values()) {
      stream.closed = true;
      stream.dispose();
    }
    this.streams.clear();
  }

  private receive(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.send({ _tag: "Defect", defect: "Malformed message: not JSON" });
      return;
    }
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) this.handle(message);
  }

  private handle(message: unknown): void {
    const decoded = RpcClientFrameSchema.safeParse(message);
    if (!decoded.success) {
      this.send({ _tag: "Defect", defect: `Malformed message: ${decoded.error.issues[0]?.message ?? "invalid"}` });
      return;
    }
    const frame = decoded.data;
    switch (frame._tag) {
      case "Ping":
        this.send({ _tag: "Pong" });
        return;
      case "Eof":
        return;
      case "Ack":
        this.streams.get(frame.requestId)?.ack();
        return;
      case "Interrupt": {
        const stream = this.streams.get(frame.requestId);
        stream?.end({ _tag: "Failure", cause: [{ _tag: "Interrupt", fiberId: fiberIds++ }] });
        return;
      }
      case "Request":
        this.request(frame.id, frame.tag, frame.payload);
        return;
    }
  }

  private request(id: string, tag: string, payload: unknown): void {
    const stream = new ServerStream(this, id, tag, payload);
    this.streams.set(id, stream);
    const dispose = this.handlers.stream(tag, payload, stream);
    if (dispose) {
      stream.dispose = dispose;
      if (stream.closed) dispose();
      return;
    }
    this.streams.delete(id);
    const result = this.handlers.unary(tag, payload);
    if (result === undefined) {
      // 0.0.24 answers an unknown method with a connection-level Defect, 0.0.33 with a per-request Die.
      const defect = `Unknown request tag: ${tag}`;
      if (this.generation === "fork") this.send({ _tag: "Defect", defect });
      else this.send({ _tag: "Exit", requestId: id, exit: { _tag: "Failure", cause: [{ _tag: "Die", defect }] } });
      return;
    }
    if ("noReply" in result) return;
    this.send({
      _tag: "Exit",
      requestId: id,
      exit: result.ok ? { _tag: "Success", value: result.value } : { _tag: "Failure", cause: result.cause },
    });
  }
}

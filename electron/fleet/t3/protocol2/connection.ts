// Protocol 2's socket (docs/t3-protocols.md, "Protocol 2"): the `?orchestrationProtocol=2` socket,
// opened with a WebSocket ticket, its calls, and its streams. Protocol-2 servers end streams (a slow
// consumer, a restart of the stream) and expect the client to resume: a stream that delivered its
// first snapshot is subscribed again from its last applied sequence within this one connection.
// The fleet and thread streams (./fleet-stream.ts, ./thread-stream.ts) say how items change state.
import type { SkippedItem } from "../../../../shared/fleet/types";
import { decodeWith, droppedAsSkipped } from "../../../../shared/t3/decode";
import { T3Error } from "../../../../shared/t3/errors";
import type { ShellStreamItemV2Schema, ThreadStreamItemV2Schema } from "../../../../shared/t3/protocol2/schemas";
import { WebSocketTicketResponse } from "../../../../shared/t3/schemas";
import type { Subscription } from "../adapter";
import type { T3Credentials, T3EnvironmentClient } from "../client";
import { decodeAnswer } from "../http";
import type { RpcSocket, RpcSocketOptions } from "../rpc-socket";

/** How a stream item changes state, decided by the stream's owner. */
export interface StreamSpec<Item> {
  tag: string;
  schema: typeof ShellStreamItemV2Schema | typeof ThreadStreamItemV2Schema;
  what: string;
  payload: () => Record<string, unknown>;
  /** Applies one decoded item. */
  apply: (item: Item) => void;
  /** Called after each chunk was applied. */
  chunkDone: () => void;
  /** The stream has delivered a snapshot at least once: a later Exit is resumed by sequence. */
  resumable: () => boolean;
  /** An item that did not decode but whose sequence could be read (the cursor moves past it), or an element left out of one: reported. */
  skipped: (item: SkippedItem) => void;
  end: (error?: T3Error) => void;
}

/** A raw item's sequence (a shell delta's or a thread event's), if readable: an undecodable item with one can be skipped in order. */
function readableSequence(raw: unknown): number | null {
  if (typeof raw !== "object" || raw === null) return null;
  const { kind, sequence } = raw as { kind?: unknown; sequence?: unknown };
  return kind !== "snapshot" && typeof sequence === "number" && Number.isSafeInteger(sequence) && sequence >= 0 ? sequence : null;
}

export class Protocol2Connection {
  private constructor(readonly socket: RpcSocket) {}

  /** Opens the socket on the client's own origin, with the environment's socket tuning (ping, open timeout, frame tap) as protocol 1's sockets get it. */
  static async open(
    client: T3EnvironmentClient,
    credentials: T3Credentials,
    socketOptions?: Pick<RpcSocketOptions, "pingIntervalMs" | "openTimeoutMs" | "onFrame">,
  ): Promise<Protocol2Connection> {
    const answer = await client.http.send({ method: "POST", path: "/api/auth/websocket-ticket", bearer: credentials.token });
    const ticket = decodeAnswer(answer, WebSocketTicketResponse, "WebSocket ticket").ticket;
    const socket = await client.openSocket({ wsTicket: ticket, orchestrationProtocol: "2" }, { ...client.socketOptions, ...socketOptions });
    return new Protocol2Connection(socket);
  }

  /** One call; every failure is a T3Error. */
  async call(method: string, payload: unknown, timeoutMs?: number): Promise<unknown> {
    try {
      return await this.socket.call(method, payload, timeoutMs);
    } catch (error) {
      throw error instanceof T3Error ? error : new T3Error("server", String(error));
    }
  }

  /**
   * Runs a stream and, when the server ends it (any Exit) after it has delivered its first
   * snapshot, subscribes again from the last applied sequence. A resubscription that ends before
   * delivering anything is not repeated: the error goes to the caller.
   */
  stream<Item>(spec: StreamSpec<Item>): Subscription {
    const socket = this.socket;
    let closed = false;
    let handle: { interrupt(): void } | undefined;
    const start = () => {
      let delivered = false;
      handle = socket.stream(spec.tag, spec.payload(), {
        onValues: (values) => {
          if (closed) return;
          for (const raw of values) {
            const decoded = decodeWith(spec.schema, raw, spec.what);
            const sequence = decoded.ok ? null : readableSequence(raw);
            if (!decoded.ok && sequence !== null) {
              // One bad item costs that item alone (as on protocol 1): rows are whole state and events are applied in order.
              spec.skipped({ method: spec.tag, path: decoded.error.path, message: decoded.error.message, sequence });
              continue;
            }
            if (!decoded.ok) {
              closed = true;
              handle?.interrupt();
              spec.end(T3Error.decode(decoded.error));
              return;
            }
            delivered = true;
            for (const failure of decoded.dropped ?? []) spec.skipped(droppedAsSkipped(spec.tag, failure));
            spec.apply(decoded.value as Item);
          }
          spec.chunkDone();
        },
        onEnd: (error) => {
          if (closed) return;
          if (delivered && socket.isOpen && spec.resumable()) {
            start();
            return;
          }
          closed = true;
          spec.end(error);
        },
      });
    };
    start();
    return {
      close: () => {
        if (closed) return;
        closed = true;
        handle?.interrupt();
        spec.end();
      },
    };
  }
}

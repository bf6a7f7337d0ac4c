// One UI connection of the headless shell, as a transport with bounds (README.md, "Security"):
//
// - The first snapshot goes out in pieces of at most SNAPSHOT_PIECE_BYTES: a `fleet.snapshot` with
//   every environment and the first agents, then `fleet.delta` messages with the rest. Machines with
//   few agents come first, so one machine with many never delays the first paint of the others, and
//   no message is ever too large to build or to parse.
// - Events are paced by the page (shared/bridge/paced-feed.ts): a batch goes once the page
//   acknowledged the last one, and only while the socket's unsent bytes are under LOW_WATER_BYTES.
//   Meanwhile rows and transcripts coalesce; other events wait in order, at most MAX_QUEUED_BYTES
//   of them: a client that falls further behind is resynchronized with a fresh snapshot once it
//   reads again. Responses to its requests are never dropped, but a client that lets them pile up
//   past MAX_UNSENT_RESPONSE_BYTES is disconnected.
import type { WebSocket } from "ws";
import { BRIDGE_CLOSE_MALFORMED, BridgeClientMessage, type BridgeEvent, type BridgeServerMessage, type FleetSnapshot } from "../../shared/bridge/contract";
import { DEFAULT_FEED_LIMITS, PacedFeed } from "../../shared/bridge/paced-feed";
import { describeError } from "../../shared/bridge/redact";
import { SNAPSHOT_PIECE_BYTES, snapshotPieces } from "../../shared/bridge/snapshot-pieces";
import { parseJson } from "../../shared/t3/decode";
import { BridgeError } from "../fleet/bridge-error";
import type { FleetService } from "../fleet/service";

export interface BridgeLimits {
  /** Largest piece of a snapshot (bytes of JSON text, one agent over it still goes alone). */
  snapshotPieceBytes: number;
  /** Unsent bytes on the socket under which the next message is written. */
  lowWaterBytes: number;
  /** Events (other than rows and transcripts, which coalesce) waiting for a slow client before it is resynchronized instead. */
  maxQueuedBytes: number;
  /** Unsent responses after which a client that does not read is disconnected. */
  maxUnsentResponseBytes: number;
}

export const DEFAULT_BRIDGE_LIMITS: BridgeLimits = {
  snapshotPieceBytes: SNAPSHOT_PIECE_BYTES,
  lowWaterBytes: 1024 * 1024,
  maxQueuedBytes: 8 * 1024 * 1024,
  maxUnsentResponseBytes: 16 * 1024 * 1024,
};

/** Close code for a client that stopped reading (RFC 6455 1008: policy violation). */
export const BRIDGE_CLOSE_NOT_READING = 1008;

/**
 * A snapshot as a sequence of message texts, each about `pieceBytes` at most, the smallest
 * environments' agents first (shared/bridge/snapshot-pieces.ts); each agent is serialized once.
 */
export function* snapshotMessages(snapshot: FleetSnapshot, pieceBytes: number): Generator<string> {
  // Everything but the agents (JSON leaves out an undefined property); they follow in pieces.
  const restJson = JSON.stringify({ ...snapshot, agents: undefined });
  for (const piece of snapshotPieces(
    snapshot,
    pieceBytes,
    (agent) => JSON.stringify(agent),
    (json) => json.length,
  )) {
    const agentsJson = `[${piece.agents.join(",")}]`;
    if (piece.first) {
      const snapshotJson = `${restJson.slice(0, -1)}${restJson.length > 2 ? "," : ""}"agents":${agentsJson}}`;
      yield `{"type":"event","event":{"type":"fleet.snapshot","snapshot":${snapshotJson}}}`;
    } else {
      yield `{"type":"event","event":{"type":"fleet.delta","agents":${agentsJson},"removed":[],"environments":[],"removedEnvironments":[]}}`;
    }
  }
}

export interface BridgeStats {
  /** Bytes written to this socket so far. */
  bytesSent: number;
  /** Snapshots sent after the first because the client fell behind. */
  resyncs: number;
}

/** Each page's socket is its own viewer (electron/fleet/agent-details.ts): a reload or a closed tab closes its views. */
let sockets = 0;

/** One UI connection: a snapshot first (in pieces), then every event; requests are decoded by the service. */
export function attachBridge(
  ws: WebSocket,
  service: FleetService,
  report: (where: string, error: unknown) => void,
  limits: BridgeLimits = DEFAULT_BRIDGE_LIMITS,
): BridgeStats {
  const stats: BridgeStats = { bytesSent: 0, resyncs: 0 };
  const viewer = `socket:${++sockets}`;
  let pumpDue = false;
  // A batch goes after the task that made its changes (and the transcript deltas it queued) is done.
  const feed = new PacedFeed(
    () => {
      if (pumpDue) return;
      pumpDue = true;
      setImmediate(() => {
        pumpDue = false;
        pump();
      });
    },
    { ...DEFAULT_FEED_LIMITS, maxPendingChars: limits.maxQueuedBytes },
  );
  const startSnapshot = () => {
    const snapshot = service.snapshot();
    feed.resync(snapshot.agents);
    return snapshotMessages(snapshot, limits.snapshotPieceBytes);
  };
  let pieces: Generator<string> | undefined = startSnapshot();
  const responses: string[] = [];
  let responseBytes = 0;
  let writing = false;

  const write = (text: string) => {
    stats.bytesSent += text.length;
    ws.send(text, (error) => {
      if (error) return; // the socket is closing; its close handler cleans up
      pump();
    });
  };

  /** Writes while the socket has room: responses first, then snapshot pieces, then the page's next batch. */
  const pump = () => {
    if (writing || ws.readyState !== ws.OPEN) return;
    writing = true;
    try {
      while (ws.bufferedAmount < limits.lowWaterBytes) {
        const response = responses.shift();
        if (response !== undefined) {
          responseBytes -= response.length;
          write(response);
          continue;
        }
        if (feed.overflowed) {
          // Too far behind: what it missed is carried by a fresh snapshot.
          stats.resyncs += 1;
          pieces = startSnapshot();
        }
        if (pieces) {
          const piece = pieces.next();
          if (!piece.done) {
            write(piece.value);
            continue;
          }
          pieces = undefined;
        }
        const batch = feed.take();
        if (batch === undefined) break;
        write(JSON.stringify(batch satisfies BridgeServerMessage));
      }
    } catch (error) {
      report("bridge send", error);
    } finally {
      writing = false;
    }
  };

  const onEvent = (event: BridgeEvent) => {
    if (ws.readyState !== ws.OPEN) return;
    try {
      feed.push(event);
    } catch (error) {
      report("bridge event", error);
    }
  };
  const onOpened = (key: string, opener: string) => {
    if (opener === viewer) feed.opened(key);
  };

  const respond = (message: BridgeServerMessage) => {
    if (ws.readyState !== ws.OPEN) return;
    const text = JSON.stringify(message);
    if (responseBytes + text.length > limits.maxUnsentResponseBytes) {
      ws.close(BRIDGE_CLOSE_NOT_READING, "not reading its answers");
      return;
    }
    responses.push(text);
    responseBytes += text.length;
    pump();
  };

  service.on("event", onEvent);
  service.on("opened", onOpened);
  ws.on("close", () => {
    service.off("event", onEvent);
    service.off("opened", onOpened);
    service.viewerLeft(viewer);
    feed.resync([]);
    responses.length = 0;
    pieces = undefined;
  });
  pump();

  ws.on("message", (data, isBinary) => {
    const json = isBinary ? { ok: false as const, message: "binary frame" } : parseJson(data.toString("utf8"));
    const message = json.ok ? BridgeClientMessage.safeParse(json.value) : undefined;
    if (!message?.success) {
      ws.close(BRIDGE_CLOSE_MALFORMED, "malformed bridge message");
      return;
    }
    if (message.data.type === "ack") {
      feed.ack(message.data.seq);
      return;
    }
    const { id, method, params } = message.data;
    let answer: Promise<unknown>;
    try {
      answer = service.request(method, params, viewer);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      (result) => respond({ type: "response", id, ok: true, result: result ?? null }),
      (error: unknown) => {
        const kind = error instanceof BridgeError ? error.kind : "internal";
        if (kind === "internal") report(`bridge ${method}`, error);
        respond({ type: "response", id, ok: false, error: { kind, message: describeError(error) } });
      },
    );
  });
  return stats;
}

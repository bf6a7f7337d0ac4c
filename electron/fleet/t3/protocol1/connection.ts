// Protocol 1's socket (docs/t3-protocols.md, "Streams"): an authenticated Effect-RPC connection to
// one environment, with its calls (config, dispatch, event replay) and its two ordered streams
// (shell, thread). The fleet and thread streams (./fleet-stream.ts, ./thread-stream.ts) turn what it delivers into neutral facts.
import { z } from "zod";
import type { SkippedItem } from "../../../../shared/fleet/types";
import type { ClientCommand, ThreadSettleCommand } from "../../../../shared/t3/protocol1/commands";
import { decodeWith, droppedAsSkipped } from "../../../../shared/t3/decode";
import { type DiffScope, ThreadDiffResult, diffCall } from "../../../../shared/t3/diff";
import { T3Error } from "../../../../shared/t3/errors";
import type { ShellSnapshot, ThreadDetailSnapshot } from "../../../../shared/t3/protocol1/schemas";
import {
  DispatchResult,
  OrchestrationEventSchema,
  ServerConfigSummary,
  type ShellDelta,
  type ShellStreamItem,
  ShellStreamItemSchema,
  type ThreadStreamItem,
  ThreadStreamItemSchema,
} from "../../../../shared/t3/protocol1/schemas";
import type { Subscription } from "../adapter";
import type { T3Credentials, T3EnvironmentClient } from "../client";
import type { RpcSocket } from "../rpc-socket";

interface SubscriptionListener<Snapshot, Delta> {
  /** A full snapshot: replace what you had. */
  snapshot(snapshot: Snapshot): void;
  /** One change newer than everything applied before it on this subscription. */
  delta(delta: Delta): void;
  /** Caught up: a snapshot arrived, or the server's resume replay finished. Once per subscription. */
  synchronized(lastSequence: number): void;
  end(error?: T3Error): void;
  /** An item that did not decode was skipped; the stream goes on (issue 9). */
  skipped?(item: SkippedItem): void;
}

export type ShellListener = SubscriptionListener<ShellSnapshot, ShellDelta>;
export type ThreadEventItem = Extract<ThreadStreamItem, { kind: "event" }>["event"];
export type ThreadListener = SubscriptionListener<ThreadDetailSnapshot, ThreadEventItem>;

export interface ResumeOptions {
  /** Last global sequence already applied; the server replays only what is newer (upstream). */
  afterSequence?: number;
}

function isSnapshotItem(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && (raw as { kind?: unknown }).kind === "snapshot";
}

/** The sequence of a raw shell item (`sequence`) or thread event item (`event.sequence`), if readable. */
function readableSequence(raw: unknown): number | null {
  if (typeof raw !== "object" || raw === null) return null;
  const item = raw as { sequence?: unknown; event?: { sequence?: unknown } };
  const sequence = item.sequence ?? (typeof item.event === "object" && item.event !== null ? item.event.sequence : undefined);
  return typeof sequence === "number" && Number.isInteger(sequence) && sequence >= 0 ? sequence : null;
}

/** Bound for the replay call that repairs a fork stream's live-tail gap (./fleet-stream.ts, ./thread-stream.ts). */
const REPLAY_TIMEOUT_MS = 10_000;

/**
 * Applies the stream rules to one subscription (docs/t3-protocols.md, "Streams"): decode every
 * item, apply only items newer than the last applied sequence, and report synchronization once.
 */
class OrderedStream<Item, Snapshot, Delta> {
  private lastSequence: number;
  private synced = false;
  private ended = false;

  constructor(
    private readonly listener: SubscriptionListener<Snapshot, Delta>,
    private readonly itemSchema: z.ZodType<Item>,
    private readonly what: string,
    private readonly method: string,
    private readonly classify: (
      item: Item,
    ) =>
      | { kind: "snapshot"; snapshot: Snapshot; sequence: number }
      | { kind: "delta"; delta: Delta; sequence: number }
      | { kind: "synchronized" }
      | { kind: "ignore" },
    afterSequence: number | undefined,
  ) {
    this.lastSequence = afterSequence ?? -1;
  }

  /** Applies a chunk; returns an error when the stream can no longer be trusted (it must then end). */
  values(values: readonly unknown[]): T3Error | undefined {
    for (const raw of values) {
      if (this.ended) return undefined;
      const decoded = decodeWith(this.itemSchema, raw, this.what);
      if (!decoded.ok) {
        // One bad item is reported and skipped: rows are full state and events are applied by
        // sequence, so what follows is still right. A snapshot is the base of everything after it,
        // and an item whose sequence cannot be read cannot be ordered: then the stream is untrusted.
        const sequence = readableSequence(raw);
        if (isSnapshotItem(raw) || sequence === null) return T3Error.decode(decoded.error);
        this.listener.skipped?.({ method: this.method, path: decoded.error.path, message: decoded.error.message, sequence });
        this.lastSequence = Math.max(this.lastSequence, sequence);
        continue;
      }
      // Elements left out of a snapshot's lists (a row, a message, a checkpoint) are reported as skipped.
      for (const failure of decoded.dropped ?? []) this.listener.skipped?.(droppedAsSkipped(this.method, failure));
      const item = this.classify(decoded.value);
      if (item.kind === "snapshot") {
        this.lastSequence = item.sequence;
        this.listener.snapshot(item.snapshot);
        this.markSynchronized();
      } else if (item.kind === "delta") {
        if (item.sequence <= this.lastSequence) continue; // overlap between replay and live tail
        this.lastSequence = item.sequence;
        this.listener.delta(item.delta);
      } else if (item.kind === "synchronized") {
        this.markSynchronized();
      }
    }
    return undefined;
  }

  end(error?: T3Error): void {
    if (this.ended) return;
    this.ended = true;
    this.listener.end(error);
  }

  private markSynchronized(): void {
    if (this.synced) return;
    this.synced = true;
    this.listener.synchronized(this.lastSequence);
  }
}

/** An open, authenticated protocol-1 socket to one environment. */
export class T3Connection {
  constructor(readonly socket: RpcSocket) {}

  static async open(client: T3EnvironmentClient, credentials: T3Credentials): Promise<T3Connection> {
    return new T3Connection(await client.openAuthenticatedSocket(credentials, 1));
  }

  onClose(listener: (error: T3Error) => void): () => void {
    return this.socket.onClose(listener);
  }

  close(): void {
    this.socket.close();
  }

  getConfig(timeoutMs?: number): Promise<ServerConfigSummary> {
    return this.socket.call("server.getConfig", {}, timeoutMs).then((value) => {
      const decoded = decodeWith(ServerConfigSummary, value, "server config");
      if (!decoded.ok) throw T3Error.decode(decoded.error);
      return decoded.value;
    });
  }

  /** A turn's or the whole thread's diff (orchestration.getTurnDiff / getFullThreadDiff). */
  readDiff(threadId: string, scope: DiffScope, timeoutMs?: number): Promise<string> {
    const { method, payload } = diffCall(threadId, scope);
    return this.socket.call(method, payload, timeoutMs).then((value) => {
      const decoded = decodeWith(ThreadDiffResult, value, "thread diff");
      if (!decoded.ok) throw T3Error.decode(decoded.error);
      return decoded.value.diff;
    });
  }

  /** orchestration.dispatchCommand; the same commandId is safe to resend (T3 deduplicates command ids). */
  dispatch(command: ClientCommand | ThreadSettleCommand, timeoutMs?: number): Promise<DispatchResult> {
    return this.socket.call("orchestration.dispatchCommand", command, timeoutMs).then((value) => {
      const decoded = decodeWith(DispatchResult, value, `${command.type} result`);
      if (!decoded.ok) throw T3Error.decode(decoded.error);
      return decoded.value;
    });
  }

  subscribeShell(listener: ShellListener, options: ResumeOptions = {}): Subscription {
    return this.subscribe(
      "orchestration.subscribeShell",
      { ...(options.afterSequence !== undefined && { afterSequence: options.afterSequence }), requestCompletionMarker: true },
      new OrderedStream<ShellStreamItem, ShellSnapshot, ShellDelta>(
        listener,
        ShellStreamItemSchema as z.ZodType<ShellStreamItem>,
        "shell stream item",
        "orchestration.subscribeShell",
        (item) => {
          switch (item.kind) {
            case "snapshot":
              return { kind: "snapshot", snapshot: item.snapshot, sequence: item.snapshot.snapshotSequence };
            case "synchronized":
              return { kind: "synchronized" };
            case "unknown":
              return { kind: "ignore" };
            default:
              return { kind: "delta", delta: item, sequence: item.sequence };
          }
        },
        options.afterSequence,
      ),
    );
  }

  /** Events after `afterSequence` for every thread (protocol 1 only), decoded. */
  async replayEvents(afterSequence: number): Promise<ThreadEventItem[]> {
    const value = await this.socket.call("orchestration.replayEvents", { fromSequenceExclusive: afterSequence }, REPLAY_TIMEOUT_MS);
    const decoded = decodeWith(z.array(OrchestrationEventSchema), value, "replayed events");
    if (!decoded.ok) throw T3Error.decode(decoded.error);
    return decoded.value;
  }

  subscribeThread(threadId: string, listener: ThreadListener, options: ResumeOptions = {}): Subscription {
    return this.subscribe(
      "orchestration.subscribeThread",
      {
        threadId,
        ...(options.afterSequence !== undefined && { afterSequence: options.afterSequence }),
        requestCompletionMarker: true,
      },
      new OrderedStream<ThreadStreamItem, ThreadDetailSnapshot, ThreadEventItem>(
        listener,
        ThreadStreamItemSchema as z.ZodType<ThreadStreamItem>,
        "thread stream item",
        "orchestration.subscribeThread",
        (item) => {
          switch (item.kind) {
            case "snapshot":
              return { kind: "snapshot", snapshot: item.snapshot, sequence: item.snapshot.snapshotSequence };
            case "event":
              return { kind: "delta", delta: item.event, sequence: item.event.sequence };
            case "synchronized":
              return { kind: "synchronized" };
            default:
              return { kind: "ignore" };
          }
        },
        options.afterSequence,
      ),
    );
  }

  private subscribe<I, S, D>(tag: string, payload: unknown, stream: OrderedStream<I, S, D>): Subscription {
    const handle = this.socket.stream(tag, payload, {
      onValues: (values) => {
        const error = stream.values(values);
        if (error) {
          handle.interrupt();
          stream.end(error);
        }
      },
      onEnd: (error) => stream.end(error),
    });
    return {
      close: () => {
        handle.interrupt();
        stream.end();
      },
    };
  }
}

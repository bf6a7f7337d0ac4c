// How much of a followed thread's transcript the fleet holds (issue 43): the newest items, what an
// open view shows, and compact facts for what left them. A thread's history grows for as long as it
// lives; the service keeps every followed thread's projection, so holding the whole of it made the
// live heap rise for as long as the service ran. Older items stay in T3 (the view says so).
import type { TranscriptItem } from "./facts";

/**
 * How much of its history a followed thread holds. A thread open in a view holds the view's tail;
 * one followed only to know its truth (running, blocked, a send in flight) holds what its row and
 * the delivery rules read, so the threads the fleet follows all day, not open anywhere, fill their
 * caps within minutes and then stay flat (issue 43; electron/fleet/threads.ts chooses).
 */
export interface TailLimits {
  /** Transcript items held: what an open view shows. */
  items: number;
  /** Items let go in batches of up to this many, so trimming costs O(1) per item, not per event (`trimPoint`). */
  trimBatch: number;
  /** Messages that left the tail, kept by id (text cut) so a send can still be matched to its reply. */
  anchors: number;
  /** Per-request and per-message facts (request ends, message outcomes) of the history, newest kept. */
  historyFacts: number;
  /** Finished subagents of the history, newest kept (they are rows of the tree); running ones are always kept. */
  finishedSubagents: number;
  /** Checkpoints (one per turn): the newest turns' changes. */
  checkpoints: number;
  /** Protocol 2: runs, provider turns, requests, messages and subagent rows that ended, newest kept (active ones always are). */
  settledEntries: number;
}

/** A thread open in a view. */
export const OPEN_VIEW_TAIL: TailLimits = {
  items: 400,
  trimBatch: 200,
  anchors: 200,
  historyFacts: 500,
  finishedSubagents: 200,
  checkpoints: 100,
  settledEntries: 100,
};

/**
 * A thread followed but not open: its latest turns (the row's changes and usage read the latest),
 * anchors for the sends of the last few turns, and every subagent the tree shows.
 */
export const FOLLOWED_TAIL: TailLimits = {
  items: 40,
  trimBatch: 8,
  anchors: 24,
  historyFacts: 40,
  finishedSubagents: 200,
  checkpoints: 2,
  settledEntries: 8,
};

/**
 * How long a list held to `limit` may grow before it is cut back to `limit`: by its own limit at
 * most, and by the batch, so cutting stays O(1) per entry while a short list (a followed thread's
 * two checkpoints, eight runs) is cut every few entries rather than after a whole batch of them.
 * With one slack for every list, a followed protocol-2 thread held up to 42 checkpoints and 48 runs,
 * and filled to them over its first ~40 turns: the soak's heap rose for as long as its threads took
 * to reach that many turns (bench/soak.ts, issue 43).
 */
export function trimPoint(limit: number, limits: TailLimits): number {
  return limit + Math.max(1, Math.min(limit, limits.trimBatch));
}

/** An anchor's text is cut to this: only whether there was text counts once it left the tail. */
const ANCHOR_TEXT_CHARS = 64;

type Message = Extract<TranscriptItem, { type: "message" }>;

/**
 * Messages that left the tail, in order, as the delivery rules read them (electron/fleet/deliveries.ts
 * finds a sent message by id, then the replies after it by run): each user message, and the newest
 * reply of each run. They are not the transcript: a view shows only what follows them.
 */
export class MessageAnchors {
  private readonly anchors = new Map<string, Message>();
  /** The run of each anchored reply, so a later reply of the same run replaces it. */
  private readonly replyOfRun = new Map<string, string>();
  private list: Message[] | undefined;

  /** How many are kept (TailLimits.anchors); lowering it lets the oldest go at the next add or `bound`. */
  limit = OPEN_VIEW_TAIL.anchors;

  add(item: TranscriptItem): void {
    if (item.type !== "message" || item.role === "system" || (item.role === "assistant" && item.runId === null)) return;
    const anchor: Message = { ...item, text: item.text.length > ANCHOR_TEXT_CHARS ? item.text.slice(0, ANCHOR_TEXT_CHARS) : item.text };
    this.anchors.delete(anchor.id);
    if (anchor.role === "assistant") {
      const previous = this.replyOfRun.get(anchor.runId!);
      if (previous !== undefined) this.anchors.delete(previous);
      this.replyOfRun.set(anchor.runId!, anchor.id);
    }
    this.anchors.set(anchor.id, anchor);
    this.list = undefined;
    this.bound();
  }

  /** Lets the oldest go beyond `limit`. */
  bound(): void {
    if (this.anchors.size <= this.limit) return;
    while (this.anchors.size > this.limit) {
      const oldest = this.anchors.values().next().value!;
      this.anchors.delete(oldest.id);
      if (oldest.role === "assistant" && this.replyOfRun.get(oldest.runId!) === oldest.id) this.replyOfRun.delete(oldest.runId!);
    }
    this.list = undefined;
  }

  has(id: string): boolean {
    return this.anchors.has(id);
  }

  clear(): void {
    this.anchors.clear();
    this.replyOfRun.clear();
    this.list = undefined;
  }

  /** The anchors in order (the same array until one is added). */
  items(): Message[] {
    return (this.list ??= [...this.anchors.values()]);
  }

  get size(): number {
    return this.anchors.size;
  }
}

/** A map that keeps its newest `limit` entries (by first insertion): facts of the history, bounded. */
export function keepNewest<K, V>(map: Map<K, V>, limit: number, keep: (value: V) => boolean = () => false): void {
  if (map.size <= limit) return;
  for (const [key, value] of map) {
    if (map.size <= limit) return;
    if (!keep(value)) map.delete(key);
  }
}

/** What a followed thread's detail says of its transcript's bounds (shared/fleet/facts.ts ThreadDetail). */
export interface TranscriptBounds {
  /** How many items at the start of `items` are anchors (MessageAnchors), not the transcript. */
  anchored: number;
  /** Older items were let go: the transcript starts after them (T3 keeps them). */
  earlier: boolean;
}

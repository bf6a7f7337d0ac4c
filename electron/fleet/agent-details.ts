// Agent details: the transcript and activities of the agents a UI has open. Opening follows the
// thread's stream and answers with the whole detail once; after that only what changed (new or
// updated transcript items, and the text a streaming reply gained) is sent, so a streaming reply
// re-sends neither the transcript nor itself. A view belongs to its viewer (a window, a page's
// socket): one that leaves (a reload, a closed tab) closes what it had open, so nothing is followed for nobody.
// Changes go out at the end of the task that made them (all of one T3 frame's changes together),
// never on a timer: each page paces what it takes by its own frames (shared/bridge/paced-feed.ts, issue 44).
import type { AgentDetail, AgentDetailDelta, BridgeEvent, MessageAppend } from "../../shared/bridge/contract";
import { splitKey } from "../../shared/fleet/model";
import type { TranscriptItem } from "../../shared/fleet/facts";
import type { Environments } from "./environments";
import { OPEN_REASON } from "./threads";

/** What an open view was last sent, to compute the next delta. */
interface SentDetail {
  items: Map<string, TranscriptItem>;
  order: string[];
  loaded: boolean;
  error: string | null;
  earlier: boolean;
}

export class AgentDetails {
  /** Each open agent: what its views were last sent, and who has it open (its thread is followed while anyone has). */
  private readonly open = new Map<string, { sent: SentDetail; viewers: Set<string> }>();
  /** Open agents that changed since their views were last sent; sent when the current task ends. */
  private readonly dirty = new Set<string>();

  constructor(
    private readonly environments: Environments,
    private readonly publish: (event: BridgeEvent) => void,
    /** A viewer opened an agent: its answer is the whole detail, so deltas sent before it are not for it. */
    private readonly opened: (key: string, viewer: string) => void = () => {},
  ) {}

  /** Follows the thread while the view is open and answers with the whole detail. */
  openAgent(key: string, viewer: string): AgentDetail {
    const [environmentId, threadId] = splitKey(key);
    const runtime = this.environments.require(environmentId);
    runtime.followers.follow(threadId, OPEN_REASON);
    // Others with it open get what changed up to now: the new baseline below is the same for all.
    if (this.dirty.delete(key)) this.flush(key);
    const detail = this.detail(key);
    const viewers = this.open.get(key)?.viewers ?? new Set();
    this.open.set(key, { sent: remember(detail), viewers: viewers.add(viewer) });
    this.opened(key, viewer);
    return detail;
  }

  closeAgent(key: string, viewer: string): void {
    const viewers = this.open.get(key)?.viewers;
    viewers?.delete(viewer);
    if (viewers && viewers.size > 0) return;
    const [environmentId, threadId] = splitKey(key);
    this.open.delete(key);
    this.dirty.delete(key);
    this.environments.get(environmentId)?.followers.unfollow(threadId, OPEN_REASON);
  }

  /** A viewer left (its page reloaded, its tab or window closed): what it had open is closed for it. */
  viewerLeft(viewer: string): void {
    for (const [key, { viewers }] of [...this.open]) if (viewers.has(viewer)) this.closeAgent(key, viewer);
  }

  detail(key: string): AgentDetail {
    const [environmentId, threadId] = splitKey(key);
    const detail = this.environments.get(environmentId)?.followers.get(threadId)?.detail;
    // The anchors before the tail are for the delivery rules, not the transcript (shared/fleet/transcript-tail.ts).
    const items = detail?.anchored ? detail.items.slice(detail.anchored) : (detail?.items ?? []);
    return { key, items, loaded: detail?.loaded ?? false, error: detail?.error ?? null, ...(detail?.earlier && { earlier: true }) };
  }

  /** Something about this agent changed: an open view gets the difference once the current task is done. */
  changed(key: string): void {
    if (!this.open.has(key) || this.dirty.has(key)) return;
    if (this.dirty.size === 0) queueMicrotask(() => this.flushDirty());
    this.dirty.add(key);
  }

  stop(): void {
    this.dirty.clear();
    this.open.clear();
  }

  private flushDirty(): void {
    const keys = [...this.dirty];
    this.dirty.clear();
    for (const key of keys) this.flush(key);
  }

  private flush(key: string): void {
    const view = this.open.get(key);
    if (!view) return;
    const detail = this.detail(key);
    const delta = deltaOf(view.sent, detail);
    view.sent = remember(detail);
    if (delta === null) return; // nothing changed
    if (delta === undefined) this.publish({ type: "agent.detail", detail });
    else this.publish({ type: "agent.detailDelta", delta });
  }
}

function remember(detail: AgentDetail): SentDetail {
  return {
    items: new Map(detail.items.map((item) => [item.id, item])),
    order: detail.items.map((item) => item.id),
    loaded: detail.loaded,
    error: detail.error,
    earlier: detail.earlier === true,
  };
}

/**
 * The changes since `sent` as a delta; null when nothing changed; undefined when a delta cannot say
 * it (an entry disappeared or moved, e.g. after a new snapshot), so the whole detail must be sent.
 */
function deltaOf(sent: SentDetail, detail: AgentDetail): AgentDetailDelta | null | undefined {
  const changed = changedEntries(sent.items, sent.order, detail.items);
  if (!changed || sent.earlier !== (detail.earlier === true)) return undefined;
  if (changed.length === 0 && sent.loaded === detail.loaded && sent.error === detail.error) return null;
  // A streaming reply grows at its end: send what it gained, not the whole message again.
  const items: TranscriptItem[] = [];
  const appended: MessageAppend[] = [];
  for (const item of changed) {
    const append = appendOf(sent.items.get(item.id), item);
    if (append) appended.push(append);
    else items.push(item);
  }
  return { key: detail.key, items, ...(appended.length > 0 && { appended }), loaded: detail.loaded, error: detail.error };
}

/** The text a message gained since `previous`, when nothing else about it changed but its streaming flag and time. */
function appendOf(previous: TranscriptItem | undefined, item: TranscriptItem): MessageAppend | null {
  if (previous?.type !== "message" || item.type !== "message") return null;
  if (item.text.length <= previous.text.length || !item.text.startsWith(previous.text)) return null;
  if (item.role !== previous.role || item.runId !== previous.runId || item.createdAt !== previous.createdAt) return null;
  return { id: item.id, text: item.text.slice(previous.text.length), streaming: item.streaming, updatedAt: item.updatedAt };
}

/** New or changed items, or undefined when the old items are no longer a prefix in the same order. */
function changedEntries(previous: Map<string, TranscriptItem>, previousOrder: string[], current: TranscriptItem[]): TranscriptItem[] | undefined {
  if (current.length < previousOrder.length) return undefined;
  const changed: TranscriptItem[] = [];
  for (let index = 0; index < current.length; index++) {
    const item = current[index]!;
    if (index < previousOrder.length) {
      if (previousOrder[index] !== item.id) return undefined;
      if (!sameItem(previous.get(item.id)!, item)) changed.push(item);
    } else {
      changed.push(item);
    }
  }
  return changed;
}

/** Items are plain data: the same object, or one with the same update time and content. */
function sameItem(a: TranscriptItem, b: TranscriptItem): boolean {
  return a === b || (a.updatedAt === b.updatedAt && JSON.stringify(a) === JSON.stringify(b));
}

// What one page (a viewer: the Electron window, a browser tab's socket) is sent, paced by the page
// itself (issue 44): a batch goes as soon as there is one, unless the page holds `window` batches it
// has not acknowledged; the page acknowledges each from the animation frame that applied it, so at
// most about one or two batches go per painted frame and nothing waits on a timer. A window of two,
// not one: with one, a token that arrives while the page paints waits for the page's next frame to
// be sent and then for the frame after to be shown (about 1.5 frames at p50 in bench/transcript);
// with two it is sent at once and shown in the next frame. Meanwhile changes coalesce:
// the latest view per row, sent as the fields that changed since the view this page last got
// (row-patch.ts); one detail delta per open agent (detail-merge.ts); other events in order. A batch
// carries at most `maxRows` rows and `maxEvents` other events, so a flood cannot freeze the page:
// the rest waits for the next frame, and nothing is lost.
import type { AgentView, EnvironmentView } from "../fleet/types";
import { type AgentDetail, type AgentDetailDelta, type BridgeBatch, type BridgeEvent, applyDetailDelta } from "./contract";
import { mergeDetailDeltas } from "./detail-merge";
import { type AgentPatch, rowPatch } from "./row-patch";

export interface PacedFeedLimits {
  /** Batches the page may hold unacknowledged at once. */
  window: number;
  /** Rows (agents) one batch carries at most; the rest go in the next. */
  maxRows: number;
  /** Other events (deliveries, notifications, …) one batch carries at most. */
  maxEvents: number;
  /** Other events waiting for the page, in JSON characters, past which it is resynchronized instead (`overflowed`). */
  maxPendingChars: number;
}

export const DEFAULT_FEED_LIMITS: PacedFeedLimits = { window: 2, maxRows: 500, maxEvents: 200, maxPendingChars: 8 * 1024 * 1024 };

type DetailSlot = { whole: AgentDetail } | { delta: AgentDetailDelta };

export class PacedFeed {
  /** The view of each row the page has, as this feed last sent it (or the snapshot gave it). */
  private readonly sent = new Map<string, AgentView>();
  /** Rows changed since: the latest view, or null for a row that went. */
  private readonly rows = new Map<string, AgentView | null>();
  private readonly environments = new Map<string, EnvironmentView | null>();
  private readonly details = new Map<string, DetailSlot>();
  private others: { event: BridgeEvent; chars: number }[] = [];
  private othersChars = 0;
  private seq = 0;
  /** The batches the page has not acknowledged yet, oldest first. */
  private inFlight: number[] = [];
  /** Other events outgrew `maxPendingChars`: the transport sends a fresh snapshot (`resync`). */
  overflowed = false;

  constructor(
    /** Something can be sent now (`take`): called when the page has room and a change arrives, or acknowledges with changes waiting. */
    private readonly ready: () => void,
    private readonly limits: PacedFeedLimits = DEFAULT_FEED_LIMITS,
  ) {}

  /** The page starts over from a snapshot with these rows: what waited is in it, and the next batch may go at once. */
  resync(agents: Iterable<AgentView>): void {
    this.sent.clear();
    for (const agent of agents) this.sent.set(agent.key, agent);
    this.rows.clear();
    this.environments.clear();
    // The page opens its agent again after a snapshot (renderer/src/state/bridge-events.ts), answered whole.
    this.details.clear();
    this.others = [];
    this.othersChars = 0;
    this.overflowed = false;
    this.inFlight = [];
  }

  push(event: BridgeEvent): void {
    switch (event.type) {
      case "fleet.delta":
        for (const view of event.agents) this.rows.set(view.key, view);
        for (const key of event.removed) this.rows.set(key, null);
        for (const env of event.environments) this.environments.set(env.environmentId, env);
        for (const id of event.removedEnvironments) this.environments.set(id, null);
        break;
      case "agent.detail":
        this.details.set(event.detail.key, { whole: event.detail });
        break;
      case "agent.detailDelta": {
        const slot = this.details.get(event.delta.key);
        const { delta } = event;
        if (!slot) this.details.set(delta.key, { delta });
        else if ("whole" in slot) this.details.set(delta.key, { whole: applyDetailDelta(slot.whole, delta) });
        else this.details.set(delta.key, { delta: mergeDetailDeltas(slot.delta, delta) });
        break;
      }
      default: {
        if (this.overflowed) return; // the snapshot that resynchronizes the page carries it
        const chars = JSON.stringify(event).length;
        this.others.push({ event, chars });
        this.othersChars += chars;
        if (this.othersChars > this.limits.maxPendingChars) {
          this.overflowed = true;
          this.others = [];
          this.othersChars = 0;
          this.ready(); // the transport resynchronizes the page, which need not take the last batch first
          return;
        }
      }
    }
    if (this.hasRoom) this.ready();
  }

  private get hasRoom(): boolean {
    return this.inFlight.length < this.limits.window;
  }

  /** The page opened this agent: the open's answer carries its whole detail, so what waited for it is dropped. */
  opened(key: string): void {
    this.details.delete(key);
  }

  /** The page took batch `seq`; an answer to an older batch (before a resync) changes nothing. */
  ack(seq: number): void {
    const index = this.inFlight.indexOf(seq);
    if (index < 0) return;
    // The page takes batches in order: this one and those before it.
    this.inFlight.splice(0, index + 1);
    if (this.waiting) this.ready();
  }

  get waiting(): boolean {
    return this.rows.size > 0 || this.environments.size > 0 || this.details.size > 0 || this.others.length > 0;
  }

  /** The next batch, when the page has taken the last and something changed; it is in flight until acknowledged. */
  take(): BridgeBatch | undefined {
    if (!this.hasRoom || !this.waiting) return undefined;
    const events: BridgeEvent[] = [];
    const taken = this.others.splice(0, this.limits.maxEvents);
    for (const { event, chars } of taken) {
      events.push(event);
      this.othersChars -= chars;
    }
    const rows = this.takeRows();
    if (rows) events.push(rows);
    for (const [key, slot] of this.details) {
      events.push("whole" in slot ? { type: "agent.detail", detail: slot.whole } : { type: "agent.detailDelta", delta: slot.delta });
      this.details.delete(key);
    }
    if (events.length === 0) return undefined; // only rows that changed back, or went before the page had them
    this.seq += 1;
    this.inFlight.push(this.seq);
    return { type: "events", seq: this.seq, events };
  }

  private takeRows(): Extract<BridgeEvent, { type: "fleet.delta" }> | undefined {
    const agents: AgentView[] = [];
    const patches: AgentPatch[] = [];
    const removed: string[] = [];
    for (const [key, view] of this.rows) {
      if (agents.length + patches.length + removed.length >= this.limits.maxRows) break;
      this.rows.delete(key);
      const before = this.sent.get(key);
      if (view === null) {
        if (before) removed.push(key);
        this.sent.delete(key);
        continue;
      }
      this.sent.set(key, view);
      if (!before) agents.push(view);
      else {
        const patch = rowPatch(before, view);
        if (patch) patches.push(patch);
      }
    }
    const environments: EnvironmentView[] = [];
    const removedEnvironments: string[] = [];
    for (const [id, env] of this.environments) {
      if (env === null) removedEnvironments.push(id);
      else environments.push(env);
    }
    this.environments.clear();
    if (agents.length + patches.length + removed.length + environments.length + removedEnvironments.length === 0) return undefined;
    return { type: "fleet.delta", agents, ...(patches.length > 0 && { patches }), removed, environments, removedEnvironments };
  }
}

// What the user did to agents (shared/fleet/handled.ts), kept by the fleet service so the window's
// "handled today" list survives a reload of the window; each new entry is published to the windows.
// In memory only: the registry file holds ids, labels and URLs, never agents' titles.
import { HANDLED_KEPT, type HandledAction, type HandledEntry, handledSince } from "../../shared/fleet/handled";
import { type FleetModel, splitKey } from "../../shared/fleet/model";

/** Entries older than this are dropped: the window asks for today's only. */
const KEEP_MS = 48 * 3_600_000;
/** Entries let go are counted by the quarter hour they were done in: local midnight falls on one in every time zone. */
const LET_GO_BUCKET_MS = 15 * 60_000;

export class HandledLog {
  private entries: HandledEntry[] = [];
  /** Entries let go to keep HANDLED_KEPT, counted by the quarter hour (its start, ms) they were done in. */
  private readonly letGo = new Map<number, number>();
  private sequence = 0;

  constructor(
    private readonly model: FleetModel,
    private readonly publish: (entry: HandledEntry) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records what was done to the agent, named as the agent and its machine are called now. */
  record(key: string, action: HandledAction): HandledEntry {
    const [environmentId, threadId] = splitKey(key);
    const at = this.now();
    const entry: HandledEntry = {
      id: `${at}-${++this.sequence}`,
      at,
      key,
      agent: this.model.agent(key)?.title || threadId,
      machine: this.model.environment(environmentId)?.label ?? environmentId,
      action,
    };
    const recent = this.entries.filter((kept) => kept.at >= at - KEEP_MS);
    for (const old of recent.splice(0, Math.max(0, recent.length - (HANDLED_KEPT - 1)))) {
      const bucket = old.at - (old.at % LET_GO_BUCKET_MS);
      this.letGo.set(bucket, (this.letGo.get(bucket) ?? 0) + 1);
    }
    for (const bucket of this.letGo.keys()) if (bucket < at - KEEP_MS - LET_GO_BUCKET_MS) this.letGo.delete(bucket);
    this.entries = [...recent, entry];
    this.publish(entry);
    return entry;
  }

  /**
   * The entries kept since `since` (ms), and how many more were done since then and let go (counted
   * from the quarter hour `since` falls in).
   */
  since(since: number): { entries: HandledEntry[]; letGo: number } {
    const from = since - (since % LET_GO_BUCKET_MS);
    let letGo = 0;
    for (const [bucket, count] of this.letGo) if (bucket >= from) letGo += count;
    return { entries: handledSince(this.entries, since), letGo };
  }
}

// What the user did to agents (shared/fleet/handled.ts), kept by the fleet service so the window's
// "handled today" list survives a reload of the window; each new entry is published to the windows.
// In memory only: the registry file holds ids, labels and URLs, never agents' titles.
import { type HandledAction, type HandledEntry, handledSince } from "../../shared/fleet/handled";
import { type FleetModel, splitKey } from "../../shared/fleet/model";

/** Entries older than this are dropped: the window asks for today's only. */
const KEEP_MS = 48 * 3_600_000;
/** A bound on memory however busy the day. */
const MAX_ENTRIES = 2_000;

export class HandledLog {
  private entries: HandledEntry[] = [];
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
    this.entries = [...this.entries.filter((kept) => kept.at >= at - KEEP_MS).slice(-(MAX_ENTRIES - 1)), entry];
    this.publish(entry);
    return entry;
  }

  since(since: number): HandledEntry[] {
    return handledSince(this.entries, since);
  }
}

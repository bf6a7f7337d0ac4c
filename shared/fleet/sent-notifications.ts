// The notification ids the policy has shown, or found and so never shows (shared/fleet/notifications.ts),
// kept per owner: the agent whose condition they announce, or the machine. An id names one
// occurrence of a condition (a request, a failed run, an outage's start), so only an owner's recent
// ids can come back; keeping every id made the service's heap rise for as long as it ran, one id
// per notification (issue 43: some 500 an hour in the soak).

/**
 * Ids kept per owner, the newest: an id recurs only while its condition can come back (the request
 * still pending, the run still the latest, the outage just reported), a few at a time. At 64, an
 * agent that lives for days kept its 64, and a few hundred agents ~1 MB, filling for a day of
 * notifications (heap-compare under bench/soak/heap-churn.ts showed the line).
 */
export const SENT_IDS_KEPT_PER_OWNER = 16;

/**
 * An id as a 53-bit number: ids are only looked up, and a protocol-2 id names its request (some 250
 * characters), so an owner's 16 kept as strings were ~4 KB, held for as long as the agent lives. Two
 * ids of one owner share a number with a chance of about 1 in 2^49.
 */
export function idDigest(id: string): number {
  let high = 0xdeadbeef;
  let low = 0x41c6ce57;
  for (let index = 0; index < id.length; index++) {
    const code = id.charCodeAt(index);
    high = Math.imul(high ^ code, 2_654_435_761);
    low = Math.imul(low ^ code, 1_597_334_677);
  }
  high = Math.imul(high ^ (high >>> 16), 2_246_822_507) ^ Math.imul(low ^ (low >>> 13), 3_266_489_909);
  low = Math.imul(low ^ (low >>> 16), 2_246_822_507) ^ Math.imul(high ^ (high >>> 13), 3_266_489_909);
  return 4_294_967_296 * (2_097_151 & high) + (low >>> 0);
}

export class SentNotifications {
  private readonly byOwner = new Map<string, Set<number>>();

  constructor(private readonly keptPerOwner = SENT_IDS_KEPT_PER_OWNER) {}

  has(owner: string, id: string): boolean {
    return this.byOwner.get(owner)?.has(idDigest(id)) === true;
  }

  add(owner: string, id: string): void {
    let ids = this.byOwner.get(owner);
    if (!ids) this.byOwner.set(owner, (ids = new Set()));
    const digest = idDigest(id);
    ids.delete(digest);
    ids.add(digest);
    if (ids.size > this.keptPerOwner) ids.delete(ids.values().next().value!);
  }

  /** The owner left the fleet: a condition found on it if it comes back is found again, not news. */
  forget(owner: string): void {
    this.byOwner.delete(owner);
  }

  /** Ids kept in all. */
  get size(): number {
    let total = 0;
    for (const ids of this.byOwner.values()) total += ids.size;
    return total;
  }
}

/** Whose condition a notification announces: its agent, or its machine for machine-wide ones. */
export const notificationOwner = (intent: { agentKey: string | null; environmentId: string }): string =>
  intent.agentKey ?? `environment:${intent.environmentId}`;

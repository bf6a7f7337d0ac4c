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

export class SentNotifications {
  private readonly byOwner = new Map<string, Set<string>>();

  constructor(private readonly keptPerOwner = SENT_IDS_KEPT_PER_OWNER) {}

  has(owner: string, id: string): boolean {
    return this.byOwner.get(owner)?.has(id) === true;
  }

  add(owner: string, id: string): void {
    let ids = this.byOwner.get(owner);
    if (!ids) this.byOwner.set(owner, (ids = new Set()));
    ids.delete(id);
    ids.add(id);
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

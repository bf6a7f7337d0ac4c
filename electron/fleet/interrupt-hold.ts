// Interrupting a turn that has messages queued behind it: T3 starts the next queued run as soon as
// the running one ends. "Interrupt and hold queued" keeps them from starting. T3's protocol 2 (at
// the contract the fleet speaks) cannot freeze its queue, but it can cancel a queued run before it
// starts (`queued-run.cancel`); the fleet then keeps each message's text as a held delivery the user
// releases (sent again, once, with the commandId it was held with) or discards. The cancelled
// message stays in T3's thread, shown "cancelled before it started", so nothing vanishes unseen.
// Cancels go first, then the interrupt: the other way round the next run could start in between.
import type { Delivery } from "../../shared/fleet/delivery";
import type { FleetModel } from "../../shared/fleet/model";
import type { Deliveries } from "./deliveries";

/** Why a message is held, beside its Send now and Discard buttons (the buttons say what they do). */
export const HELD_REASON = "taken out of T3's queue when you interrupted";

/** The messages T3 holds in its queue behind the running turn, next first. */
export function queuedMessages(deliveries: Deliveries, key: string): { messageId: string; runId: string; text: string; position: number | null }[] {
  const detail = deliveries.threadDetail(key);
  if (!detail) return [];
  const outcomes = detail.facts.messageOutcomes ?? {};
  return detail.items
    .flatMap((item) => {
      const outcome = outcomes[item.id];
      return item.type === "message" && item.queue?.state === "queued" && outcome?.how === "queued"
        ? [{ messageId: item.id, runId: outcome.runId, text: item.text, position: item.queue.position }]
        : [];
    })
    .sort((a, b) => (a.position ?? Number.MAX_SAFE_INTEGER) - (b.position ?? Number.MAX_SAFE_INTEGER));
}

/**
 * Cancels each queued run and holds its message once T3 accepted the cancel, then interrupts. A
 * cancel T3 refused or did not confirm (the connection dropped) stops there: interrupting then
 * would let that message start next, which the user asked to prevent. The cancel's receipt, with
 * its reason, is the answer; messages already held stay held.
 */
export async function interruptHoldingQueue(deliveries: Deliveries, model: FleetModel, key: string): Promise<Delivery> {
  // The turn the user chose to interrupt is the one running now: the cancels below change the
  // thread's runs, and the row may name another run while they settle.
  const runId = deliveries.threadDetail(key)?.facts.activeRunId ?? model.agent(key)?.activeRunId ?? null;
  for (const queued of queuedMessages(deliveries, key)) {
    const cancel = await deliveries.command(
      key,
      "cancel-queued",
      (threadId, commandId) => ({ type: "cancel-queued", commandId, threadId, runId: queued.runId }),
      undefined,
      { messageId: queued.messageId, text: queued.text },
    );
    if (cancel.state !== "accepted" && cancel.state !== "delivered") return cancel;
    deliveries.hold(key, queued.text, HELD_REASON, queued.messageId);
  }
  return deliveries.command(key, "interrupt", (threadId, commandId) => ({ type: "interrupt", commandId, threadId, runId }));
}

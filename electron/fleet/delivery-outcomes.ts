// What a followed thread shows of a send (deliveries.ts applies it): pure readings of the thread,
// so the delivery rules can be read in one place.
import type { Delivery } from "../../shared/fleet/delivery";
import type { MessageOutcome, ThreadDetailFacts, TranscriptItem } from "../../shared/fleet/facts";
import { THREAD_LEFT_AFTER_ACCEPT, THREAD_LEFT_AFTER_DELIVERY, THREAD_LEFT_UNCONFIRMED, NO_RECORD_OF_ANSWER, answeredOtherwise } from "./delivery-reasons";

type Message = Extract<TranscriptItem, { type: "message" }>;

/** How a turn ends with no answer to come: failed, interrupted, cancelled, rolled back, or its session stopped. */
const ENDED_UNANSWERED = new Set(["failed", "interrupted", "cancelled", "rolled-back", "stopped"]);

/** The message's turn is over and gave no answer: no longer the active run, and the thread's run ended so. */
function endedUnanswered(turnId: string | undefined, facts: ThreadDetailFacts): boolean {
  return turnId !== undefined && facts.activeRunId !== turnId && ENDED_UNANSWERED.has(facts.run?.phase ?? "");
}

/** A delivery's next state: `settle` when nothing more will happen to it. Null: nothing changed. */
export type DeliveryStep = { settle: boolean; patch: Partial<Delivery> } | null;

/** How the message was sent: the run active then, and whether T3 was expected to fold it into that run. */
export interface SentInto {
  turnBefore: string | null;
  expectSteer: boolean;
}

/** A message the thread shows (at `index` among its messages): delivered, with the turn it joined or started, or answered. */
export function messageStep(delivery: Delivery, sent: SentInto, messages: Message[], index: number, facts: ThreadDetailFacts): DeliveryStep {
  const activeRun = facts.activeRunId;
  // Protocol 2 says which run the message started, waits in, or joined (a steer): no inference needed.
  const reported = facts.messageOutcomes?.[delivery.messageId!];
  if (reported) return reportedStep(delivery, reported, messages, index, facts);
  const later = messages.slice(index + 1).filter((message) => message.role === "assistant" && message.runId);
  // A run other than the one active at send time means T3 started a new turn for the message.
  const otherRun = later.find((message) => message.runId !== sent.turnBefore)?.runId ?? (activeRun && activeRun !== sent.turnBefore ? activeRun : null);
  let observed = delivery.observed;
  let reply: Message | undefined;
  if (otherRun) {
    observed = { outcome: "new-turn", turnId: otherRun };
    reply = later.filter((message) => message.runId === otherRun).at(-1);
  } else if (sent.turnBefore && sent.expectSteer && activeRun !== sent.turnBefore) {
    // The running turn ended with no new one: the message was folded into it.
    observed = { outcome: "steered", turnId: sent.turnBefore };
    reply = later.at(-1);
  }
  const answered = reply !== undefined && !reply.streaming && activeRun !== observed?.turnId;
  const state = answered ? "answered" : "delivered";
  // Nothing more will happen to it: settled as delivered, no longer followed.
  if (!answered && endedUnanswered(observed?.turnId, facts)) return { settle: true, patch: { state, observed } };
  const sameOutcome = observed?.outcome === delivery.observed?.outcome && observed?.turnId === delivery.observed?.turnId;
  if (state === delivery.state && sameOutcome) return null;
  return { settle: answered, patch: { state, observed } };
}

/** Where the adapter reports what became of the message (protocol 2), that report is the outcome. */
function reportedStep(delivery: Delivery, reported: MessageOutcome, messages: Message[], index: number, facts: ThreadDetailFacts): DeliveryStep {
  const activeRun = facts.activeRunId;
  const observed: NonNullable<Delivery["observed"]> =
    reported.how === "started"
      ? { outcome: "new-turn", turnId: reported.runId }
      : reported.how === "joined"
        ? { outcome: "steered", turnId: reported.runId }
        : reported.how === "queued"
          ? { outcome: "queued", turnId: reported.runId, queuePosition: reported.queuePosition }
          : { outcome: "cancelled", turnId: reported.runId };
  // The outcome says it was withdrawn from the queue (shared/fleet/words.ts); no reason repeats it.
  if (reported.how === "cancelled") return { settle: true, patch: { state: "delivered", observed, reason: null } };
  const reply = messages
    .slice(index + 1)
    .filter((message) => message.role === "assistant" && message.runId === reported.runId)
    .at(-1);
  const answered = reported.how !== "queued" && reply !== undefined && !reply.streaming && activeRun !== reported.runId;
  if (answered) return { settle: true, patch: { state: "answered", observed } };
  if (reported.how !== "queued" && endedUnanswered(reported.runId, facts)) return { settle: true, patch: { state: "delivered", observed } };
  const same =
    delivery.observed?.outcome === observed.outcome &&
    delivery.observed.turnId === observed.turnId &&
    delivery.observed.queuePosition === observed.queuePosition;
  return delivery.state !== "delivered" || !same ? { settle: false, patch: { state: "delivered", observed } } : null;
}

/**
 * What the thread shows of a command: its effect (the turn interrupted or stopped, the queued run
 * withdrawn), or for an answer how T3 recorded the request's end. Null: not yet.
 */
export function commandStep(delivery: Delivery, turnBefore: string | null, facts: ThreadDetailFacts, decision?: string): Partial<Delivery> | null {
  if (delivery.kind === "approval" || delivery.kind === "input") return answerStep(delivery, turnBefore, facts, decision);
  return commandDone(delivery, turnBefore, facts) ? { state: "delivered" } : null;
}

/**
 * An answer reached the agent only where T3 recorded the request resolved, with this decision
 * where it names one. A request T3 could not pass it to is refused in T3's words. No longer pending
 * without a record (the fleet marks its own answer at once) is not an end: it waits for T3's,
 * until the turn that asked ends with none (uncertain: nothing more will tell).
 */
function answerStep(delivery: Delivery, turnBefore: string | null, facts: ThreadDetailFacts, decision: string | undefined): Partial<Delivery> | null {
  const requestId = delivery.requestId;
  const end = requestId === null ? undefined : facts.requestEnds?.[requestId];
  if (!end) {
    const open = facts.pending.some((request) => request.requestId === requestId);
    return !open && turnBefore !== null && facts.activeRunId !== turnBefore ? { state: "uncertain", reason: NO_RECORD_OF_ANSWER } : null;
  }
  if (end.how === "failed") return { state: "refused", reason: end.reason };
  if (end.decision !== null && decision !== undefined && end.decision !== decision) return { state: "refused", reason: answeredOtherwise(end.decision) };
  return { state: "delivered" };
}

/** Whether a command's effect shows in the thread (the turn interrupted or stopped, the queued run withdrawn). */
function commandDone(delivery: Delivery, turnBefore: string | null, facts: ThreadDetailFacts): boolean {
  const phase = facts.run?.phase;
  // A turn orphaned by a restart keeps no active run; its state says it was interrupted.
  if (delivery.kind === "interrupt") return facts.activeRunId !== turnBefore || turnBefore === null || phase === "interrupted" || phase === "cancelled";
  if (delivery.kind === "cancel-queued") return phase !== "queued";
  return phase === "stopped";
}

/** What a send whose thread left says, by what was known of it then ("Send again" no longer applies). */
export function closedPatch(state: Delivery["state"]): Partial<Delivery> {
  if (state === "delivered") return { reason: THREAD_LEFT_AFTER_DELIVERY };
  if (state === "accepted") return { state, reason: THREAD_LEFT_AFTER_ACCEPT };
  return { state: "uncertain", reason: THREAD_LEFT_UNCONFIRMED, sendAgain: false };
}

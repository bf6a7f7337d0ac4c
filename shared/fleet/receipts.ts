// An agent's receipts: one line per message, showing only its current state, and one per command,
// with what can still be done. A message T3 queued, withdrawn when the user interrupted, held by the
// fleet and sent again is one message to the user, so its withdrawal, its hold and its sending make
// one line (linked by `messageId` and `heldFrom`, electron/fleet/interrupt-hold.ts). The words match
// the buttons beside them: Cancel, Send now, Discard, Check again.
import type { Delivery, DeliveryKind, DeliveryState } from "./delivery";
import { deliveryOutcomeWords } from "./words";

export type ReceiptActionKind = "cancel-queued" | "send-now" | "discard" | "check-again" | "send-again";

export interface ReceiptAction {
  kind: ReceiptActionKind;
  /** The delivery the action applies to. */
  commandId: string;
}

export interface Receipt {
  /** The delivery whose state the line shows; its commandId keys the line. */
  delivery: Delivery;
  /** What the line is about: a message's text, quoted, or the command. */
  what: string;
  /** Its current state, in words. */
  state: string;
  /** Why, where it adds to the state: a refusal's reason, why a message is held. */
  detail: string | null;
  actions: ReceiptAction[];
}

/** A message receipt's state words, before anything was observed in the thread. */
export const MESSAGE_WORDS: Record<DeliveryState, string> = {
  sending: "sending…",
  accepted: "accepted by the server",
  // T3 stored it; only a turn taking it (observed: started, joined, queued) says more (issue 39).
  delivered: "on the server; no turn has taken it yet",
  answered: "the agent replied",
  refused: "not sent",
  uncertain: "not confirmed yet",
  held: "held, not sent",
  discarded: "discarded, never sent",
};

/** What a receipt is about, for the actions that are not messages. */
export const DELIVERY_WHAT: Record<Exclude<DeliveryKind, "message">, string> = {
  approval: "Your approval decision",
  input: "Your answers",
  interrupt: "Interrupt",
  stop: "Stop session",
  "cancel-queued": "A queued message",
};

/** What happened to a non-message action once delivered (it has no reply of its own). */
const DONE_WORDS: Record<Exclude<DeliveryKind, "message">, string> = {
  approval: "reached the agent",
  input: "reached the agent",
  interrupt: "the run was interrupted",
  stop: "the session stopped",
  "cancel-queued": "withdrawn from the queue",
};

/**
 * An answer's state words where they differ from a message's: refused, it was sent (or could not
 * be) and did not reach the agent; the detail gives T3's reason (docs/t3-protocols.md, "What closes
 * a request or a delivery").
 */
const ANSWER_WORDS: Partial<Record<DeliveryState, string>> = {
  refused: "did not reach the agent",
  uncertain: "not confirmed",
};

/** A withdrawal's state words while it is not done. */
const WITHDRAWAL_WORDS: Partial<Record<DeliveryState, string>> = {
  sending: "withdrawing from the queue…",
  accepted: "withdrawing from the queue…",
  uncertain: "withdrawal not confirmed yet",
  refused: "still queued: could not withdraw it",
};

/** A command receipt's words: what happened, not only a protocol state. */
export function commandWords(delivery: Pick<Delivery, "kind" | "state">): string {
  if (delivery.kind === "message") return MESSAGE_WORDS[delivery.state];
  if (delivery.kind === "cancel-queued")
    return delivery.state === "delivered" || delivery.state === "answered"
      ? DONE_WORDS["cancel-queued"]
      : (WITHDRAWAL_WORDS[delivery.state] ?? MESSAGE_WORDS[delivery.state]);
  if (delivery.state === "delivered" || delivery.state === "answered") return DONE_WORDS[delivery.kind];
  if (delivery.kind === "approval" || delivery.kind === "input") return ANSWER_WORDS[delivery.state] ?? MESSAGE_WORDS[delivery.state];
  return MESSAGE_WORDS[delivery.state];
}

/** A message's current state: what was observed of it where anything was, else how far the send got. */
export function messageWords(delivery: Pick<Delivery, "state" | "observed">): string {
  const outcome = deliveryOutcomeWords(delivery);
  if (!outcome) return MESSAGE_WORDS[delivery.state];
  // A steer's words already say whether its turn ended; another turn's reply is the agent's answer.
  return delivery.state === "answered" && delivery.observed?.outcome !== "steered" ? `${outcome}; the agent replied` : outcome;
}

const quote = (text: string | null) => `“${text ?? ""}”`;

/** The message a delivery is part of (a withdrawal, a hold and a resend share one), else itself. */
function lineKey(delivery: Delivery): string {
  if (delivery.kind === "message") {
    const message = delivery.heldFrom ?? delivery.messageId;
    return message ? `message:${message}` : `command:${delivery.commandId}`;
  }
  if (delivery.kind === "cancel-queued" && delivery.messageId) return `message:${delivery.messageId}`;
  return `command:${delivery.commandId}`;
}

const withdrawalPending = (delivery: Delivery) => delivery.kind === "cancel-queued" && delivery.state !== "delivered" && delivery.state !== "answered";

/** One line: the latest message of the group with a later withdrawal folded in, or the command alone. */
function receiptOf(group: Delivery[]): Receipt {
  const messageIndex = group.findLastIndex((delivery) => delivery.kind === "message");
  if (messageIndex === -1) {
    // A command, or a withdrawal of a message the fleet did not send (typed in T3 itself).
    const delivery = group.at(-1)!;
    const what =
      delivery.kind === "cancel-queued" && delivery.text !== null ? quote(delivery.text) : DELIVERY_WHAT[delivery.kind as Exclude<DeliveryKind, "message">];
    return { delivery, what, state: commandWords(delivery), detail: delivery.reason, actions: checkAgain(delivery) };
  }
  const message = group[messageIndex]!;
  const withdrawal = group.slice(messageIndex + 1).findLast(withdrawalPending);
  const actions: ReceiptAction[] = [];
  if (message.observed?.outcome === "queued" && message.state !== "answered" && (!withdrawal || withdrawal.state === "refused"))
    actions.push({ kind: "cancel-queued", commandId: message.commandId });
  if (message.state === "held") actions.push({ kind: "send-now", commandId: message.commandId }, { kind: "discard", commandId: message.commandId });
  actions.push(...checkAgain(message));
  if (withdrawal) {
    actions.push(...checkAgain(withdrawal));
    const state = withdrawal.state === "refused" ? messageWords(message) : commandWords(withdrawal);
    const detail = withdrawal.state === "refused" ? `Could not withdraw it: ${withdrawal.reason ?? "the server refused"}` : withdrawal.reason;
    return { delivery: message, what: quote(message.text), state, detail, actions };
  }
  return { delivery: message, what: quote(message.text), state: messageWords(message), detail: message.reason, actions };
}

/** An uncertain one can be checked again; after a restart, a message T3's thread does not show can be sent again, once (electron/fleet/deliveries.ts). */
function checkAgain(delivery: Delivery): ReceiptAction[] {
  if (delivery.state !== "uncertain") return [];
  return [{ kind: delivery.sendAgain === true ? "send-again" : "check-again", commandId: delivery.commandId }];
}

/**
 * The receipts of one agent's deliveries, oldest first: every held message (it waits for the user)
 * and the latest `recent` others.
 */
export function agentReceipts(deliveries: Iterable<Delivery>, agentKey: string, recent = 6): Receipt[] {
  const groups = new Map<string, Delivery[]>();
  // Oldest first (a sort is stable: deliveries made in the same millisecond keep their order).
  const mine = [...deliveries].filter((delivery) => delivery.agentKey === agentKey).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  for (const delivery of mine) {
    const key = lineKey(delivery);
    const group = groups.get(key);
    if (group) group.push(delivery);
    else groups.set(key, [delivery]);
  }
  const receipts = [...groups.values()].map(receiptOf);
  const others = new Set(receipts.filter((receipt) => receipt.delivery.state !== "held").slice(-recent));
  return receipts.filter((receipt) => receipt.delivery.state === "held" || others.has(receipt));
}

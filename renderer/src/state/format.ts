// Pure text for the UI: delivery labels and relative times (connection words: shared/fleet/views.ts).
import type { Delivery, DeliveryKind, DeliveryState } from "../../../shared/fleet/delivery";

/** A message receipt's state words. */
export const MESSAGE_WORDS: Record<DeliveryState, string> = {
  sending: "sending…",
  accepted: "accepted by the server",
  delivered: "delivered to the agent",
  answered: "the agent replied",
  refused: "refused",
  // Every uncertain receipt carries its reason (the connection dropped, no answer in time, T3 Fleet restarted).
  uncertain: "not confirmed by the server",
  held: "held: not sent until you release it",
  discarded: "discarded: never sent",
};

/** What a receipt is about, for the actions that are not messages. */
export const DELIVERY_WHAT: Record<Exclude<DeliveryKind, "message">, string> = {
  approval: "Your approval decision",
  input: "Your answers",
  interrupt: "Interrupt",
  stop: "Stop session",
  "cancel-queued": "Withdrawing the queued message",
};

/** What happened to a non-message action once delivered (it has no reply of its own). */
const DONE_WORDS: Record<Exclude<DeliveryKind, "message">, string> = {
  approval: "reached the agent",
  input: "reached the agent",
  interrupt: "the run was interrupted",
  stop: "the session stopped",
  "cancel-queued": "withdrawn",
};

/** A receipt's words: what happened, not only a protocol state. */
export function receiptWords(delivery: Pick<Delivery, "kind" | "state">): string {
  if (delivery.kind === "message") return MESSAGE_WORDS[delivery.state];
  if (delivery.state === "delivered" || delivery.state === "answered") return DONE_WORDS[delivery.kind];
  return MESSAGE_WORDS[delivery.state];
}

export function relativeTime(iso: string | null, now: number): string {
  if (!iso) return "never";
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return "unknown time";
  const seconds = Math.round((now - at) / 1000);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds}s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours}h ago`;
  return `${Math.round(hours / 24)}d ago`;
}

/** A time of day in the user's locale, to the minute: "16:05" or "4:05 PM". */
export function clockTime(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// Every message the soak sends, and its truth counted at the server: delivered once, shown refused
// or uncertain by the fleet, duplicated, or lost (sent, not at the server, and not shown as such).
import type { Delivery } from "../../shared/fleet/delivery";

export type SendMode = "new-turn" | "steer" | "queue";

export interface SentMessage {
  n: number;
  tag: string;
  text: string;
  key: string;
  machine: string;
  threadId: string;
  mode: SendMode;
  sentAt: number;
  /** What the bridge answered: the delivery, a refusal in words, or nothing (the service died first). */
  answer:
    | { kind: "delivery"; commandId: string; state: Delivery["state"]; reason: string | null }
    | { kind: "refused"; message: string }
    | { kind: "unanswered" }
    | { kind: "pending" };
  /** Sent within the last moments before the service was SIGKILLed. */
  inFlightAtKill: boolean;
}

export type Verdict = "delivered" | "refused" | "uncertain" | "not-sent" | "duplicated" | "lost" | "delivered-but-shown-refused";

export interface MessageTally {
  sent: number;
  delivered: number;
  refused: number;
  uncertain: number;
  /** The bridge never answered (the service was killed first) and nothing reached T3: the page showed the send as failed. */
  notSent: number;
  duplicated: number;
  lost: number;
  /** At the server once, yet the fleet says refused: a wrong word to the user (must be 0). */
  deliveredButShownRefused: number;
  inFlightAtKill: number;
  inFlightAtKillTruth: Record<string, number>;
  refusalReasons: Map<string, number>;
  examples: string[];
}

/** The fleet's last word on one message: its delivery by commandId, else one whose text carries the tag. */
export function fleetDeliveryOf(message: SentMessage, deliveries: Map<string, Delivery>): Delivery | undefined {
  if (message.answer.kind === "delivery") {
    const found = deliveries.get(message.answer.commandId);
    if (found) return found;
  }
  for (const delivery of deliveries.values()) if (delivery.kind === "message" && delivery.text?.includes(message.tag)) return delivery;
  return undefined;
}

/** The last state the fleet showed a receipt in ("refused (event)" → "refused"), from the history the soak keeps. */
export function lastShownState(message: SentMessage, history: Map<string, string[]>): Delivery["state"] | undefined {
  if (message.answer.kind !== "delivery") return undefined;
  return history.get(message.answer.commandId)?.at(-1)?.split(" ")[0] as Delivery["state"] | undefined;
}

/**
 * `delivery` is the receipt the fleet holds at the end; one that settled long ago may have left its
 * bounded list (electron/fleet/delivery-journal.ts keeps the newest settled ones), and then the
 * state it was last shown in is the fleet's word.
 */
export function verdictOf(message: SentMessage, atServer: number, held: Delivery | undefined, lastShown?: Delivery["state"]): Verdict {
  const delivery = held ?? (lastShown && { state: lastShown });
  if (atServer > 1) return "duplicated";
  // A send refused before it left is answered with a refused receipt and not tracked by the service
  // (electron/fleet/deliveries.ts, finishRefused): the page showed that receipt; a later snapshot need not hold it.
  const answeredRefused = message.answer.kind === "delivery" && message.answer.state === "refused";
  const shownRefused = message.answer.kind === "refused" || answeredRefused || delivery?.state === "refused";
  if (atServer === 1) return shownRefused ? "delivered-but-shown-refused" : "delivered";
  if (shownRefused || delivery?.state === "discarded") return "refused";
  if (delivery?.state === "uncertain" || delivery?.state === "held") return "uncertain";
  if (!delivery && message.answer.kind === "unanswered") return "not-sent";
  return "lost";
}

export function tally(
  messages: SentMessage[],
  serverCount: (message: SentMessage) => number,
  deliveries: Map<string, Delivery>,
  history: Map<string, string[]> = new Map(),
): MessageTally {
  const out: MessageTally = {
    sent: messages.length,
    delivered: 0,
    refused: 0,
    uncertain: 0,
    notSent: 0,
    duplicated: 0,
    lost: 0,
    deliveredButShownRefused: 0,
    inFlightAtKill: 0,
    inFlightAtKillTruth: {},
    refusalReasons: new Map(),
    examples: [],
  };
  for (const message of messages) {
    const delivery = fleetDeliveryOf(message, deliveries);
    const verdict = verdictOf(message, serverCount(message), delivery, lastShownState(message, history));
    if (message.inFlightAtKill) {
      out.inFlightAtKill++;
      out.inFlightAtKillTruth[verdict] = (out.inFlightAtKillTruth[verdict] ?? 0) + 1;
    }
    if (verdict === "refused") {
      const reason =
        message.answer.kind === "refused"
          ? message.answer.message
          : (delivery?.reason ?? (message.answer.kind === "delivery" ? message.answer.reason : null) ?? "(no reason)");
      out.refusalReasons.set(reason, (out.refusalReasons.get(reason) ?? 0) + 1);
    }
    switch (verdict) {
      case "delivered":
        out.delivered++;
        break;
      case "refused":
        out.refused++;
        break;
      case "uncertain":
        out.uncertain++;
        break;
      case "not-sent":
        out.notSent++;
        break;
      case "duplicated":
        out.duplicated++;
        break;
      case "lost":
        out.lost++;
        break;
      case "delivered-but-shown-refused":
        out.deliveredButShownRefused++;
        break;
    }
    if ((verdict === "lost" || verdict === "duplicated" || verdict === "delivered-but-shown-refused") && out.examples.length < 12)
      out.examples.push(
        `${verdict}: ${message.tag} to ${message.machine}/${message.threadId} (${message.mode}, sent at ${(message.sentAt / 1000).toFixed(1)} s) — answer ${message.answer.kind}, fleet ${delivery ? `${delivery.state}${delivery.reason ? ` "${delivery.reason}"` : ""}` : "none"}; seen ${message.answer.kind === "delivery" ? (history.get(message.answer.commandId)?.join(" → ") ?? "never") : "-"}`,
      );
  }
  return out;
}

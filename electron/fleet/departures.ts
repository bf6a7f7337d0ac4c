// Agents that left their machine (deleted, archived, or one of the two when T3 did not say), as the
// fleet learned it. The model keeps their rows a few minutes (shared/fleet/model.ts); this keeps
// how, where and when for longer, bounded, so a send to one is refused in the fleet's words, never
// in T3's ("orchestration.dispatchCommand: Thread '…' does not exist."), which the receipt keeps as
// its details (Delivery.serverWords).
import type { Delivery } from "../../shared/fleet/delivery";
import type { FleetChange, FleetModel } from "../../shared/fleet/model";
import type { AgentView } from "../../shared/fleet/types";

export interface Departure {
  how: "deleted" | "archived" | "unsure";
  /** When the fleet saw it leave (its clock); null when it was already gone when first seen. */
  atMs: number | null;
  machine: string;
}

/**
 * Departures remembered after their rows have gone (their rows stay LEFT_ROWS_KEPT_MS): the newest
 * thousand, weeks of a desk's deletions. At the two-hour soak's churn (some 2,500 departures an hour)
 * 5,000 took most of the run to fill, a rise of its own inside the heap's measured hour (issue 43).
 */
export const DEPARTURES_KEPT = 1_000;
/** Refusals kept to be worded better once T3 says how the agent left. */
const AWAITING_KEPT = 200;

/** How the agent's row says it left; null while it is on its machine. */
function leftHow(agent: AgentView): Departure["how"] | null {
  if (agent.lifecycle === "deleted" || agent.lastKnownStatus === "deleted") return "deleted";
  if (agent.lifecycle === "archived") return "archived";
  // The model's words for a thread that left its stream without T3 saying which (shared/fleet/model.ts).
  if (agent.lastKnownStatus === "ended" && agent.reason === "Archived or deleted") return "unsure";
  return null;
}

export class Departures {
  private readonly left = new Map<string, Departure>();
  /** Agents the model shows on their machine now: a departure seen from one of these happened now. */
  private readonly present = new Set<string>();
  /** Refused before sending while it was only known to be gone (by commandId): reworded once T3 says how. */
  private readonly awaiting = new Map<string, Delivery>();

  constructor(
    private readonly model: FleetModel,
    private readonly now: () => number,
    /** Called once the fleet knows how an agent left (or knows it better: unsure, then deleted). */
    private readonly learned: (key: string) => void,
  ) {
    model.subscribe((change) => this.changed(change));
  }

  get(key: string): Departure | undefined {
    return this.left.get(key);
  }

  /** A send refused before it left, for a departure T3 has not explained yet: `rewordable` returns it once it has. */
  awaitHow(refused: Delivery): void {
    if (this.left.get(refused.agentKey)?.how !== "unsure") return;
    this.awaiting.set(refused.commandId, refused);
    if (this.awaiting.size > AWAITING_KEPT) this.awaiting.delete(this.awaiting.keys().next().value!);
  }

  /** The refusals of this agent awaiting how it left, once that is known (each is returned once). */
  rewordable(key: string): Delivery[] {
    if (this.left.get(key)?.how === "unsure") return [];
    const found = [...this.awaiting.values()].filter((refused) => refused.agentKey === key);
    for (const refused of found) this.awaiting.delete(refused.commandId);
    return found;
  }

  private changed(change: FleetChange): void {
    for (const agent of change.agents) {
      const how = leftHow(agent);
      const known = this.left.get(agent.key);
      if (!how) {
        this.left.delete(agent.key);
        this.present.add(agent.key);
        continue;
      }
      if (known?.how === how) continue;
      const atMs = known ? known.atMs : this.present.has(agent.key) ? this.now() : null;
      this.present.delete(agent.key);
      this.left.delete(agent.key);
      this.left.set(agent.key, { how, atMs, machine: this.model.environment(agent.environmentId)?.label ?? agent.environmentId });
      if (this.left.size > DEPARTURES_KEPT) this.left.delete(this.left.keys().next().value!);
      this.learned(agent.key);
    }
    for (const key of change.removed) this.present.delete(key);
  }
}

/** "14:05", the fleet's local time. */
function clock(ms: number): string {
  const at = new Date(ms);
  return `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
}

/** Why a send to an agent that left was not sent: how, on which machine, and when. */
export function departureWords(departure: Departure, kind: "message" | "command"): string {
  const sent = kind === "message" ? "the message was not sent" : "it was not sent";
  const at = departure.atMs === null ? "" : ` at ${clock(departure.atMs)}`;
  if (departure.how === "deleted") return `This agent was deleted on ${departure.machine}${at}; ${sent}.`;
  if (departure.how === "archived") return `This agent was archived on ${departure.machine}${at}; ${sent}. Unarchive it in T3 to message it.`;
  return `This agent is no longer on ${departure.machine} (archived or deleted${at}); ${sent}.`;
}

export function wordsKind(delivery: Pick<Delivery, "kind">): "message" | "command" {
  return delivery.kind === "message" ? "message" : "command";
}

/** T3 refused because the thread is gone, before the fleet learned how: what is certain so far. */
export function goneWords(machine: string, kind: "message" | "command"): string {
  return `This agent is no longer on ${machine}; ${kind === "message" ? "the message was not sent" : "it was not sent"}.`;
}

/** T3's refusal says the thread does not exist (both protocols' engines word it so). */
export function saysThreadGone(words: string, threadId: string): boolean {
  return words.includes(`Thread '${threadId}' does not exist`);
}

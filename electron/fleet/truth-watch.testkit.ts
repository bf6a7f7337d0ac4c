// The fleet's side of the truth oracle (./truth-oracle.testkit.ts), read from a running fleet
// service as it publishes it: the model's agents and roll-ups, the inbox's needs by the one rule
// (shared/fleet/needs.ts), and every notification and delivery event since the watch began. A
// step's check compares both sides once they have settled: it reads the server again after each
// fleet event until they agree, and fails at the deadline with both sides of what still differs.
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import { needClass, tallyNeeds } from "../../shared/fleet/needs";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import type { RollupStatus } from "../../shared/fleet/types";
import type { FleetService } from "./service";
import { type Contradiction, type FleetTruth, type ServerTruth, contradictions, noteWords, sideBySide } from "./truth-oracle.testkit";

/** How long a step's two sides may take to agree: the fleet follows T3 within a second; under a test's own timeout (20 s). */
const SETTLE_MS = 8_000;

export class TruthWatch {
  readonly notifications: NotificationIntent[] = [];
  private readonly deliveries = new Map<string, Delivery>();
  private readonly seenCalm = new Set<string>();
  private readonly wordsSeen = new Map<string, Set<string>>();
  private readonly listener = (event: BridgeEvent) => {
    if (event.type === "notification") this.notifications.push(event.notification);
    if (event.type === "delivery") this.deliveries.set(event.delivery.commandId, event.delivery);
  };

  /** `past`: the service's events before the watch began (a test's own record of them), read first. */
  constructor(
    private readonly service: FleetService,
    past: readonly BridgeEvent[] = [],
  ) {
    for (const event of past) this.listener(event);
    service.on("event", this.listener);
  }

  stop(): void {
    this.service.off("event", this.listener);
  }

  /** What the fleet says of one environment now. */
  fleetTruth(environmentId: string): FleetTruth {
    const agents = [...this.service.model.agents()].filter((view) => view.environmentId === environmentId);
    const rollups = new Map<string, RollupStatus | null>(agents.map((view) => [view.key, this.service.model.rollup(environmentId, view.threadId)]));
    // The inbox's needs, snoozes aside: a snoozed need is still one the fleet says the agent has.
    const tally = tallyNeeds(agents);
    const needs = new Map([...tally.needYou, ...tally.snoozed].map((view) => [view.key, needClass(view)!]));
    const deliveries = [...this.deliveries.values()].map((delivery) => this.service.delivery(delivery.commandId) ?? delivery);
    return { agents, rollups, needs, notifications: this.notifications, deliveries, seenCalm: this.seenCalm, wordsSeen: this.wordsSeen };
  }

  /**
   * Compares what `read` finds the server stored with what the fleet says of `environmentId`, once
   * both have settled: the server is read again after every fleet event until they agree, and once
   * more at the deadline. Throws with both sides of every contradiction left. `scoped`: only the
   * threads `read` returns are judged (a scenario's own, while others run on the same server).
   */
  async check(environmentId: string, read: () => Promise<ServerTruth>, step: string, { settleMs = SETTLE_MS, scoped = false } = {}): Promise<void> {
    const deadline = Date.now() + settleMs;
    for (;;) {
      const changed = this.nextEvent(deadline);
      const found = this.compare(environmentId, await read(), scoped);
      if (found.length === 0) {
        changed.cancel();
        this.noteCalm(environmentId);
        return;
      }
      if (Date.now() >= deadline) {
        changed.cancel();
        throw new Error(`truth oracle, ${step}: ${found.length} contradiction(s) between what T3 stored and what the fleet says\n${sideBySide(found)}`);
      }
      await changed.promise;
    }
  }

  private compare(environmentId: string, server: ServerTruth, scoped: boolean): Contradiction[] {
    noteWords(server, this.wordsSeen);
    const phase = this.service.model.environment(environmentId)?.connection.phase;
    if (phase !== "online") return [{ kind: "status", threadId: "(machine)", server: "serving", fleet: `connection ${phase ?? "unknown"}` }];
    const fleet = this.fleetTruth(environmentId);
    if (!scoped) return contradictions(server, fleet);
    const keys = new Set(server.threads.map((thread) => `${environmentId}/${thread.threadId}`));
    return contradictions(server, {
      ...fleet,
      agents: fleet.agents.filter((view) => keys.has(view.key)),
      notifications: fleet.notifications.filter((note) => note.agentKey === null || keys.has(note.agentKey)),
      deliveries: fleet.deliveries.filter((delivery) => keys.has(delivery.agentKey)),
    });
  }

  /** Agents that need nothing now: a need found at a later check was news and should have been notified. */
  private noteCalm(environmentId: string): void {
    for (const view of this.service.model.agents()) {
      if (view.environmentId !== environmentId) continue;
      if (needClass(view) === null) this.seenCalm.add(view.key);
      else this.seenCalm.delete(view.key);
    }
  }

  /** Resolves at the fleet's next event, or at the deadline. */
  private nextEvent(deadline: number): { promise: Promise<void>; cancel: () => void } {
    let cancel = () => {};
    const promise = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.service.off("event", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      this.service.on("event", done);
      cancel = done;
    });
    return { promise, cancel };
  }
}

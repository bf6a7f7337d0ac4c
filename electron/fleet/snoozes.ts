// Snoozing an agent for a while through T3 itself. Where the agent's capabilities say the server
// has T3's thread snooze (its descriptor advertises it), the thread is snoozed in T3 so T3's own UI
// and every other fleet window agree; the server's wake time then comes back in the agent's facts.
// What T3 does not hold — a snooze "until it changes" (T3's is time-based), or one T3 refused or
// cannot take (./server-mirror.ts says why) — T3 Fleet keeps itself: persisted in the registry and
// carried by the agent's view (`fleetSnooze`), so every window and the tray count it alike and it
// survives a reload or a restart. It ends when what the agent needs changes (shared/fleet/snooze.ts).
// Waking (the undo) drops T3 Fleet's record and asks T3 to unsnooze where T3 holds the snooze.
import type { BridgeResults } from "../../shared/bridge/contract";
import type { FleetModel } from "../../shared/fleet/model";
import type { AgentView, FleetSnooze } from "../../shared/fleet/types";
import { needFingerprint } from "../../shared/fleet/views";
import { BridgeError } from "./bridge-error";
import type { Environments } from "./environments";
import type { Registry } from "./registry";
import { mirrorOnServer } from "./server-mirror";

/** Bound for the snooze command: the snooze T3 Fleet keeps meanwhile does not wait on it for long. */
const SNOOZE_TIMEOUT_MS = 5_000;

type SnoozeResult = BridgeResults["agent.snooze"];
type UnsnoozeResult = BridgeResults["agent.unsnooze"];

export class Snoozes {
  /** Wake times T3 took from this fleet, by agent: an undo may come before T3's row says so. */
  private readonly taken = new Map<string, number>();
  /** The snoozes T3 Fleet keeps, by agent: read at once (the registry's copy changes only once saved). */
  private readonly kept: Map<string, FleetSnooze>;

  constructor(
    private readonly model: FleetModel,
    private readonly environments: Environments,
    private readonly registry: Registry,
    private readonly now: () => number = Date.now,
  ) {
    this.kept = new Map(registry.snoozes);
    for (const [key, snooze] of this.kept) model.setSnooze(key, snooze);
  }

  async snooze(key: string, until: string | null): Promise<SnoozeResult> {
    const agent = this.model.agent(key);
    if (!agent) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    const fingerprint = needFingerprint(agent);
    if (until === null) {
      await this.keep(key, { until: null, fingerprint, note: null });
      return { key, onServer: "local", until, note: null };
    }
    const wake = Date.parse(until);
    if (!(wake > this.now())) throw new BridgeError("invalid", "A snooze ends in the future.");
    // Kept at once, so the agent leaves every window's inbox while T3 is asked (it may take seconds).
    const asked: FleetSnooze = { until: wake, fingerprint, note: null };
    await this.keep(key, asked);
    const outcome = await mirrorOnServer(this.model, this.environments, {
      key,
      supported: agent.capabilities.snooze,
      command: ({ commandId, threadId }) => ({ type: "snooze", commandId, threadId, until }),
      timeoutMs: SNOOZE_TIMEOUT_MS,
    });
    if (outcome.onServer) {
      // Only for an agent still here: one that left while T3 was asked cannot be woken (`removed`).
      if (this.model.agent(key)) this.taken.set(key, wake);
      // T3 holds it now: T3 Fleet's record goes once T3's row shows it (agentChanged), so nothing flickers.
      if (this.heldByT3(this.model.agent(key), key)) await this.forget(key, asked);
      return { key, onServer: "snoozed", until, note: null };
    }
    // Only the snooze this call made: the user may have snoozed it again, or woken it, meanwhile.
    if (outcome.reason && this.kept.get(key) === asked) await this.keep(key, { ...asked, note: outcome.reason });
    return { key, onServer: "local", until, note: outcome.reason };
  }

  async unsnooze(key: string): Promise<UnsnoozeResult> {
    const agent = this.model.agent(key);
    if (!agent) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    await this.forget(key);
    // Only a snooze T3 still holds is T3's to end (a passed wake time already stopped counting): one
    // its row shows, or one T3 took from this fleet whose row has not come back yet.
    const heldByT3 = this.heldByT3(agent, key) || (this.taken.get(key) ?? 0) > this.now();
    this.taken.delete(key);
    if (!heldByT3) return { key, onServer: "local", note: null };
    const outcome = await mirrorOnServer(this.model, this.environments, {
      key,
      supported: agent.capabilities.snooze,
      command: ({ commandId, threadId }) => ({ type: "unsnooze", commandId, threadId }),
      timeoutMs: SNOOZE_TIMEOUT_MS,
    });
    return outcome.onServer ? { key, onServer: "unsnoozed", note: null } : { key, onServer: "local", note: outcome.reason };
  }

  /**
   * An agent's view changed: T3 Fleet's snooze ends when what the agent needs changed, when its time
   * passed, or when T3 shows the timed snooze it took (T3's is then the one that holds).
   */
  agentChanged(agent: AgentView): void {
    // A wake time that passed is T3's no longer (unsnooze asks T3 only before it): not kept for the agent's life.
    if ((this.taken.get(agent.key) ?? Infinity) <= this.now()) this.taken.delete(agent.key);
    const kept = this.kept.get(agent.key);
    if (!kept || agent.status === "unknown") return; // not confirmed either way while its machine is away
    const changed = kept.fingerprint !== needFingerprint(agent);
    const passed = kept.until !== null && kept.until <= this.now();
    const takenByT3 = kept.until !== null && this.heldByT3(agent, agent.key);
    if (changed || passed || takenByT3) void this.forget(agent.key, kept).catch(() => {});
  }

  removed(key: string): void {
    // A gone agent cannot be woken (unsnooze refuses it), so the wake time T3 took goes too (issue 43).
    this.taken.delete(key);
    if (this.kept.has(key)) void this.forget(key).catch(() => {});
  }

  /** Agents with a wake time T3 took, kept: for the heap bound's tests (issue 43). */
  get wakeTimesKept(): number {
    return this.taken.size;
  }

  private heldByT3(agent: AgentView | undefined, key: string): boolean {
    const until = agent?.snoozedUntil ? Date.parse(agent.snoozedUntil) : NaN;
    return until > this.now() && until >= (this.kept.get(key)?.until ?? 0);
  }

  private async keep(key: string, snooze: FleetSnooze): Promise<void> {
    this.kept.set(key, snooze);
    this.model.setSnooze(key, snooze);
    await this.registry.setSnooze(key, snooze);
  }

  /** Drops T3 Fleet's record (only `expected`, when given: a newer snooze stays). */
  private async forget(key: string, expected?: FleetSnooze): Promise<void> {
    const kept = this.kept.get(key);
    if (!kept || (expected && kept !== expected)) return;
    this.kept.delete(key);
    this.model.setSnooze(key, null);
    await this.registry.setSnooze(key, null);
  }
}

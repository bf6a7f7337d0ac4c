// Exactly-once delivery (docs/architecture.md, "The fleet model and its rules"): one client commandId per send, states sending → accepted →
// delivered → answered, or refused, or uncertain; uncertain sends are reconciled from the thread by
// messageId and only ever re-dispatched with the same commandId, which T3 deduplicates. Commands
// are neutral (shared/fleet/facts.ts); the environment's protocol adapter carries them out.
// Messages and held messages are journaled (delivery-journal.ts): each on disk before it is
// dispatched, so after a restart each one T3 had not confirmed is checked against its thread.
import { randomUUID } from "node:crypto";
import { type Delivery, type DeliveryKind, type Intent, type IntentKind, connectingReason, isSettled } from "../../shared/fleet/delivery";
import type { RunningMessageMode, ThreadDetail } from "../../shared/fleet/facts";
import { type FleetModel, splitKey } from "../../shared/fleet/model";
import { unanswerableWords } from "../../shared/fleet/status";
import { agentKey } from "../../shared/fleet/types";
import { T3Error } from "../../shared/t3/errors";
import { BridgeError } from "./bridge-error";
import { connectingSettled, isConnecting } from "./connecting-wait";
import type { ConnectionSupervisor } from "./supervisor";
import type { ThreadFollowers } from "./threads";
import { RESTART_BEFORE_SENDING, RESTART_CHECKING, RESTART_NOT_FOUND, RESTART_NOT_FOUND_AFTER_RESEND, UNEXPLAINED_REFUSAL } from "./delivery-reasons";
import { closedPatch, commandStep, messageStep } from "./delivery-outcomes";
import { type Departure, Departures, departureWords, goneWords, saysThreadGone, wordsKind } from "./departures";
import { type DeliveryJournal, type JournalEntry, awaitsConfirmation, boundedEntries } from "./delivery-journal";
import type { AgentCommand } from "./t3/adapter";

/** A dispatch that has not answered in this long is uncertain: the connection may be gone. */
export const DISPATCH_TIMEOUT_MS = 15_000;
/** Settled sends kept for the UI's history; unsettled ones are never dropped. */
export const SETTLED_HISTORY = 500;
/**
 * A send to an environment still connecting (T3 Fleet just started, or a wake re-check) waits this
 * long for its first synchronized snapshot before its intent is judged: a restart's reconnect fits.
 */
export const CONNECTING_WAIT_MS = 10_000;
interface TrackedDelivery {
  delivery: Delivery;
  command: AgentCommand;
  environmentId: string;
  threadId: string;
  /** The active run when the message was sent. */
  turnBefore: string | null;
  /**
   * Whether T3 is expected to fold the message into that turn. Only then does the turn ending with
   * no new one count as steered; otherwise the fleet waits to see the new turn.
   */
  expectSteer: boolean;
  acceptedSequence: number | null;
  /**
   * Restored from the journal after a restart, T3 not having confirmed it: "checking" until the
   * thread was read in sync, then "offered" ("Send again") if the thread does not show it. Such a
   * message is never dispatched again on its own.
   */
  restored?: "checking" | "offered";
  /**
   * Nothing more will happen to this message, though it was not answered: its thread left its
   * environment (archived or deleted), or its turn ended with no answer. Never followed or sent
   * again, and dropped with the settled ones from the history.
   */
  closed?: true;
  /** Refused because its agent left its machine: the reason says how once the fleet knows (departures.ts). */
  gone?: true;
}

export interface DeliveryDeps {
  model: FleetModel;
  intent(key: string, preferred?: RunningMessageMode): Intent;
  runtime(environmentId: string): { followers: ThreadFollowers; supervisor: ConnectionSupervisor } | undefined;
  publish(delivery: Delivery): void;
  now(): number;
  /** Where messages are recorded before they are dispatched (none: not recorded). */
  journal?: Pick<DeliveryJournal, "save">;
  /** How long a send waits for a connecting environment (CONNECTING_WAIT_MS; tests shorten it). */
  connectingWaitMs?: number;
}

export class Deliveries {
  private readonly deliveries = new Map<string, TrackedDelivery>();
  /** Messages held back by the user (state "held"), by the commandId they will be sent with. */
  private readonly held = new Map<string, Delivery>();
  /** Messages waiting for their environment to connect before their intent is judged: journaled, not yet dispatched. */
  private readonly waiting = new Map<string, Delivery>();

  /** Agents that left their machines, to refuse a send to one in the fleet's words. */
  private readonly departures: Departures;

  constructor(private readonly deps: DeliveryDeps) {
    this.departures = new Departures(deps.model, deps.now, (key) => this.departureLearned(key));
  }

  /**
   * Takes back what the journal kept from before a restart: held messages stay held; a message the
   * server had not confirmed is uncertain until its thread is checked (`followRestored`).
   */
  restore(entries: JournalEntry[]): void {
    for (const entry of entries) {
      const delivery: Delivery = { ...entry.delivery };
      if (delivery.state === "held") {
        this.held.set(delivery.commandId, delivery);
        continue;
      }
      if (!entry.command && delivery.state === "sending") {
        // It waited for its machine and never left (a dispatch journals its command first).
        this.held.set(delivery.commandId, { ...delivery, state: "held", reason: RESTART_BEFORE_SENDING, updatedAt: this.iso() });
        continue;
      }
      if (!entry.command || this.deliveries.has(delivery.commandId)) continue;
      const { environmentId, threadId, turnBefore, expectSteer } = entry;
      const tracked: TrackedDelivery = { delivery, command: entry.command, environmentId, threadId, turnBefore, expectSteer, acceptedSequence: null };
      if (awaitsConfirmation(delivery)) {
        tracked.restored = "checking";
        tracked.delivery = { ...delivery, state: "uncertain", reason: RESTART_CHECKING };
      }
      this.deliveries.set(delivery.commandId, tracked);
    }
  }

  /** Follows the threads of restored messages that are not settled (their environments' runtimes exist now). */
  followRestored(): void {
    for (const tracked of this.deliveries.values()) {
      if (isSettled(tracked.delivery)) continue;
      this.deps.runtime(tracked.environmentId)?.followers.follow(tracked.threadId, `delivery:${tracked.delivery.commandId}`);
    }
  }

  /** What the journal keeps: messages and held messages, bounded (delivery-journal.ts). */
  private readonly journalEntries = (): JournalEntry[] => {
    const entries: JournalEntry[] = [];
    for (const { delivery, command, environmentId, threadId, turnBefore, expectSteer, closed } of this.deliveries.values()) {
      if (delivery.kind !== "message" || command.type !== "send" || closed) continue;
      entries.push({ delivery: { ...delivery, kind: "message" }, environmentId, threadId, command, turnBefore, expectSteer });
    }
    for (const unsent of [...this.held.values(), ...this.waiting.values()]) {
      const [environmentId, threadId] = splitKey(unsent.agentKey);
      entries.push({ delivery: { ...unsent, kind: "message" }, environmentId, threadId, command: null, turnBefore: null, expectSteer: false });
    }
    return boundedEntries(entries, this.deps.now());
  };

  /** Records the messages now; resolves once on disk (rejects with the reason when the disk refused). */
  private record(): Promise<void> {
    return this.deps.journal?.save(this.journalEntries) ?? Promise.resolve();
  }

  /**
   * Records a state change in the background. A failed write leaves the journal one state behind,
   * which is safe: after a restart every message it shows unconfirmed is checked against T3.
   */
  private recordLater(): void {
    void this.record().catch(() => undefined);
  }

  /** Writes what is left to write (the service is stopping). */
  flush(): Promise<void> {
    return this.record().catch(() => undefined);
  }

  /** With those waiting for their machine: a page that lost a send's answer learns from a snapshot that the service has it. */
  all(): Delivery[] {
    return [...[...this.deliveries.values()].map((tracked) => tracked.delivery), ...this.held.values(), ...this.waiting.values()];
  }

  /** A followed thread changed: move its deliveries forward. */
  threadChanged(environmentId: string, threadId: string, detail: ThreadDetail): void {
    for (const tracked of this.deliveries.values()) {
      if (tracked.environmentId === environmentId && tracked.threadId === threadId) this.observe(tracked, detail);
    }
  }

  /**
   * The agent left its environment (archived or deleted, or its machine unpaired): its open sends
   * can no longer be checked, so they keep what was seen, say why it ends there, and are no longer followed.
   */
  agentRemoved(environmentId: string, threadId: string): void {
    for (const tracked of this.deliveries.values()) {
      if (tracked.environmentId !== environmentId || tracked.threadId !== threadId || tracked.closed || isSettled(tracked.delivery)) continue;
      tracked.closed = true;
      this.deps.runtime(environmentId)?.followers.unfollow(threadId, `delivery:${tracked.delivery.commandId}`);
      // A dispatch in flight closes itself when T3 answers it.
      if (tracked.delivery.state !== "sending") this.update(tracked, closedPatch(tracked.delivery.state));
    }
  }

  /**
   * The environment is online and its rows confirmed: a message restored after a restart to an agent
   * it no longer has (its thread archived or deleted while T3 Fleet was stopped) ends as above.
   */
  environmentConfirmed(environmentId: string): void {
    const gone = new Set<string>();
    for (const tracked of this.deliveries.values()) {
      if (tracked.environmentId !== environmentId || !tracked.restored || tracked.closed || isSettled(tracked.delivery)) continue;
      if (!this.deps.model.agent(agentKey(environmentId, tracked.threadId))) gone.add(tracked.threadId);
    }
    for (const threadId of gone) this.agentRemoved(environmentId, threadId);
  }

  private iso(): string {
    return new Date(this.deps.now()).toISOString();
  }

  /**
   * `commandId`: the page's own id for the message, reused when it resends after its answer was lost
   * (renderer/src/state/lost-sends.ts), or the one a held message was given (a release sends with it).
   * An id this service tracks, holds, waits with or restored from its journal is the same send: its
   * delivery as it stands is the answer, and nothing is dispatched again.
   */
  async send(key: string, text: string, expected: IntentKind, commandId: string = randomUUID(), heldFrom?: string): Promise<Delivery> {
    const same = this.deliveries.get(commandId)?.delivery ?? this.held.get(commandId) ?? this.waiting.get(commandId);
    if (same && (same.agentKey !== key || same.text !== text))
      throw new BridgeError("invalid", "This command id belongs to another message; nothing was sent.");
    if (same) return same;
    const [environmentId, threadId] = splitKey(key);
    // Judged on confirmed facts: right after a start the environment is connecting and its agents
    // unknown. Meanwhile the message is on disk, so a restart in the wait does not lose it.
    if (isConnecting(this.deps.runtime(environmentId)?.supervisor)) {
      this.waiting.set(commandId, this.newDelivery(commandId, key, "message", { text, ...(heldFrom && { heldFrom }) }));
      await this.record().catch(() => undefined);
      // It stays journaled as waiting until it is dispatched (its command journaled) or refused.
      await this.connectingSettled(environmentId);
    }
    const preferred = expected === "steer" || expected === "queue" ? expected : undefined;
    const intent = this.deps.intent(key, preferred);
    const facts = this.deps.model.facts(environmentId, threadId);
    // Sending to a start that looks stuck is allowed (shared/fleet/delivery.ts), with a warning the
    // user saw before sending; the delivery keeps it.
    const warning = this.deps.model.agent(key)?.status === "stuck" && intent.kind === "new-turn" ? (intent.note ?? undefined) : undefined;
    const messageId = `msg-${randomUUID()}`;
    const base = this.newDelivery(commandId, key, "message", {
      text,
      messageId,
      intent: intent.kind,
      ...(warning && { warning }),
      ...(heldFrom && { heldFrom }),
    });
    const left = this.departures.get(key);
    if (left) return this.refusedGone(base, left);
    if (intent.kind === "refused") return this.finishRefused(base, intent.reason);
    if (intent.kind !== expected) {
      // Never guess: the state changed under the user.
      const now = intent.kind === "steer" ? "steer the running turn" : intent.kind === "queue" ? "start a new turn after the running one" : "start a new turn";
      return this.finishRefused(base, `The agent changed state: a message would now ${now}. Check and send again.`);
    }
    if (!facts) return this.finishRefused(base, "This agent is no longer on its environment.");
    const runId = intent.kind === "new-turn" ? null : intent.runId;
    const command: AgentCommand = { type: "send", commandId, threadId, messageId, text, mode: intent.kind === "new-turn" ? "start" : intent.kind, runId };
    const expectSteer = intent.kind === "steer";
    return this.dispatch({ delivery: base, command, environmentId, threadId, turnBefore: runId, expectSteer, acceptedSequence: null });
  }

  /** `withdraws`: for `cancel-queued`, the queued message it withdraws (its receipt names it). */
  async command(
    key: string,
    kind: DeliveryKind,
    build: (threadId: string, commandId: string) => AgentCommand,
    requestId?: string,
    withdraws?: { messageId: string; text: string },
  ): Promise<Delivery> {
    const [environmentId, threadId] = splitKey(key);
    await this.connectingSettled(environmentId);
    const commandId = randomUUID();
    const base = this.newDelivery(commandId, key, kind, {
      requestId: requestId ?? null,
      ...(withdraws && { messageId: withdraws.messageId, text: withdraws.text }),
    });
    const env = this.deps.model.environment(environmentId);
    const agent = this.deps.model.agent(key);
    const left = this.departures.get(key);
    if (left) return this.refusedGone(base, left);
    const blocked = !env
      ? "This environment is no longer paired."
      : env.connection.phase === "connecting"
        ? connectingReason(env.label)
        : env.connection.phase !== "online"
          ? `${env.label} is offline.`
          : env.readOnly
            ? `The pairing with ${env.label} is read-only.`
            : !agent
              ? "This agent is no longer on its environment."
              : null;
    if (blocked) return this.finishRefused(base, blocked);
    // T3 still lists the request but can no longer pass an answer on: refused in T3's words, never sent.
    const request = this.deps.model.facts(environmentId, threadId)?.blockedBy;
    if ((kind === "approval" || kind === "input") && request?.unanswerable !== undefined) return this.finishRefused(base, unanswerableWords(request));
    return this.dispatch({
      delivery: base,
      command: build(threadId, commandId),
      environmentId,
      threadId,
      turnBefore: agent?.activeRunId ?? null,
      expectSteer: false,
      acceptedSequence: null,
    });
  }

  private newDelivery(commandId: string, agentKeyValue: string, kind: DeliveryKind, extra: Partial<Delivery>): Delivery {
    const now = this.iso();
    return {
      commandId,
      agentKey: agentKeyValue,
      kind,
      state: "sending",
      text: null,
      messageId: null,
      requestId: null,
      intent: null,
      observed: null,
      reason: null,
      createdAt: now,
      updatedAt: now,
      ...extra,
    };
  }

  private connectingSettled(environmentId: string): Promise<void> {
    return connectingSettled(this.deps.runtime(environmentId)?.supervisor, this.deps.connectingWaitMs ?? CONNECTING_WAIT_MS);
  }

  private finishRefused(delivery: Delivery, reason: string): Delivery {
    if (this.waiting.delete(delivery.commandId)) this.recordLater();
    const refused = { ...delivery, state: "refused" as const, reason: reason.trim() || UNEXPLAINED_REFUSAL, updatedAt: this.iso() };
    this.deps.publish(refused);
    return refused;
  }

  /** Dispatches (or re-dispatches, with the same commandId) a tracked command. */
  private async dispatch(tracked: TrackedDelivery): Promise<Delivery> {
    this.waiting.delete(tracked.delivery.commandId);
    this.deliveries.set(tracked.delivery.commandId, tracked);
    const runtime = this.deps.runtime(tracked.environmentId);
    runtime?.followers.follow(tracked.threadId, `delivery:${tracked.delivery.commandId}`);
    this.update(tracked, { state: "sending", reason: null }, false);
    if (tracked.delivery.kind === "message") {
      // Write-ahead: on disk before T3 can have it, so a restart (even a kill) cannot lose it.
      try {
        await this.record();
      } catch (error) {
        // Not tracked, like every send refused before it left (a held message being released stays held).
        this.deliveries.delete(tracked.delivery.commandId);
        runtime?.followers.unfollow(tracked.threadId, `delivery:${tracked.delivery.commandId}`);
        const why = error instanceof Error ? error.message : String(error);
        return this.finishRefused(
          tracked.delivery,
          `${why} It was not sent: T3 Fleet records each message before sending it, so that a restart cannot lose it.`,
        );
      }
    }
    const connection = this.deps.runtime(tracked.environmentId)?.supervisor.activeConnection;
    if (!connection) {
      this.update(tracked, { state: "uncertain", reason: "The environment went offline before the message was sent; it will be checked on reconnect." });
      return tracked.delivery;
    }
    try {
      const result = await connection.execute(tracked.command, DISPATCH_TIMEOUT_MS);
      tracked.acceptedSequence = result.sequence;
      if (tracked.closed) {
        this.update(tracked, closedPatch("accepted"));
        return tracked.delivery;
      }
      if (tracked.delivery.state === "sending" || tracked.delivery.state === "uncertain") this.update(tracked, { state: "accepted" });
      // T3 resolves an answered request at once; so does the fleet, before the provider confirms.
      if (tracked.delivery.requestId && (tracked.delivery.kind === "approval" || tracked.delivery.kind === "input")) {
        runtime?.followers.markAnswered(tracked.threadId, tracked.delivery.requestId);
      }
      const followed = runtime?.followers.get(tracked.threadId);
      if (followed) this.observe(tracked, followed.detail);
    } catch (error) {
      // The thread already shows the message (T3 may stream it before it answers the dispatch): a
      // late or lost answer changes nothing about what was seen.
      if (tracked.delivery.state === "delivered" || tracked.delivery.state === "answered") return tracked.delivery;
      const failure = T3Error.from(error);
      if (tracked.closed && (failure.kind === "timeout" || failure.kind === "network" || failure.kind === "interrupted")) {
        this.update(tracked, closedPatch("uncertain"));
      } else if (failure.kind === "timeout") {
        this.update(tracked, {
          state: "uncertain",
          reason: `The server did not answer within ${DISPATCH_TIMEOUT_MS / 1000} s. Checking again; it will never be sent twice.`,
        });
      } else if (failure.kind === "network" || failure.kind === "interrupted") {
        this.update(tracked, {
          state: "uncertain",
          reason: "The connection dropped before the server answered. Checking again on reconnect; it will never be sent twice.",
        });
      } else {
        this.settle(tracked, this.refusal(tracked, failure.message.trim()));
      }
    }
    return tracked.delivery;
  }

  /** A refusal in T3's words, unless they say the agent is gone: then in the fleet's, T3's kept as details. */
  private refusal(tracked: TrackedDelivery, words: string): Partial<Delivery> {
    const kind = wordsKind(tracked.delivery);
    const left = this.departures.get(tracked.delivery.agentKey);
    if (!left && !saysThreadGone(words, tracked.threadId)) return { state: "refused", reason: words || UNEXPLAINED_REFUSAL };
    tracked.gone = true;
    const machine = this.deps.model.environment(tracked.environmentId)?.label ?? tracked.environmentId;
    return { state: "refused", reason: left ? departureWords(left, kind) : goneWords(machine, kind), serverWords: words };
  }

  /** The fleet learned how an agent left: a refusal that could only say it was gone now says how, where and when. */
  private departureLearned(key: string): void {
    const left = this.departures.get(key);
    if (!left) return;
    for (const tracked of this.deliveries.values())
      if (tracked.delivery.agentKey === key && tracked.gone) this.update(tracked, { reason: departureWords(left, wordsKind(tracked.delivery)) });
    for (const refused of this.departures.rewordable(key))
      this.deps.publish({ ...refused, reason: departureWords(left, wordsKind(refused)), updatedAt: this.iso() });
  }

  /** Refused before it left, its agent gone: in the fleet's words, said better if T3 has not yet said how. */
  private refusedGone(base: Delivery, left: Departure): Delivery {
    const refused = this.finishRefused(base, departureWords(left, wordsKind(base)));
    this.departures.awaitHow(refused);
    return refused;
  }

  /** Reads the thread to move a delivery forward: delivered, answered, or reconciled after a drop. */
  private observe(tracked: TrackedDelivery, detail: ThreadDetail): void {
    const { delivery } = tracked;
    if (delivery.state === "refused" || delivery.state === "answered" || tracked.closed) return;
    if (!detail.loaded) return;
    const synced = detail.synced;
    const resendable = () => delivery.state === "uncertain" && synced && this.deps.runtime(tracked.environmentId)?.supervisor.activeConnection !== undefined;
    if (delivery.kind === "message") {
      const messages = detail.items.flatMap((item) => (item.type === "message" ? [item] : []));
      const index = messages.findIndex((message) => message.id === delivery.messageId);
      if (index === -1) {
        // Restored after a restart: the user decides whether to send it again (once), never the fleet.
        if (tracked.restored) {
          if (tracked.restored === "checking" && synced && this.deps.runtime(tracked.environmentId)?.supervisor.activeConnection) this.offerSendAgain(tracked);
          return;
        }
        // Reconnected, the thread is in sync and our message is not in it: it never arrived. Resend, same commandId.
        if (resendable()) void this.dispatch(tracked);
        return;
      }
      tracked.restored = undefined;
      const step = messageStep(delivery, tracked, messages, index, detail.facts);
      if (step?.settle && step.patch.state !== "answered") tracked.closed = true;
      if (step?.settle) this.settle(tracked, step.patch);
      else if (step) this.update(tracked, step.patch);
      return;
    }
    if (tracked.acceptedSequence === null || detail.appliedSequence < tracked.acceptedSequence) {
      if (resendable()) void this.dispatch(tracked);
      return;
    }
    const decision = tracked.command.type === "respond-approval" ? tracked.command.decision : undefined;
    const step = commandStep(delivery, tracked.turnBefore, detail.facts, decision);
    if (!step) return;
    // Nothing more will tell whether an answer was taken: no longer followed, never sent again.
    if (step.state === "uncertain") tracked.closed = true;
    this.settle(tracked, step);
  }

  /** A restored message its thread does not show: "Send again" is offered, unless it was already used once. */
  private offerSendAgain(tracked: TrackedDelivery): void {
    tracked.restored = "offered";
    if (tracked.delivery.sendAgain === false) this.update(tracked, { state: "uncertain", reason: RESTART_NOT_FOUND_AFTER_RESEND });
    else this.update(tracked, { state: "uncertain", reason: RESTART_NOT_FOUND, sendAgain: true });
  }

  /**
   * "Check again" on an uncertain send: reads its thread and, if the message is still not there,
   * dispatches it again with the same commandId. A message restored after a restart is sent again
   * only once the thread was checked and only while "Send again" is offered (once).
   */
  async recheck(commandId: string): Promise<Delivery> {
    const tracked = this.deliveries.get(commandId);
    if (!tracked) throw new BridgeError("not-found", "This send is no longer tracked.");
    if (tracked.delivery.state !== "uncertain" || tracked.closed) return tracked.delivery;
    const runtime = this.deps.runtime(tracked.environmentId);
    if (!runtime?.supervisor.activeConnection) return tracked.delivery;
    const followed = runtime.followers.get(tracked.threadId);
    if (followed?.detail.synced) this.observe(tracked, followed.detail);
    if (tracked.restored) {
      if (tracked.restored !== "offered" || tracked.delivery.sendAgain !== true || tracked.delivery.state !== "uncertain") return tracked.delivery;
      // Used: a later restart that again finds nothing offers it no more.
      tracked.restored = undefined;
      this.update(tracked, { sendAgain: false }, false);
      return this.dispatch(tracked);
    }
    // Still unseen: resending with the same commandId is safe, T3 deduplicates it.
    if (tracked.delivery.state === "uncertain") return this.dispatch(tracked);
    return tracked.delivery;
  }

  private update(tracked: TrackedDelivery, patch: Partial<Delivery>, recordLater = true): void {
    // Once a send is seen on the server, why it was uncertain no longer applies.
    const reconciled = patch.state === "accepted" || patch.state === "delivered" || patch.state === "answered";
    const next: Delivery = { ...tracked.delivery, ...(reconciled && { reason: null }), ...patch, updatedAt: this.iso() };
    if (reconciled) delete next.sendAgain;
    tracked.delivery = next;
    this.deps.publish(next);
    if (recordLater && next.kind === "message") this.recordLater();
  }

  private settle(tracked: TrackedDelivery, patch: Partial<Delivery>): void {
    this.forgetOldSettled();
    this.update(tracked, patch);
    this.deps.runtime(tracked.environmentId)?.followers.unfollow(tracked.threadId, `delivery:${tracked.delivery.commandId}`);
  }

  /** Withdraws a message that waits in the queue: the run it queued is cancelled before it starts. */
  cancelQueued(commandId: string): Promise<Delivery> {
    const queued = this.deliveries.get(commandId)?.delivery;
    if (!queued) throw new BridgeError("not-found", "This send is no longer tracked.");
    const runId = queued.observed?.outcome === "queued" ? queued.observed.turnId : null;
    if (!runId) throw new BridgeError("invalid", "This message is no longer waiting in the queue.");
    const withdraws = queued.messageId ? { messageId: queued.messageId, text: queued.text ?? "" } : undefined;
    return this.command(
      queued.agentKey,
      "cancel-queued",
      (threadId, cancelId) => ({ type: "cancel-queued", commandId: cancelId, threadId, runId }),
      undefined,
      withdraws,
    );
  }

  /** Keeps a message in the fleet, unsent, until the user releases or discards it. `heldFrom`: the queued message's id. */
  hold(key: string, text: string, reason: string, heldFrom?: string): Delivery {
    const held = this.newDelivery(randomUUID(), key, "message", { state: "held", text, reason, ...(heldFrom && { heldFrom }) });
    this.held.set(held.commandId, held);
    this.deps.publish(held);
    this.recordLater();
    return held;
  }

  /**
   * Sends a held message now, as a message typed now would go (steer, queue or a new turn), with
   * the commandId it was held with: a second release finds nothing to send. If a message cannot
   * be sent now (the agent waits for an answer, the machine is offline), it stays held, saying why.
   */
  async release(commandId: string): Promise<Delivery> {
    const waiting = this.held.get(commandId);
    if (waiting) await this.connectingSettled(splitKey(waiting.agentKey)[0]);
    // Looked up after the wait: a second release meanwhile finds it gone.
    const held = this.held.get(commandId);
    if (!held) throw new BridgeError("not-found", "This message is no longer held (it was sent or discarded).");
    const intent = this.deps.intent(held.agentKey);
    if (intent.kind === "refused") {
      const kept = { ...held, reason: `Not sent yet: ${intent.reason}`, updatedAt: this.iso() };
      this.held.set(commandId, kept);
      this.deps.publish(kept);
      this.recordLater();
      return kept;
    }
    this.held.delete(commandId);
    const sent = await this.send(held.agentKey, held.text ?? "", intent.kind, commandId, held.heldFrom);
    if (sent.state !== "refused" || this.deliveries.has(commandId)) return sent;
    // Refused before it was dispatched (the agent changed, the disk refused the record): still held.
    const kept = { ...held, reason: `Not sent yet: ${sent.reason ?? "it could not be sent."}`, updatedAt: this.iso() };
    this.held.set(commandId, kept);
    this.deps.publish(kept);
    this.recordLater();
    return kept;
  }

  /** Drops a held message for good: it is never sent. */
  discard(commandId: string): Delivery {
    const held = this.held.get(commandId);
    if (!held) throw new BridgeError("not-found", "This message is no longer held (it was sent or discarded).");
    this.held.delete(commandId);
    const discarded = { ...held, state: "discarded" as const, reason: null, updatedAt: this.iso() };
    this.deps.publish(discarded);
    this.recordLater();
    return discarded;
  }

  /** What the agent's followed thread stream shows now (undefined when it is not followed). */
  threadDetail(key: string): ThreadDetail | undefined {
    const [environmentId, threadId] = splitKey(key);
    return this.deps.runtime(environmentId)?.followers.get(threadId)?.detail;
  }

  get(commandId: string): Delivery | undefined {
    return this.deliveries.get(commandId)?.delivery ?? this.held.get(commandId);
  }

  /** Keeps the history bounded: the oldest settled sends go first (Map order is insertion order). */
  private forgetOldSettled(): void {
    let excess = this.deliveries.size - SETTLED_HISTORY;
    for (const [commandId, tracked] of this.deliveries) {
      if (excess <= 0) return;
      if (isSettled(tracked.delivery) || tracked.closed) {
        this.deliveries.delete(commandId);
        excess--;
      }
    }
  }
}

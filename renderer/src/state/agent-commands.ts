// What the user does to an agent: messages, answers, snoozes, interrupts, stops, and the held and
// queued messages. Requests that the service answers with a delivery keep its receipt (runForReceipt);
// those handled from the inbox move it on to its next item.
import type { BridgeParams } from "../../../shared/bridge/contract";
import type { ApprovalDecision, QuestionAnswers } from "../../../shared/fleet/facts";
import { needFingerprint } from "../../../shared/fleet/views";
import { advanceInbox, inboxKeys } from "./inbox";
import { errorMessage, requireBridge, run, runForReceipt } from "./requests";
import { useFleet } from "./store";

export const agentCommands = {
  /** Sends a message with the intent the composer showed (steer, queue or a new turn); true when the service took it (its delivery then reports what happened). */
  async send(key: string, text: string, expectedIntent: BridgeParams<"agent.send">["expectedIntent"]): Promise<boolean> {
    const delivery = await runForReceipt(`composer:${key}`, () => requireBridge().request("agent.send", { key, text, expectedIntent }));
    return delivery !== undefined;
  },

  async respondApproval(key: string, requestId: string, decision: ApprovalDecision): Promise<void> {
    const before = inboxKeys();
    const delivery = await runForReceipt(`request:${requestId}`, () => requireBridge().request("agent.respondApproval", { key, requestId, decision }));
    if (delivery) advanceInbox(key, before);
  },

  async respondInput(key: string, requestId: string, answers: QuestionAnswers): Promise<void> {
    const before = inboxKeys();
    const delivery = await runForReceipt(`request:${requestId}`, () => requireBridge().request("agent.respondInput", { key, requestId, answers }));
    if (delivery) advanceInbox(key, before);
  },

  /**
   * Puts an agent aside from the inbox for `ms`, or (null) until what it needs changes; the next item
   * opens. The window keeps it at once; a snooze for a while also goes to T3 where the server has
   * snooze (T3's wake time then comes back in the agent's facts), and T3's refusal is kept to be said.
   */
  snooze(key: string, ms: number | null): void {
    const agent = useFleet.getState().agents.get(key);
    if (!agent) return;
    const before = inboxKeys();
    const snooze = { until: ms === null ? null : Date.now() + ms, fingerprint: needFingerprint(agent) };
    useFleet.getState().snooze(key, snooze);
    advanceInbox(key, before);
    if (snooze.until === null) return;
    const until = new Date(snooze.until).toISOString();
    void requireBridge()
      .request("agent.snooze", { key, until })
      .then(
        (result) => result.note,
        (error: unknown) => `T3 Fleet could not ask T3: ${errorMessage(error)}`,
      )
      .then((note) => {
        // Only the snooze this call made: the user may have snoozed it again meanwhile.
        if (note && useFleet.getState().snoozed.get(key) === snooze) useFleet.getState().snooze(key, { ...snooze, note });
      });
  },

  /** `holdQueued`: keep the messages T3 queued behind the turn from starting (held in the fleet). */
  async interrupt(key: string, holdQueued = false): Promise<void> {
    await runForReceipt(`agent:${key}`, () => requireBridge().request("agent.interrupt", { key, ...(holdQueued && { holdQueued }) }));
  },

  /** Sends a held message now (once). */
  async releaseHeld(commandId: string): Promise<void> {
    await runForReceipt(`delivery:${commandId}`, () => requireBridge().request("delivery.release", { commandId }));
  },

  async discardHeld(commandId: string): Promise<void> {
    await runForReceipt(`delivery:${commandId}`, () => requireBridge().request("delivery.discard", { commandId }));
  },

  async stop(key: string): Promise<void> {
    await runForReceipt(`agent:${key}`, () => requireBridge().request("agent.stop", { key }));
  },

  /** Removes a failure or stall from "need you" until it changes (settled in T3 too where the server can). */
  async acknowledge(key: string): Promise<void> {
    const before = inboxKeys();
    const done = await run(`agent:${key}`, () => requireBridge().request("agent.acknowledge", { key }));
    if (done) advanceInbox(key, before);
  },

  async recheck(commandId: string): Promise<void> {
    await runForReceipt(`delivery:${commandId}`, () => requireBridge().request("delivery.recheck", { commandId }));
  },

  /** Withdraws a message still queued behind a running turn; the cancel is tracked like any send. */
  async cancelQueued(commandId: string): Promise<void> {
    await runForReceipt(`delivery:${commandId}`, () => requireBridge().request("delivery.cancelQueued", { commandId }));
  },
};

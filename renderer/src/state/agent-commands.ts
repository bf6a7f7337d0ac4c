// What the user does to an agent: messages, answers, snoozes, interrupts, stops, and the held and
// queued messages. Requests that the service answers with a delivery keep its receipt (runForReceipt);
// those handled from the inbox move it on to its next item. Each triage action leaves a brief
// confirmation naming the agent and machine, with Undo where T3 allows it (issue 25 point 2); a
// decision that stops work and stopping the session are asked once more first (nothing sent to T3
// can be taken back).
import type { BridgeParams } from "../../../shared/bridge/contract";
import type { ApprovalDecision, QuestionAnswers } from "../../../shared/fleet/facts";
import { decidedAbout, destructiveDecision, type HandledAction, handledWords } from "../../../shared/fleet/handled";
import { needFingerprint } from "../../../shared/fleet/views";
import { focusWhenStill } from "./focus";
import { clockTime } from "./format";
import { advanceInbox, inboxKeys } from "./inbox";
import { newCommandId } from "./lost-sends";
import { navigation } from "./navigation";
import { requireBridge, run, runForReceipt } from "./requests";
import type { Undo } from "./slices/actions";
import { useFleet } from "./store";

/** The agent and its machine as the window names them now. */
function named(key: string): { agent: string; machine: string } {
  const state = useFleet.getState();
  const agent = state.agents.get(key);
  const environmentId = agent?.environmentId ?? key.slice(0, key.indexOf("/"));
  return { agent: agent?.title || agent?.threadId || key, machine: state.environments.get(environmentId)?.label ?? environmentId };
}

/** Shows the brief confirmation of what was done (`names`: taken before the action changed anything). */
function confirmDone(names: { agent: string; machine: string }, action: HandledAction, undo: Undo | null, note?: string | null): void {
  const words = handledWords({ ...names, action }, clockTime);
  useFleet.getState().confirmDone(note ? `${words} (${note})` : words, undo);
}

export const agentCommands = {
  /**
   * Sends a message with the intent the composer showed (steer, queue or a new turn): "sent" when the
   * service took it (its delivery then reports what happened), "lost" when its answer was lost with
   * the socket (held as a lost send, slices/lost-sends.ts), else "failed" (shown at the composer).
   * The lost message, sent again unchanged, goes under its first commandId: one send wherever the first got to.
   */
  async send(key: string, text: string, expectedIntent: BridgeParams<"agent.send">["expectedIntent"]): Promise<"sent" | "lost" | "failed"> {
    const lost = useFleet.getState().lostSends.get(key);
    const commandId = lost?.checked && lost.text === text ? lost.commandId : newCommandId();
    let answerLost = false;
    const delivery = await runForReceipt(
      `composer:${key}`,
      () => requireBridge().request("agent.send", { key, text, expectedIntent, commandId }),
      () => {
        answerLost = true;
        useFleet.getState().sendLost({ key, commandId, text, expectedIntent });
      },
    );
    if (delivery) useFleet.getState().forgetLostSend(key);
    return delivery ? "sent" : answerLost ? "lost" : "failed";
  },

  /** Sends a decision at once, except one that stops work: that waits for its confirm (`confirmed`). */
  async respondApproval(key: string, requestId: string, decision: ApprovalDecision, confirmed = false): Promise<void> {
    if (destructiveDecision(decision) && !confirmed) {
      useFleet.getState().askConfirm({ action: "decide", key, requestId, decision });
      return;
    }
    const names = named(key);
    const about = decidedAbout(
      useFleet
        .getState()
        .agents.get(key)
        ?.pending.find((request) => request.requestId === requestId),
    );
    const before = inboxKeys();
    const delivery = await runForReceipt(`request:${requestId}`, () => requireBridge().request("agent.respondApproval", { key, requestId, decision }));
    if (delivery && delivery.state !== "refused") confirmDone(names, { kind: "decided", decision, ...about }, null);
    if (delivery) advanceInbox(key, before);
  },

  async respondInput(key: string, requestId: string, answers: QuestionAnswers): Promise<void> {
    const names = named(key);
    const before = inboxKeys();
    const delivery = await runForReceipt(`request:${requestId}`, () => requireBridge().request("agent.respondInput", { key, requestId, answers }));
    if (delivery && delivery.state !== "refused") confirmDone(names, { kind: "answered" }, null);
    if (delivery) advanceInbox(key, before);
  },

  /**
   * Puts an agent aside from the inbox for `ms`, or (null) until what it needs changes; the next item
   * opens. The window shows it snoozed at once; the service keeps it (in T3 itself where the server
   * has snooze, else T3 Fleet keeps it, with why) and every window then reads it from the agent's view.
   */
  snooze(key: string, ms: number | null): void {
    const agent = useFleet.getState().agents.get(key);
    if (!agent) return;
    const before = inboxKeys();
    const snooze = { until: ms === null ? null : Date.now() + ms, fingerprint: needFingerprint(agent) };
    useFleet.getState().snooze(key, snooze);
    confirmDone(named(key), { kind: "snoozed", until: snooze.until }, { kind: "unsnooze", key });
    advanceInbox(key, before);
    const until = snooze.until === null ? null : new Date(snooze.until).toISOString();
    void run(`agent:${key}`, () => requireBridge().request("agent.snooze", { key, until })).then(() => {
      // The service's view of the agent was sent before its answer and is applied on the next frame:
      // the window's own copy goes after it (only the snooze this call made; the user may have acted since).
      requestAnimationFrame(() => {
        if (useFleet.getState().snoozed.get(key) === snooze) useFleet.getState().snooze(key, null);
      });
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

  /** Stops the agent's session once the user confirmed (`confirmed`); until then it asks. */
  async stop(key: string, confirmed = false): Promise<void> {
    if (!confirmed) {
      useFleet.getState().askConfirm({ action: "stop", key });
      return;
    }
    const names = named(key);
    const delivery = await runForReceipt(`agent:${key}`, () => requireBridge().request("agent.stop", { key }));
    if (delivery && delivery.state !== "refused") confirmDone(names, { kind: "stopped" }, null);
  },

  /** Runs the command waiting for its confirm. */
  async confirmPending(): Promise<void> {
    const pending = useFleet.getState().confirming;
    if (!pending) return;
    useFleet.getState().askConfirm(null);
    if (pending.action === "stop") await agentCommands.stop(pending.key, true);
    else if (pending.action === "decide") await agentCommands.respondApproval(pending.key, pending.requestId, pending.decision, true);
    else if (pending.action === "interrupt") await agentCommands.interrupt(pending.key);
  },

  /** Removes a failure or stall from "need you" until it changes (settled in T3 too where the server can). */
  async acknowledge(key: string): Promise<void> {
    const names = named(key);
    const before = inboxKeys();
    const done = await run(`agent:${key}`, () => requireBridge().request("agent.acknowledge", { key }));
    if (done) confirmDone(names, { kind: "acknowledged" }, { kind: "unacknowledge", key });
    if (done) advanceInbox(key, before);
  },

  /** Brings an acknowledged agent back into "need you" (unsettled in T3 too where T3 settled it). */
  async unacknowledge(key: string, place = `agent:${key}`): Promise<boolean> {
    const names = named(key);
    const done = await run(place, () => requireBridge().request("agent.unacknowledge", { key }));
    if (done) confirmDone(names, { kind: "unacknowledged" }, null, done.note);
    return done !== undefined;
  },

  /** The changes of the agent's latest turn are reviewed: it leaves "need you" until a later turn changes files. */
  async markReviewed(key: string): Promise<void> {
    const names = named(key);
    const before = inboxKeys();
    const done = await run(`agent:${key}`, () => requireBridge().request("agent.review", { key }));
    if (done) confirmDone(names, { kind: "reviewed" }, { kind: "unreview", key, turnCount: done.previous });
    if (done) advanceInbox(key, before);
  },

  /** Brings the agent's changes back as not reviewed (the undo of markReviewed). */
  async unreview(key: string, turnCount: number | null, place = `agent:${key}`): Promise<boolean> {
    const names = named(key);
    const done = await run(place, () => requireBridge().request("agent.unreview", { key, turnCount }));
    if (done) confirmDone(names, { kind: "unreviewed" }, null);
    return done !== undefined;
  },

  /** Wakes a snoozed agent: the service drops the snooze T3 Fleet keeps, and T3 ends the one it holds. */
  async unsnooze(key: string, place = `agent:${key}`): Promise<boolean> {
    const names = named(key);
    useFleet.getState().snooze(key, null);
    const done = await run(place, () => requireBridge().request("agent.unsnooze", { key }));
    if (done?.note) useFleet.getState().commandFailed(place, `T3 still holds its snooze: ${done.note}`);
    else if (done) confirmDone(names, { kind: "unsnoozed" }, null);
    return done !== undefined && !done.note;
  },

  /** Takes back the last action where it can be (its confirmation offers Undo), and shows the agent again. */
  async undoLast(): Promise<void> {
    const { confirmation } = useFleet.getState();
    const undo = confirmation?.undo;
    if (!confirmation || !undo) return;
    useFleet.getState().clearConfirmation(confirmation.id);
    const undone =
      undo.kind === "unsnooze"
        ? await agentCommands.unsnooze(undo.key, "undo")
        : undo.kind === "unreview"
          ? await agentCommands.unreview(undo.key, undo.turnCount, "undo")
          : await agentCommands.unacknowledge(undo.key, "undo");
    if (undone) void navigation.openAgent(undo.key).then(focusWhenStill("panel"));
  },

  async recheck(commandId: string): Promise<void> {
    await runForReceipt(`delivery:${commandId}`, () => requireBridge().request("delivery.recheck", { commandId }));
  },

  /** Withdraws a message still queued behind a running turn; the cancel is tracked like any send. */
  async cancelQueued(commandId: string): Promise<void> {
    await runForReceipt(`delivery:${commandId}`, () => requireBridge().request("delivery.cancelQueued", { commandId }));
  },
};

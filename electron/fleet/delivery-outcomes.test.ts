// What ends an answer's delivery, read from threads the real T3 0.0.42 stored with the real Codex
// (fixtures/t3-0.0.42-harness-cases/, recorded by integration/realt3/fleet.real.test.ts): it reached
// the agent only where T3 recorded the request resolved with that decision; T3's refusal is said
// in T3's words; a request merely gone from the pending list is no end (issue 39).
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import { agentReceipts } from "../../shared/fleet/receipts";
import { decodeWith } from "../../shared/t3/decode";
import { ThreadStreamItemSchema } from "../../shared/t3/protocol1/schemas";
import { ThreadProjection } from "../../shared/t3/protocol1/thread-projection";
import { commandStep } from "./delivery-outcomes";
import { NO_RECORD_OF_ANSWER, answeredOtherwise } from "./delivery-reasons";

const cases = resolve(dirname(fileURLToPath(import.meta.url)), "../../fixtures/t3-0.0.42-harness-cases");

/** The recorded thread as the fleet's thread stream holds it; `answered`: the fleet's own answer, marked at once. */
function recorded(name: string, answered?: string, without?: (activity: { kind: string }) => boolean) {
  const { thread } = JSON.parse(readFileSync(resolve(cases, `${name}.json`), "utf8")) as { thread: { activities: { kind: string }[] } };
  const activities = without ? thread.activities.filter((activity) => !without(activity)) : thread.activities;
  const decoded = decodeWith(ThreadStreamItemSchema, { kind: "snapshot", snapshot: { snapshotSequence: 1, thread: { ...thread, activities } } }, name);
  if (!decoded.ok || decoded.value.kind !== "snapshot") throw new Error(`${name}: not a thread snapshot`);
  const projection = new ThreadProjection();
  projection.applySnapshot(decoded.value.snapshot);
  if (answered) projection.markAnswered(answered);
  const requested = projection.activities.find((activity) => activity.kind === "approval.requested")!;
  return { facts: projection.facts(), requestId: (requested.payload as { requestId: string }).requestId, turnId: requested.turnId };
}

function approval(requestId: string, state: Delivery["state"] = "accepted"): Delivery {
  const at = "2026-12-04T23:24:46.200Z";
  return {
    commandId: "c-1",
    agentKey: "env/thread",
    kind: "approval",
    state,
    text: null,
    messageId: null,
    requestId,
    intent: null,
    observed: null,
    reason: null,
    createdAt: at,
    updatedAt: at,
  };
}

/** The receipt line of an approval after `step`, as the agent's panel words it. */
function receiptAfter(delivery: Delivery, step: Partial<Delivery> | null) {
  const receipt = agentReceipts([{ ...delivery, ...step }], delivery.agentKey)[0]!;
  return { state: receipt.state, detail: receipt.detail };
}

describe("an answer's delivery ends as T3 recorded it", () => {
  it("reached the agent: T3 recorded the request resolved with this decision (Codex, accept)", () => {
    const { facts, requestId, turnId } = recorded("approval-accepted");
    expect(facts.requestEnds?.[requestId]).toEqual({ how: "resolved", decision: "accept" });
    const delivery = approval(requestId);
    const step = commandStep(delivery, turnId, facts, "accept");
    expect(step).toEqual({ state: "delivered" });
    expect(receiptAfter(delivery, step)).toEqual({ state: "reached the agent", detail: null });
    // Another decision than the one T3 recorded did not reach the agent.
    expect(commandStep(delivery, turnId, facts, "decline")).toEqual({ state: "refused", reason: answeredOtherwise("accept") });
  });

  it("a request T3 no longer lists after its restart is no end: the answer waits for T3's record, never 'reached the agent'", () => {
    // The old rule settled it delivered as soon as the request left the pending list.
    const { facts, requestId } = recorded("approval-across-restart", undefined);
    expect(facts.pending).toEqual([]);
    expect(facts.requestEnds).toEqual({});
    expect(commandStep(approval(requestId), null, facts, "accept")).toBeNull();
  });

  it("refused in T3's words: T3 recorded that it could not pass the answer on (stale after the restart)", () => {
    const { facts, requestId } = recorded("approval-across-restart-answered", undefined);
    const end = facts.requestEnds?.[requestId];
    expect(end).toEqual({ how: "failed", reason: expect.stringMatching(/^Stale pending approval request: .*Restart the turn to continue\.$/s) });
    const delivery = approval(requestId);
    const step = commandStep(delivery, null, facts, "accept");
    expect(step).toEqual({ state: "refused", reason: end?.how === "failed" ? end.reason : "" });
    expect(receiptAfter(delivery, step)).toEqual({ state: "did not reach the agent", detail: step?.reason });
  });

  it("not confirmed: the turn that asked ended and T3 recorded nothing of the answer; while it runs, the answer waits", () => {
    const unrecorded = (activity: { kind: string }) => activity.kind === "approval.resolved";
    const { facts, requestId, turnId } = recorded("approval-accepted", undefined, unrecorded);
    // The fleet marks its own answer at once, so the request is no longer pending either way.
    const answered = recorded("approval-accepted", requestId, unrecorded).facts;
    expect(answered.pending).toEqual([]);
    const delivery = approval(requestId);
    const step = commandStep(delivery, turnId, answered, "accept");
    expect(step).toEqual({ state: "uncertain", reason: NO_RECORD_OF_ANSWER });
    expect(receiptAfter(delivery, step)).toEqual({ state: "not confirmed", detail: NO_RECORD_OF_ANSWER });
    expect(commandStep(delivery, turnId, { ...answered, activeRunId: turnId }, "accept")).toBeNull();
    // Without the fleet's own mark the request is still open: nothing to settle.
    expect(commandStep(delivery, turnId, facts, "accept")).toBeNull();
  });
});

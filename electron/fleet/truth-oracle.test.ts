// The truth oracle on small hand-made pairs: each kind of contradiction is found with both sides,
// and a truthful pair passes.
import { describe, expect, it } from "vitest";
import { connectingReason, type Delivery } from "../../shared/fleet/delivery";
import { needClass, tallyNeeds } from "../../shared/fleet/needs";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import type { AgentView, RollupStatus } from "../../shared/fleet/types";
import { agentView } from "../../shared/fleet/views.testkit";
import { type FleetTruth, type StoredThreadTruth, contradictions, noteWords, sideBySide } from "./truth-oracle.testkit";

const stored = (threadId: string, patch: Partial<StoredThreadTruth> = {}): StoredThreadTruth => ({
  threadId,
  parentThreadId: null,
  state: "idle",
  error: null,
  subagents: [],
  userMessages: [],
  requests: [],
  ...patch,
});

function fleetOf(agents: AgentView[], patch: Partial<FleetTruth> = {}): FleetTruth {
  const needs = new Map(tallyNeeds(agents).needYou.map((view) => [view.key, needClass(view)!]));
  return { agents, rollups: new Map<string, RollupStatus | null>(), needs, notifications: [], deliveries: [], ...patch };
}

const delivery = (patch: Partial<Delivery>): Delivery => ({
  commandId: "c1",
  agentKey: "e/a",
  kind: "message",
  state: "delivered",
  text: null,
  messageId: null,
  requestId: null,
  intent: null,
  observed: null,
  reason: null,
  createdAt: "t",
  updatedAt: "t",
  ...patch,
});

const note = (patch: Partial<NotificationIntent>): NotificationIntent => ({
  id: "e/a/failed",
  reason: "failed",
  environmentId: "e",
  agentKey: "e/a",
  title: "Agent a failed",
  body: "",
  ...patch,
});

const check = (threads: StoredThreadTruth[], fleet: FleetTruth) => contradictions({ environmentId: "e", threads }, fleet);
const kinds = (threads: StoredThreadTruth[], fleet: FleetTruth) => check(threads, fleet).map((item) => item.kind);

describe("the truth oracle", () => {
  it("passes a truthful pair: a failed child under a parent, the answer T3 recorded taken, the message it stored", () => {
    const threads = [
      stored("p", { userMessages: ["hello"], requests: [{ requestId: "r1", end: "resolved", decision: "accept", words: null }] }),
      stored("sub.c", { parentThreadId: "p", state: "failed", error: "Codex failed: provider error" }),
    ];
    const child = agentView("sub.c", "failed", { reason: "Codex failed: provider error" });
    const fleet = fleetOf([agentView("p", "idle"), child], {
      rollups: new Map<string, RollupStatus | null>([
        ["e/p", "failed"],
        ["e/sub.c", null],
      ]),
      notifications: [note({ id: "e/sub.c/failed", agentKey: "e/sub.c" })],
      deliveries: [
        delivery({ agentKey: "e/p", text: "hello", state: "answered" }),
        delivery({ commandId: "c2", agentKey: "e/p", kind: "approval", requestId: "r1" }),
      ],
      seenCalm: new Set(["e/sub.c"]),
    });
    expect(sideBySide(check(threads, fleet))).toBe("");
  });

  it("a thread the fleet does not show, and a row T3 does not store", () => {
    const found = check([stored("a", { state: "running" })], fleetOf([agentView("b", "idle")]));
    expect(found).toEqual([
      { kind: "invented", threadId: "b", server: "no such thread", fleet: "idle" },
      { kind: "missing", threadId: "a", server: "running", fleet: "no row" },
    ]);
  });

  it("an archived or deleted thread may have left the fleet", () => {
    expect(kinds([stored("a", { state: "archived" }), stored("b", { state: "deleted" })], fleetOf([]))).toEqual([]);
  });

  it("a status T3's record does not allow: idle while a turn is active, idle while T3 says failed", () => {
    expect(check([stored("a", { state: "running" })], fleetOf([agentView("a", "idle")]))).toEqual([
      { kind: "status", threadId: "a", server: "running", fleet: "idle" },
    ]);
    expect(kinds([stored("a", { state: "failed", error: "boom" })], fleetOf([agentView("a", "idle")]))).toEqual(["status", "needs"]);
    // A steer shown starting for ever after T3's turn ended (commit 5ef1fb5).
    expect(kinds([stored("a", { state: "idle" })], fleetOf([agentView("a", "starting")]))).toEqual(["status"]);
  });

  it("mid-turn, any active status agrees with T3's active turn, and a stall is the fleet's own", () => {
    const stalled = agentView("a", "running", { stalled: true });
    expect(kinds([stored("a", { state: "running" })], fleetOf([stalled]))).toEqual([]);
    expect(kinds([stored("a", { state: "running" })], fleetOf([agentView("a", "waiting")]))).toEqual([]);
  });

  it("a failure's reason that is not T3's words", () => {
    const found = check(
      [stored("a", { state: "failed", error: "Provider session did not survive" })],
      fleetOf([agentView("a", "failed", { reason: "Failed" })]),
    );
    expect(found).toEqual([{ kind: "reason", threadId: "a", server: 'failed · "Provider session did not survive"', fleet: 'failed · "Failed"' }]);
  });

  it("a native subagent missing, or in another state than T3's", () => {
    const threads = [
      stored("a", {
        subagents: [
          { id: "s1", status: "failed" },
          { id: "s2", status: "running" },
        ],
      }),
    ];
    const view = agentView("a", "idle", {
      subagents: [{ id: "s1", status: "completed", title: null, kind: null, model: null, childThreadId: null, updatedAt: "t" }],
    });
    const found = check(threads, fleetOf([view], { rollups: new Map([["e/a", "running"]]) })).filter((item) => item.kind === "subagent");
    expect(found).toEqual([
      { kind: "subagent", threadId: "a", server: "subagent s1 failed", fleet: "subagent completed" },
      { kind: "subagent", threadId: "a", server: "subagent s2 running", fleet: "not shown" },
    ]);
  });

  it("a roll-up that hides a failed child, or shows activity nothing below does", () => {
    const threads = [stored("p"), stored("sub.c", { parentThreadId: "p", state: "failed" })];
    const views = [agentView("p", "idle"), agentView("sub.c", "failed")];
    expect(check(threads, fleetOf(views, { rollups: new Map([["e/p", "idle"]]) })).filter((item) => item.kind === "rollup")).toEqual([
      { kind: "rollup", threadId: "p", server: "below it: failed", fleet: "roll-up idle" },
    ]);
    const calm = [stored("p"), stored("sub.c", { parentThreadId: "p" })];
    expect(kinds(calm, fleetOf([agentView("p", "idle"), agentView("sub.c", "idle")], { rollups: new Map([["e/p", "running"]]) }))).toEqual(["rollup"]);
  });

  it("the inbox's need against T3's: an approval T3 holds but the inbox leaves out, a need T3 does not hold", () => {
    const pending = check([stored("a", { state: "pending-approval" })], fleetOf([agentView("a", "needs-approval")], { needs: new Map() }));
    expect(pending).toEqual([{ kind: "needs", threadId: "a", server: "pending-approval → needs decision", fleet: "inbox: nothing (needs-approval)" }]);
    expect(kinds([stored("a")], fleetOf([agentView("a", "idle")], { needs: new Map([["e/a", "failure"]]) }))).toEqual(["needs"]);
    // An acknowledged failure is out of the inbox by the user's hand.
    expect(kinds([stored("a", { state: "failed" })], fleetOf([agentView("a", "failed", { acknowledged: true })]))).toEqual([]);
  });

  it("notifications: a new need with none, one condition notified twice, one for a thread T3 does not store", () => {
    const threads = [stored("a", { state: "failed" })];
    const views = [agentView("a", "failed")];
    expect(kinds(threads, fleetOf(views, { seenCalm: new Set(["e/a"]) }))).toEqual(["notification"]);
    // Found after a reconnect: summarized once for the machine.
    expect(
      kinds(threads, fleetOf(views, { seenCalm: new Set(["e/a"]), notifications: [note({ id: "e//summary/t", reason: "summary", agentKey: null })] })),
    ).toEqual([]);
    expect(check(threads, fleetOf(views, { notifications: [note({}), note({})] }))).toEqual([
      { kind: "notification", threadId: "e/a/failed", server: "one condition", fleet: "notified 2 times" },
    ]);
    expect(kinds(threads, fleetOf(views, { notifications: [note({ id: "e/x/failed", agentKey: "e/x" })] }))).toEqual(["notification"]);
  });

  it("receipts: 'reached the agent' where T3 refused or holds the request, a refusal without T3's words, a message T3 never stored", () => {
    const refusedByT3 = { requestId: "r1", end: "refused" as const, decision: null, words: "Stale pending approval request" };
    const approval = delivery({ kind: "approval", requestId: "r1" });
    expect(check([stored("a", { requests: [refusedByT3] })], fleetOf([agentView("a", "idle")], { deliveries: [approval] }))).toEqual([
      { kind: "receipt", threadId: "a", server: 'request r1 refused · "Stale pending approval request"', fleet: "approval delivered (reached the agent)" },
    ]);
    const pending = { requestId: "r1", end: "pending" as const, decision: null, words: null };
    expect(
      kinds([stored("a", { state: "pending-approval", requests: [pending] })], fleetOf([agentView("a", "needs-approval")], { deliveries: [approval] })),
    ).toEqual(["receipt"]);
    const refused = delivery({ kind: "approval", requestId: "r1", state: "refused", reason: "did not reach the agent" });
    expect(kinds([stored("a", { requests: [refusedByT3] })], fleetOf([agentView("a", "idle")], { deliveries: [refused] }))).toEqual(["receipt"]);
    const inT3Words = { ...refused, reason: "Stale pending approval request" };
    expect(kinds([stored("a", { requests: [refusedByT3] })], fleetOf([agentView("a", "idle")], { deliveries: [inT3Words] }))).toEqual([]);
    // Refused before it was sent, in the words of the session error T3 stored; T3 later refused another client's answer in its own.
    const unanswerable = { ...refused, reason: "The approval can no longer be answered: Provider session did not survive a restart." };
    const failed = stored("a", { state: "failed", error: "Provider session did not survive a restart.", requests: [refusedByT3] });
    expect(kinds([failed], fleetOf([agentView("a", "failed", { reason: unanswerable.reason })], { deliveries: [unanswerable] }))).toEqual([]);
    // …and once T3 cleared that error (its session ready again), the words it said at an earlier check still count.
    const cleared = stored("a", { state: "failed", requests: [refusedByT3] });
    const view = agentView("a", "failed", { reason: "Stale" });
    expect(kinds([cleared], fleetOf([view], { deliveries: [unanswerable] }))).toEqual(["receipt"]);
    const wordsSeen = new Map<string, Set<string>>();
    noteWords({ environmentId: "e", threads: [failed] }, wordsSeen);
    expect(kinds([cleared], fleetOf([view], { deliveries: [unanswerable], wordsSeen }))).toEqual([]);
    // Refused before it left because the machine was offline; T3, restarting, later left the request unanswerable: no contradiction.
    const restarted = stored("a", {
      requests: [{ requestId: "r1", end: "unanswerable" as const, decision: null, words: "Provider session did not survive a server restart." }],
    });
    const offline = { ...refused, reason: "soak-upstream-2 is offline." };
    expect(kinds([restarted], fleetOf([agentView("a", "idle")], { deliveries: [offline] }))).toEqual([]);
    const connecting = { ...refused, reason: connectingReason("soak-upstream-2") };
    expect(kinds([restarted], fleetOf([agentView("a", "idle")], { deliveries: [connecting] }))).toEqual([]);
    // Any other refusal still owes T3's words.
    expect(kinds([restarted], fleetOf([agentView("a", "idle")], { deliveries: [{ ...refused, reason: "soak-upstream-2 said no." }] }))).toEqual(["receipt"]);
    const message = delivery({ text: "hello", state: "answered" });
    expect(check([stored("a")], fleetOf([agentView("a", "idle")], { deliveries: [message] }))).toEqual([
      { kind: "receipt", threadId: "a", server: '0 user message(s) "hello"', fleet: "1 shown delivered" },
    ]);
    // Uncertain is an honest word whatever T3 holds.
    expect(kinds([stored("a")], fleetOf([agentView("a", "idle")], { deliveries: [{ ...message, state: "uncertain" }] }))).toEqual([]);
  });

  it("receipts T3 can no longer judge: a deleted thread's, and an answer from before an in-place upgrade that did not carry requests", () => {
    const message = delivery({ text: "hello", state: "answered" });
    const approval = delivery({ commandId: "c2", kind: "approval", requestId: "r1" });
    const deletedRow = agentView("a", "deleted");
    expect(kinds([stored("a", { state: "deleted" })], fleetOf([deletedRow], { deliveries: [message, approval] }))).toEqual([]);
    // Imported: its messages came along (one stored here), its requests did not; a request it does hold is judged.
    const imported = stored("a", { imported: true, userMessages: ["hello"] });
    expect(kinds([imported], fleetOf([agentView("a", "idle")], { deliveries: [message, approval] }))).toEqual([]);
    const pending = { requestId: "r1", end: "pending" as const, decision: null, words: null };
    expect(kinds([{ ...imported, requests: [pending] }], fleetOf([agentView("a", "idle")], { deliveries: [approval] }))).toContain("receipt");
    // Not imported: a message T3 never stored is still a contradiction.
    expect(kinds([stored("a")], fleetOf([agentView("a", "idle")], { deliveries: [message] }))).toEqual(["receipt"]);
  });
});

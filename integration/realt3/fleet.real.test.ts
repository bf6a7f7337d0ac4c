// The fleet service against the real T3 0.0.42 server (harness.testkit.ts) running the real Codex CLI
// against the scripted model server (integration/model), inside a private network namespace
// (scripts/realt3.sh). One server is shared by the scenarios, in order: the ones that only read and
// message first, then freezes, kills and restarts, revocation last.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Delivery, DeliveryState } from "../../shared/fleet/delivery";
import { needClass } from "../../shared/fleet/needs";
import { agentReceipts } from "../../shared/fleet/receipts";
import type { AgentDetail } from "../../shared/bridge/contract";
import type { FleetServiceOptions } from "../../electron/fleet/service";
import { DEFAULT_TIMING } from "../../electron/fleet/supervisor";
import { TruthWatch } from "../../electron/fleet/truth-watch.testkit";
import { defaultClientLabel } from "../../electron/fleet/t3/client";
import {
  FAST,
  type Fleet,
  PING_MS,
  agent,
  clientLabelOf,
  deliveryStates,
  env,
  keyOf,
  recoverServer,
  revokedSessionMakesNoRetryStorm,
  rows,
  startFleet as startPairedFleet,
  statusHistory as history,
  until,
} from "./fleet.testkit";
import { SHELL_MARKER, SLOW_WORDS } from "../model/script";
import { ScriptedModelServer } from "../model/scripted-model-server";
import { MESSAGE_REACHES_HARNESS_MS } from "./harness-scenarios.testkit";
import { RELEASED_T3, RealT3Server } from "./harness.testkit";
import { T3Operator } from "./operator.testkit";
import { readT3Truth } from "./truth-reader.testkit";

let model: ScriptedModelServer;
let server: RealT3Server;
let operator: T3Operator;
let projectId: string;
let parentId: string;
let childId: string;
let fleet: Fleet;
const cleanups: (() => unknown)[] = [];

const startFleet = (options: Partial<FleetServiceOptions>, pairingBaseUrl = server.baseUrl) => startPairedFleet(server, options, cleanups, pairingBaseUrl);
const statusHistory = (target: Fleet, threadId: string) => history(target, threadId, cleanups);

async function newThread(title: string, threadId?: string): Promise<string> {
  const id = await operator.createThread(projectId, title, threadId);
  await until(fleet, () => agent(fleet, id) !== undefined, `${title} in the fleet`);
  return id;
}

/**
 * With T3_RECORD_HARNESS_CASES=1, keeps what T3 stored (its shell row and thread) in
 * fixtures/t3-0.0.42-harness-cases/, for the unit tests beside the code that reads them.
 */
async function recordStored(name: string, threadId: string): Promise<void> {
  if (process.env.T3_RECORD_HARNESS_CASES !== "1") return;
  const folder = join(dirname(fileURLToPath(import.meta.url)), "../../fixtures/t3-0.0.42-harness-cases");
  await mkdir(folder, { recursive: true });
  const row = (await operator.shell()).threads.find((thread) => thread.id === threadId);
  const thread = await operator.thread(threadId);
  await writeFile(join(folder, `${name}.json`), JSON.stringify({ row, thread }, null, 2) + "\n");
}

/** The words of a delivery's receipt as the agent's panel shows them, from the last state the fleet published. */
function receiptOf(commandId: string) {
  const delivery = fleet.events.flatMap((event) => (event.type === "delivery" && event.delivery.commandId === commandId ? [event.delivery] : [])).at(-1)!;
  const receipt = agentReceipts([delivery], delivery.agentKey).at(-1);
  return receipt && { what: receipt.what, state: receipt.state, detail: receipt.detail };
}

async function userMessagesOnServer(threadId: string, text: string): Promise<number> {
  return (await operator.thread(threadId)).messages.filter((message) => message.role === "user" && message.text === text).length;
}

beforeAll(async () => {
  // Fails (never skips) when the executable is missing or the server cannot start.
  model = await ScriptedModelServer.start();
  server = await RealT3Server.start({ kind: RELEASED_T3, harnesses: { names: ["codex"], modelUrl: model.url } });
  operator = await T3Operator.start(server);
  projectId = await operator.createProject("Fleet project");
  parentId = await operator.createThread(projectId, "Planner");
  childId = await operator.createThread(projectId, "Worker", `sub.${parentId}.worker1`);
}, 90_000);

afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
  await server?.stop();
  await model?.close();
}, 30_000);

/** The truth oracle's record of the shared fleet, from the first scenario that starts it (issue 39). */
let truth: TruthWatch | undefined;

/** After a step: every thread T3 stored (and each row the fleet still shows) against what the shared fleet says. */
async function truthful(step: string): Promise<void> {
  truth ??= new TruthWatch(fleet.service, fleet.events);
  const shown = rows(fleet).map((view) => view.threadId);
  await truth.check(fleet.environmentId, () => readT3Truth(operator, fleet.environmentId, undefined, shown), step, { settleMs: 30_000 });
}

afterEach(async ({ task }) => {
  await recoverServer(server);
  if (fleet) await truthful(`${task.name}: at its end`);
}, 60_000);

describe("the fleet against a real T3 0.0.42 server", () => {
  it("pairs by link and names itself to T3", async () => {
    fleet = await startFleet(FAST);
    const descriptor = await server.descriptor();
    expect(fleet.environmentId).toBe(descriptor.environmentId);
    expect(env(fleet)).toMatchObject({ serverVersion: "0.0.42", generation: "upstream", readOnly: false });
    const sessions = await server.sessions();
    expect(sessions.map(clientLabelOf)).toContain(defaultClientLabel());
  });

  it("shows the project's parent thread with its child sub.<parent>.<suffix> nested under it", async () => {
    await until(fleet, () => agent(fleet, parentId) !== undefined && agent(fleet, childId) !== undefined, "parent and child");
    expect(agent(fleet, childId)).toMatchObject({ parentThreadId: parentId, orphaned: false, title: "Worker", status: "idle" });
    expect(agent(fleet, parentId)).toMatchObject({ parentThreadId: null, status: "idle" });
  });

  it("follows a live first turn starting → running → idle, and shows the reply T3 stored", async () => {
    const threadId = await newThread("Live turn");
    const history = statusHistory(fleet, threadId);
    // Held halfway (integration/model/script.ts) until the fleet has shown it running: a reply that streams in a few
    // milliseconds can start and end between two of the fleet's updates, and then "running" is never on screen.
    await operator.startTurn(threadId, "say hello, slow and held");
    const reply = await model.waitFor((request) => request.api !== null && request.text.includes("slow and held"), "the reply's request");
    await until(fleet, () => history().includes("running"), "running");
    model.release(reply);
    await until(fleet, () => agent(fleet, threadId)?.status === "idle" && history().includes("running"), "idle after the turn");
    // No idle flicker while the turn was being started (issue 7): starting → running → idle.
    const shown = history();
    expect(shown.slice(shown.indexOf("starting"))).toEqual(["starting", "running", "idle"]);

    const key = keyOf(fleet, threadId);
    let detail = (await fleet.service.request("agent.open", { key })) as AgentDetail;
    const stored = (await operator.thread(threadId)).messages.filter((message) => message.role === "assistant");
    expect(stored).toHaveLength(1);
    expect(stored[0]!.text).toMatch(new RegExp(`^word1 .* word${SLOW_WORDS}\\.$`));
    const replies = (shown: AgentDetail) => shown.items.flatMap((item) => (item.type === "message" && item.role === "assistant" ? [item] : []));
    await until(fleet, () => replies((detail = fleet.service.detail(key))).some((item) => !item.streaming), "reply in the transcript");
    expect(replies(detail).map((item) => item.text)).toEqual(stored.map((message) => message.text));
    await fleet.service.request("agent.close", { key });
  });

  it("delivers a message to an idle child exactly once: accepted → delivered → answered", async () => {
    const key = keyOf(fleet, childId);
    expect(fleet.service.intent(key)).toMatchObject({ kind: "new-turn" });
    const text = "child, please report";
    const delivery = (await fleet.service.request("agent.send", { key, text, expectedIntent: "new-turn" })) as Delivery;
    await until(fleet, () => fleet.service.delivery(delivery.commandId)?.state === "answered", "answered");
    const states = deliveryStates(fleet, delivery.commandId);
    // In order and ending answered; on a loaded machine T3 may report the message and its answer in one batch, so "delivered" can be folded into "answered".
    const inOrder: DeliveryState[] = ["sending", "accepted", "delivered", "answered"];
    expect(inOrder.filter((state) => states.includes(state))).toEqual(states);
    expect(states.at(-1)).toBe("answered");
    expect(await userMessagesOnServer(childId, text)).toBe(1);
    expect(fleet.service.delivery(delivery.commandId)!.observed).toMatchObject({ outcome: "new-turn" });
  });

  it("says a message to a running Codex turn steers it, and that is what happens: one turn, the reply to both", async () => {
    const threadId = await newThread("Busy codex");
    const key = keyOf(fleet, threadId);
    await operator.startTurn(threadId, "a slow held job");
    const slowReply = await model.waitFor((request) => request.api !== null && request.text.includes("a slow held job"), "the slow reply's request");
    await until(fleet, () => agent(fleet, threadId)?.status === "running" && agent(fleet, threadId)?.activeRunId !== null, "running");
    const runningTurn = agent(fleet, threadId)!.activeRunId!;
    const intent = fleet.service.intent(key);
    // What T3 0.0.42 does with a message to a running Codex turn (docs/t3-protocols.md, "Harnesses under T3").
    expect(intent).toMatchObject({ kind: "steer", note: expect.stringMatching(/stops the reply it is writing/) });

    const text = "and one more thing";
    const delivery = (await fleet.service.request("agent.send", { key, text, expectedIntent: intent.kind })) as Delivery;
    // The slow reply holds halfway (integration/model/script.ts) and goes on a while after T3 holds the message.
    await until(fleet, () => ["delivered", "answered"].includes(fleet.service.delivery(delivery.commandId)?.state ?? ""), "delivered", 60_000);
    model.release(slowReply, MESSAGE_REACHES_HARNESS_MS);
    await until(fleet, () => fleet.service.delivery(delivery.commandId)?.state === "answered", "answered", 60_000);
    expect(fleet.service.delivery(delivery.commandId)!.observed).toMatchObject({ outcome: "steered", turnId: runningTurn });
    expect(await userMessagesOnServer(threadId, text)).toBe(1);
    const turns = new Set((await operator.thread(threadId)).messages.filter((m) => m.role === "assistant").map((m) => m.turnId));
    expect([...turns]).toEqual([runningTurn]);
  });

  it("a steered Codex turn that ends settles the agent, and a second message then starts a new turn (issue 39)", async () => {
    const threadId = await newThread("Steered, then settled");
    const key = keyOf(fleet, threadId);
    await operator.startTurn(threadId, "a slow held job [settles]");
    const slowReply = await model.waitFor((request) => request.api !== null && request.text.includes("a slow held job [settles]"), "the slow reply's request");
    await until(fleet, () => agent(fleet, threadId)?.status === "running" && fleet.service.intent(key).kind === "steer", "running, a message would steer");
    const steeredTurn = agent(fleet, threadId)!.activeRunId!;
    const steer = (await fleet.service.request("agent.send", { key, text: "and one more thing [settles]", expectedIntent: "steer" })) as Delivery;
    await until(fleet, () => ["delivered", "answered"].includes(fleet.service.delivery(steer.commandId)?.state ?? ""), "the steer delivered", 60_000);
    model.release(slowReply, MESSAGE_REACHES_HARNESS_MS);
    await until(fleet, () => fleet.service.delivery(steer.commandId)?.state === "answered", "the steered turn ended", 60_000);
    // What T3 stored: the one turn ended, the session ready with no active turn, the steer newer than the turn's request.
    const stored = await operator.thread(threadId);
    expect(stored.session).toMatchObject({ status: "ready", activeTurnId: null });
    expect(stored.latestTurn).toMatchObject({ turnId: steeredTurn, state: "completed" });
    await recordStored("steered-turn-ended", threadId);
    // The fleet says the same: settled, nothing asked for, nothing needed, and a message now starts a turn.
    const shown = () => `${agent(fleet, threadId)?.status} (${agent(fleet, threadId)?.reason}), the composer offering ${fleet.service.intent(key).kind}`;
    await until(
      fleet,
      () => agent(fleet, threadId)?.status === "idle" && fleet.service.intent(key).kind === "new-turn",
      () => `idle as T3 says, shown ${shown()}`,
    );
    expect(needClass(agent(fleet, threadId)!)).toBeNull();
    const second = (await fleet.service.request("agent.send", { key, text: "say hello [settles]", expectedIntent: "new-turn" })) as Delivery;
    expect(second.state).not.toBe("refused");
    await until(fleet, () => fleet.service.delivery(second.commandId)?.state === "answered", "the second message answered", 60_000);
    const observed = fleet.service.delivery(second.commandId)!.observed;
    expect(observed?.outcome).toBe("new-turn");
    expect(observed?.turnId).not.toBe(steeredTurn);
    const turns = new Set((await operator.thread(threadId)).messages.filter((m) => m.role === "assistant").map((m) => m.turnId));
    expect([...turns]).toEqual([steeredTurn, observed!.turnId]);
    await until(
      fleet,
      () => agent(fleet, threadId)?.status === "idle",
      () => `idle after the second turn, shown ${shown()}`,
    );
  });

  it("answers an approval from the fleet", async () => {
    const threadId = await operator.createThread(projectId, "Careful worker");
    await operator.setRuntimeMode(threadId, "approval-required");
    await until(fleet, () => agent(fleet, threadId) !== undefined, "in the fleet");
    await operator.startTurn(threadId, "run the approval command", "approval-required");
    await until(fleet, () => agent(fleet, threadId)?.status === "needs-approval" && agent(fleet, threadId)!.pending.length === 1, "needs approval");
    expect(fleet.service.model.counts().needsYou).toBeGreaterThanOrEqual(1);
    const key = keyOf(fleet, threadId);
    const requestId = agent(fleet, threadId)!.pending[0]!.requestId;
    const delivery = (await fleet.service.request("agent.respondApproval", { key, requestId, decision: "accept" })) as Delivery;
    await until(fleet, () => fleet.service.delivery(delivery.commandId)?.state === "delivered", "approval delivered");
    await until(fleet, () => agent(fleet, threadId)?.status === "idle", "turn completed after the approval");
    // The command ran and its output reached the model, which answered it.
    const replies = (await operator.thread(threadId)).messages.filter((m) => m.role === "assistant").map((m) => m.text);
    expect(replies.at(-1)).toContain(SHELL_MARKER);
    // The receipt says it reached the agent because T3 recorded the request resolved.
    await recordStored("approval-accepted", threadId);
    const resolved = (await operator.thread(threadId)).activities.filter((activity) => activity.kind === "approval.resolved");
    expect(resolved.length).toBeGreaterThan(0);
    expect(receiptOf(delivery.commandId)).toMatchObject({ what: "Your approval decision", state: "reached the agent" });
  });

  it("a failing child turn shows failed, rolls up to its parent and counts", async () => {
    const failingId = await newThread("Failing worker", `sub.${parentId}.worker2`);
    const before = fleet.service.model.counts();
    await operator.startTurn(failingId, "this will fail");
    await until(fleet, () => agent(fleet, failingId)?.status === "failed", "failed");
    const stored = await operator.thread(failingId);
    expect(stored.session).toMatchObject({ status: "error", lastError: expect.any(String) });
    expect(agent(fleet, failingId)).toMatchObject({ parentThreadId: parentId, reason: stored.session!.lastError });
    expect(fleet.service.model.rollup(fleet.environmentId, parentId)).toBe("failed");
    const after = fleet.service.model.counts();
    expect(after.byStatus.failed ?? 0).toBe((before.byStatus.failed ?? 0) + 1);
    expect(after.needsYou).toBe(before.needsYou + 1);
  });

  it("snoozes a failed thread in T3 itself, reads T3's wake time back, and T3 wakes it on new activity; a blocked thread stays the window's, with T3's refusal", async () => {
    const failedId = await newThread("Failing, to snooze");
    await operator.startTurn(failedId, "this will fail");
    await until(fleet, () => agent(fleet, failedId)?.status === "failed", "failed");
    expect(agent(fleet, failedId)!.capabilities.snooze).toBe(true); // 0.0.42 advertises threadSnooze
    const key = keyOf(fleet, failedId);
    const wake = new Date(Date.now() + 3_600_000).toISOString();
    expect(await fleet.service.request("agent.snooze", { key, until: wake })).toEqual({ key, onServer: "snoozed", until: wake, note: null });
    const stored = (await operator.shell()).threads.find((thread) => thread.id === failedId)!;
    expect(Date.parse(String(stored.snoozedUntil))).toBe(Date.parse(wake));
    await until(fleet, () => agent(fleet, failedId)?.snoozedUntil != null, "T3's wake time in the facts");
    expect(Date.parse(agent(fleet, failedId)!.snoozedUntil!)).toBe(Date.parse(wake));
    // A new turn is activity: T3 wakes the thread itself.
    await operator.startTurn(failedId, "say hello");
    await until(fleet, () => agent(fleet, failedId)?.snoozedUntil === null, "awake after the new turn", 60_000);
    expect((await operator.shell()).threads.find((thread) => thread.id === failedId)!.snoozedUntil ?? null).toBeNull();

    const blockedId = await newThread("Careful, to snooze");
    await operator.setRuntimeMode(blockedId, "approval-required");
    await operator.startTurn(blockedId, "run the approval command", "approval-required");
    await until(fleet, () => agent(fleet, blockedId)?.status === "needs-approval" && agent(fleet, blockedId)!.pending.length === 1, "needs approval");
    const blockedKey = keyOf(fleet, blockedId);
    const refused = await fleet.service.request("agent.snooze", { key: blockedKey, until: wake });
    expect(refused).toMatchObject({
      key: blockedKey,
      onServer: "local",
      note: expect.stringMatching(/^T3 refused it: .*pending approval or user-input request/),
    });
    expect((await operator.shell()).threads.find((thread) => thread.id === blockedId)!.snoozedUntil ?? null).toBeNull();
    const requestId = agent(fleet, blockedId)!.pending[0]!.requestId;
    await fleet.service.request("agent.respondApproval", { key: blockedKey, requestId, decision: "decline" });
    await until(fleet, () => agent(fleet, blockedId)?.status !== "needs-approval", "answered");
  });

  it("an interrupted turn is shown interrupted, not idle", async () => {
    const threadId = await newThread("Interrupted worker");
    const key = keyOf(fleet, threadId);
    await operator.startTurn(threadId, "a slow long story");
    await until(fleet, () => agent(fleet, threadId)?.status === "running", "running");
    const delivery = (await fleet.service.request("agent.interrupt", { key })) as Delivery;
    await until(fleet, () => fleet.service.delivery(delivery.commandId)?.state === "delivered", "interrupt delivered");
    await until(fleet, () => agent(fleet, threadId)?.status !== "running", "turn ended");
    // T3 0.0.42 stores this turn as latestTurn.state "completed" with the partial reply.
    expect((await operator.thread(threadId)).session?.status).toBe("ready");
    expect(agent(fleet, threadId)!.status).toBe("interrupted");
  });

  it("archived and deleted threads are shown as such", async () => {
    const archivedId = await newThread("To archive");
    const deletedId = await newThread("To delete");
    await operator.archive(archivedId);
    await operator.delete(deletedId);
    // T3 0.0.42 sends the same thread-removed for both, and both then read as not found; only the
    // full snapshot (/api/orchestration/snapshot) still has them, with archivedAt or deletedAt.
    await until(fleet, () => agent(fleet, archivedId)?.lifecycle !== "active", "archive seen");
    await until(fleet, () => agent(fleet, deletedId)?.lifecycle !== "active", "delete seen");
    await until(
      fleet,
      () => agent(fleet, archivedId)?.lifecycle === "archived" && agent(fleet, deletedId)?.lifecycle === "deleted",
      () =>
        `archived shown as ${agent(fleet, archivedId)?.status}/${agent(fleet, archivedId)?.lifecycle}, deleted shown as ${agent(fleet, deletedId)?.status}/${agent(fleet, deletedId)?.lifecycle}`,
    );
    expect(agent(fleet, archivedId)!.status).not.toBe("deleted");
    expect(agent(fleet, deletedId)!.status).toBe("deleted");
  });

  it("SIGSTOP: a frozen server is offline by the heartbeat, and online again after SIGCONT", async () => {
    await until(fleet, () => env(fleet)?.connection.phase === "online", "online");
    server.freeze();
    await until(fleet, () => env(fleet)?.connection.phase === "offline", "offline", 30_000);
    // Noticed by missed pings: a frozen process keeps its sockets open.
    expect(env(fleet)!.connection).toMatchObject({ phase: "offline", error: "The server stopped answering pings." });
    expect(agent(fleet, childId)).toMatchObject({ status: "unknown" });
    server.thaw();
    await until(fleet, () => env(fleet)?.connection.phase === "online", "online after SIGCONT");
  });

  it("SIGKILL: offline as of the last confirmation; a restart on the same port is online with the same environmentId, re-probed quickly all along", async () => {
    // Production retry timing: only quick re-probing of a recently seen host keeps the restart quick.
    const production = await startFleet({ socket: { pingIntervalMs: PING_MS, openTimeoutMs: 2_000 } });
    await until(production, () => agent(production, childId)?.status === "idle", "child known");
    const retries: number[] = [];
    const recordRetry = () => {
      const phase = env(production)?.connection;
      if (phase?.phase === "offline" && retries.length < phase.attempt) retries.push(Date.parse(phase.nextAttemptAt) - Date.parse(phase.since));
    };
    production.service.on("event", recordRetry);
    cleanups.push(() => production.service.off("event", recordRetry));
    await server.kill();
    await until(fleet, () => env(fleet)?.connection.phase === "offline", "offline");
    await until(production, () => env(production)?.connection.phase === "offline", "offline (production timing)");
    const phase = env(production)!.connection;
    expect(phase.phase === "offline" && phase.lastConfirmedAt !== null && phase.nextAttemptAt !== undefined).toBe(true);
    expect(agent(production, childId)).toMatchObject({ status: "unknown", lastKnownStatus: "idle" });
    expect(agent(production, childId)!.asOf).not.toBeNull();

    await server.restart();
    await until(production, () => env(production)?.connection.phase === "online", "online after restart", 40_000);
    // Every retry was a quick probe (the jittered quickProbeMs), never a growing backoff.
    expect(retries.length).toBeGreaterThan(0);
    expect(Math.max(...retries)).toBeLessThanOrEqual(1.2 * DEFAULT_TIMING.quickProbeMs);
    expect(env(production)!.environmentId).toBe(fleet.environmentId);
    const keys = [...production.service.model.agents()].map((view) => view.key);
    expect(new Set(keys).size).toBe(keys.length);
    await until(fleet, () => env(fleet)?.connection.phase === "online", "fast fleet online after restart");
  });

  it("a message sent as the server freezes is uncertain, then exactly one copy after the restart", async () => {
    const key = keyOf(fleet, childId);
    await until(fleet, () => env(fleet)?.connection.phase === "online" && agent(fleet, childId)?.status === "idle", "online and idle");
    const text = "exactly once across a freeze";
    server.freeze();
    const delivery = (await fleet.service.request("agent.send", { key, text, expectedIntent: "new-turn" })) as Delivery;
    await until(fleet, () => fleet.service.delivery(delivery.commandId)?.state === "uncertain", "uncertain", 20_000);
    await server.restart();
    await until(fleet, () => ["delivered", "answered"].includes(fleet.service.delivery(delivery.commandId)!.state), "reconciled", 30_000);
    expect(await userMessagesOnServer(childId, text)).toBe(1);
    const states = deliveryStates(fleet, delivery.commandId);
    expect(states.indexOf("uncertain")).toBeGreaterThanOrEqual(0);
  });

  it("a child blocked on an approval across a T3 restart: the fleet says T3 can no longer take an answer, in T3's words, offers a new message, and a decision sent anyway is never shown as reaching the agent (issue 39)", async () => {
    const threadId = await operator.createThread(projectId, "Careful worker, restarted", `sub.${parentId}.worker3`);
    await operator.setRuntimeMode(threadId, "approval-required");
    await until(fleet, () => agent(fleet, threadId) !== undefined, "in the fleet");
    await operator.startTurn(threadId, "run the approval command [restart]", "approval-required");
    await until(fleet, () => agent(fleet, threadId)?.status === "needs-approval" && agent(fleet, threadId)!.pending.length === 1, "needs approval", 60_000);
    const key = keyOf(fleet, threadId);
    const requestId = agent(fleet, threadId)!.pending[0]!.requestId;
    await server.kill();
    await until(fleet, () => env(fleet)?.connection.phase === "offline", "offline");
    await server.restart();
    await until(fleet, () => env(fleet)?.connection.phase === "online", "online after the restart", 40_000);
    // What T3 stored: the session did not survive, while its shell row still lists a pending approval.
    const stored = await operator.thread(threadId);
    expect(stored.session).toMatchObject({ status: "error", activeTurnId: null, lastError: expect.stringMatching(/did not survive a server restart/) });
    const lastError = stored.session!.lastError!;
    expect((await operator.shell()).threads.find((thread) => thread.id === threadId)).toMatchObject({ hasPendingApprovals: true });
    await recordStored("approval-across-restart", threadId);
    // The fleet says what T3 says: the approval can no longer be answered, and why; a new message is offered.
    const shown = () => `${agent(fleet, threadId)?.status} (${agent(fleet, threadId)?.reason}), ${agent(fleet, threadId)?.pending.length} pending`;
    await until(
      fleet,
      () => agent(fleet, threadId)?.status === "failed" && agent(fleet, threadId)!.pending.length === 0,
      () => `failed as T3 says, shown ${shown()}`,
    );
    expect(agent(fleet, threadId)!.reason).toBe(`The approval can no longer be answered: ${lastError}`);
    expect(needClass(agent(fleet, threadId)!)).toBe("failure");
    expect(fleet.service.intent(key)).toMatchObject({ kind: "new-turn" });
    // A decision sent anyway (a card still open, the bridge): refused with T3's words, never "reached the agent".
    const delivery = (await fleet.service.request("agent.respondApproval", { key, requestId, decision: "accept" })) as Delivery;
    await until(
      fleet,
      () => deliveryStates(fleet, delivery.commandId).at(-1) === "refused",
      () => `refused (${deliveryStates(fleet, delivery.commandId).join(" → ")})`,
      30_000,
    );
    expect(deliveryStates(fleet, delivery.commandId)).not.toContain("delivered");
    await truthful("the decision refused after the restart");
    expect(receiptOf(delivery.commandId)).toEqual({
      what: "Your approval decision",
      state: "did not reach the agent",
      detail: expect.stringContaining(lastError),
    });
    // T3's own client answering it instead is refused by T3 as stale; no answer was taken, and the command never ran.
    await fleet.service.request("agent.open", { key });
    await operator.respondApproval(threadId, requestId, "accept");
    const refusal = () =>
      fleet.service
        .detail(key)
        ?.items.flatMap((item) => (item.type === "error" && item.message.startsWith("Stale pending approval request") ? [item.message] : []))[0];
    await until(fleet, () => refusal() !== undefined, "T3's refusal of the stale answer in the transcript", 30_000);
    const refused = refusal()!;
    await fleet.service.request("agent.close", { key });
    await recordStored("approval-across-restart-answered", threadId);
    // T3 no longer lists the request; the turn stays failed, said in T3's words (its session's error, or
    // once T3 readies the session again, its newest error: the refusal).
    expect((await operator.shell()).threads.find((thread) => thread.id === threadId)).toMatchObject({ hasPendingApprovals: false });
    await until(
      fleet,
      () => [lastError, refused].includes(agent(fleet, threadId)?.reason ?? ""),
      () => `T3's words alone, shown ${shown()}`,
    );
    expect(agent(fleet, threadId)).toMatchObject({ status: "failed", pending: [] });
    const after = await operator.thread(threadId);
    expect(after.activities.filter((activity) => activity.kind === "approval.resolved")).toEqual([]);
    expect(model.requests.filter((request) => request.text.includes("[restart]") && request.conversation?.endsWithToolResult)).toEqual([]);
  });

  it("a revoked session is unauthorized by the periodic re-check while its socket stays open, then makes no retry storm", async () => {
    await revokedSessionMakesNoRetryStorm(server, fleet, childId, cleanups);
  });
});

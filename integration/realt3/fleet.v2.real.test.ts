// The fleet service against T3's real V2 engine (protocol 2; harness.testkit.ts, V2_ENGINE) running the
// real Codex CLI against the scripted model server (integration/model), inside a private network
// namespace (scripts/realt3.sh). The engine takes seconds to start, so one engine
// serves the whole file, in order: pairing, nesting and the turn scenarios first (they leave threads
// in every state), then about 30 threads, a project created while the fleet watches, a kill and
// restart, a freeze and thaw (each counting rows before and after), revocation last.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentDetail } from "../../shared/bridge/contract";
import type { Delivery, DeliveryState } from "../../shared/fleet/delivery";
import type { FleetServiceOptions } from "../../electron/fleet/service";
import { defaultClientLabel } from "../../electron/fleet/t3/client";
import {
  FAST,
  type Fleet,
  agent,
  clientLabelOf,
  deliveryStates,
  env,
  keyOf,
  recoverServer,
  removals,
  revokedSessionMakesNoRetryStorm,
  rows,
  startFleet as startPairedFleet,
  statusHistory as history,
  until,
} from "./fleet.testkit";
import { PLAIN_REPLY, SHELL_MARKER } from "../model/script";
import { ScriptedModelServer } from "../model/scripted-model-server";
import { RealT3Server, V2_ENGINE } from "./harness.testkit";
import { T3V2Operator, type V2Projection } from "./operator-v2.testkit";

const REPLY = PLAIN_REPLY;
/** The engine of the restart and freeze scenarios holds about this many threads (as in the field report). */
const THREADS_ON_ENGINE = 30;

let model: ScriptedModelServer;
let server: RealT3Server;
let operator: T3V2Operator;
let projectId: string;
let parentId: string;
let fleet: Fleet;
const cleanups: (() => unknown)[] = [];

/** A delivery's states so far and the fleet's reason, for failure messages. */
const shown = (commandId: string) =>
  `shown ${deliveryStates(fleet, commandId).join(" → ")}, reason ${JSON.stringify(fleet.service.delivery(commandId)?.reason ?? null)}`;
const row = (threadId: string) => `shown ${agent(fleet, threadId)?.status} (${JSON.stringify(agent(fleet, threadId)?.reason ?? null)})`;

const startFleet = (options: Partial<FleetServiceOptions>, pairingBaseUrl = server.baseUrl) => startPairedFleet(server, options, cleanups, pairingBaseUrl);
const statusHistory = (target: Fleet, threadId: string) => history(target, threadId, cleanups);

/**
 * Resolves once the fleet has handled everything the engine sent on its shell stream so far: the
 * engine sends a subscription's items in order, so a thread created now reaches the fleet after them.
 */
async function caughtUp(target: Fleet, what: string): Promise<string> {
  const sentinel = await operator.createThread(projectId, `Sentinel after ${what}`);
  await until(target, () => agent(target, sentinel) !== undefined, `a thread created after ${what}`, 40_000);
  return keyOf(target, sentinel);
}

async function newThread(title: string, runtimeMode: "full-access" | "approval-required" = "full-access"): Promise<string> {
  const id = await operator.createThread(projectId, title, runtimeMode);
  await until(fleet, () => agent(fleet, id) !== undefined, `${title} in the fleet`);
  return id;
}

/** Statuses of a thread whose run is over. */
const ENDED: string[] = ["idle", "failed", "interrupted"];

const userMessages = (projection: V2Projection, text: string) => projection.messages.filter((message) => message.role === "user" && message.text === text);
const assistantTexts = (projection: V2Projection) => projection.messages.filter((message) => message.role === "assistant").map((message) => message.text);

/** A thread whose first run is running on the engine, as the fleet sees it (the scripted model streams for about 8 s). */
async function runningThread(title: string): Promise<{ threadId: string; key: string; runId: string }> {
  const threadId = await newThread(title);
  await operator.send(threadId, "a slow job, take your time");
  await until(fleet, () => agent(fleet, threadId)?.status === "running" && agent(fleet, threadId)?.activeRunId != null, `${title} running`);
  return { threadId, key: keyOf(fleet, threadId), runId: agent(fleet, threadId)!.activeRunId! };
}

beforeAll(async () => {
  // Fails (never skips) when the engine or its Node is missing or the engine cannot start.
  model = await ScriptedModelServer.start();
  server = await RealT3Server.start({ kind: V2_ENGINE, harnesses: { names: ["codex"], modelUrl: model.url } });
  operator = await T3V2Operator.start(server);
  projectId = await operator.createProject("Fleet project");
  parentId = await operator.createThread(projectId, "Planner");
}, 180_000);

afterAll(async () => {
  operator?.close();
  while (cleanups.length) await cleanups.pop()!();
  await server?.stop();
  await model?.close();
}, 30_000);

afterEach(() => recoverServer(server));

describe("the fleet against T3's real V2 engine (protocol 2)", () => {
  it("pairs by link and names itself to T3", async () => {
    fleet = await startFleet(FAST);
    const descriptor = await server.descriptor();
    expect(descriptor.orchestrationProtocolVersion).toBe(2);
    expect(fleet.environmentId).toBe(descriptor.environmentId);
    expect(env(fleet)).toMatchObject({ serverVersion: V2_ENGINE.serverVersion, readOnly: false });
    const sessions = await server.sessions();
    expect(sessions.map(clientLabelOf)).toContain(defaultClientLabel());
  });

  it("follows a live turn starting → running → idle, and shows the reply the engine stored", async () => {
    await until(fleet, () => agent(fleet, parentId) !== undefined, "the parent thread");
    const history = statusHistory(fleet, parentId);
    await operator.send(parentId, "say hello");
    await until(fleet, () => history().includes("running"), "running");
    await until(fleet, () => agent(fleet, parentId)?.status === "idle" && history().includes("running"), "idle after the run");
    // Between its provider turn and completion the engine's run is `waiting` (capturing checkpoints): shown as such, never idle before.
    expect(
      history()
        .slice(history().indexOf("running"))
        .filter((status) => status !== "waiting"),
    ).toEqual(["running", "idle"]);

    const key = keyOf(fleet, parentId);
    await fleet.service.request("agent.open", { key });
    const stored = assistantTexts(await operator.projection(parentId));
    expect(stored).toEqual([REPLY]);
    const replies = (detail: AgentDetail) =>
      detail.items.flatMap((item) => (item.type === "message" && item.role === "assistant" && !item.streaming ? [item.text] : []));
    await until(fleet, () => replies(fleet.service.detail(key)).length > 0, "the reply in the transcript");
    expect(replies(fleet.service.detail(key))).toEqual(stored);
    await fleet.service.request("agent.close", { key });
  });

  it("nests a fork under the thread it was forked from (lineage, not the id)", async () => {
    const forkId = await operator.fork(parentId, "Planner's fork");
    await until(fleet, () => agent(fleet, forkId) !== undefined, "the fork in the fleet");
    expect(agent(fleet, forkId)).toMatchObject({ parentThreadId: parentId, relationship: "fork", orphaned: false, title: "Planner's fork" });
    expect(agent(fleet, parentId)).toMatchObject({ parentThreadId: null });
    expect((await operator.projection(forkId)).thread.lineage).toMatchObject({ parentThreadId: parentId, relationshipToParent: "fork" });
  });

  it("shows a subagent the engine delegates from a running run on its parent (the engine keeps the child thread out of its shell)", async () => {
    const { threadId, key, runId } = await runningThread("Delegating");
    await fleet.service.request("agent.open", { key });
    const run = (await operator.projection(threadId)).runs.find((entry) => entry.id === runId)!;
    await operator.delegate(threadId, runId, run.rootNodeId, "Write the summary", "Summary");
    const subagent = (await operator.projection(threadId)).subagents[0]!;
    expect(subagent).toMatchObject({ title: "Summary", childThreadId: expect.any(String) });
    await until(
      fleet,
      () => agent(fleet, threadId)!.subagents.some((entry) => entry.title === "Summary"),
      () => `the subagent on its parent (shown ${JSON.stringify(agent(fleet, threadId)?.subagents)})`,
    );
    expect(agent(fleet, threadId)!.subagents.find((entry) => entry.title === "Summary")).toMatchObject({ childThreadId: subagent.childThreadId });
    // Its child thread is not in the engine's shell, so it has no row of its own.
    expect((await operator.shell()).threads.map((thread) => thread.id)).not.toContain(subagent.childThreadId);
    expect(agent(fleet, subagent.childThreadId)).toBeUndefined();
    await fleet.service.request("agent.close", { key });
  });

  it("delivers a message to an idle thread exactly once: accepted → delivered → answered, one user message on the engine", async () => {
    const threadId = await newThread("Messaged");
    const key = keyOf(fleet, threadId);
    const history = statusHistory(fleet, threadId);
    // A thread the engine just created may pass through another status before it is idle; a message is offered as a new turn then.
    await until(
      fleet,
      () => fleet.service.intent(key).kind === "new-turn",
      () => `a new turn offered (offered ${JSON.stringify(fleet.service.intent(key))}, shown ${history().join(" → ")})`,
    );
    const text = "please report, once";
    const delivery = (await fleet.service.request("agent.send", { key, text, expectedIntent: "new-turn" })) as Delivery;
    await until(
      fleet,
      () => fleet.service.delivery(delivery.commandId)?.state === "answered",
      () => `answered (${shown(delivery.commandId)})`,
    );
    // In this order, ending answered. The engine streams the message before it answers the dispatch, so "accepted"
    // may be skipped; an engine stalled by a loaded machine may answer the dispatch late ("uncertain" until seen).
    const inOrder: DeliveryState[] = ["sending", "accepted", "uncertain", "delivered", "answered"];
    const states = deliveryStates(fleet, delivery.commandId);
    expect(inOrder.filter((state) => states.includes(state))).toEqual(states);
    expect(states.at(-1)).toBe("answered");
    const stored = await operator.projection(threadId);
    expect(userMessages(stored, text)).toHaveLength(1);
    expect(fleet.service.delivery(delivery.commandId)!.observed).toMatchObject({ outcome: "new-turn", turnId: userMessages(stored, text)[0]!.runId });
  });

  it("steers a running Codex turn: the message joins the running run, the model answers it in that run, one copy on the engine", async () => {
    const { threadId, key, runId } = await runningThread("Steered");
    await fleet.service.request("agent.open", { key });
    // The fleet learns from the thread's provider session that this Codex can steer.
    await until(
      fleet,
      () => fleet.service.intent(key).kind === "steer",
      () => `steer offered (offered ${JSON.stringify(fleet.service.intent(key))})`,
    );
    const text = "steer: also mention the tests";
    const delivery = (await fleet.service.request("agent.send", { key, text, expectedIntent: "steer" })) as Delivery;
    await until(
      fleet,
      () => ["delivered", "answered"].includes(fleet.service.delivery(delivery.commandId)!.state),
      () => `delivered (${shown(delivery.commandId)})`,
    );
    expect(fleet.service.delivery(delivery.commandId)!.observed).toMatchObject({ outcome: "steered", turnId: runId });
    await until(fleet, () => agent(fleet, threadId)?.status === "idle", "the run ended");
    const stored = await operator.projection(threadId);
    expect(userMessages(stored, text)).toHaveLength(1);
    expect(userMessages(stored, text)[0]!.runId).toBe(runId);
    expect(stored.runs.map((run) => run.id)).toEqual([runId]);
    expect(assistantTexts(stored).join(" ")).toContain(`Received: ${text}`);
    // Codex cut the reply it was streaming and asked the model again with the message.
    expect(
      model.requests
        .filter((request) => request.api !== null && request.text.includes(text))
        .at(-1)!
        .conversation!.userTexts.slice(-2),
    ).toEqual(["a slow job, take your time", text]);
    await fleet.service.request("agent.close", { key });
  });

  it("queues a message behind a running turn: a second run that starts after the first, one copy on the engine", async () => {
    const { threadId, key, runId } = await runningThread("Queued");
    const intent = fleet.service.intent(key, "queue");
    expect(intent.kind).toBe("queue");
    const text = "and then the next thing";
    const delivery = (await fleet.service.request("agent.send", { key, text, expectedIntent: "queue" })) as Delivery;
    await until(
      fleet,
      () => fleet.service.delivery(delivery.commandId)?.state === "answered",
      () => `answered (${shown(delivery.commandId)})`,
      40_000,
    );
    const stored = await operator.projection(threadId);
    expect(userMessages(stored, text)).toHaveLength(1);
    const queuedRun = stored.runs.find((run) => run.id === userMessages(stored, text)[0]!.runId)!;
    expect(queuedRun.id).not.toBe(runId);
    expect(queuedRun.ordinal).toBe(2);
    expect(stored.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(fleet.service.delivery(delivery.commandId)!.observed?.turnId).toBe(queuedRun.id);
  });

  it("answers an approval with each decision it offers, and Codex carries it out (the command's output reaches the model only when allowed)", async () => {
    const offered: string[] = [];
    const ask = async (title: string) => {
      const threadId = await newThread(title, "approval-required");
      await operator.send(threadId, `run the approval command (${title})`);
      await until(fleet, () => agent(fleet, threadId)?.status === "needs-approval" && agent(fleet, threadId)!.pending.length === 1, `${title} needs approval`);
      const pending = agent(fleet, threadId)!.pending[0]!;
      if (pending.kind !== "approval") throw new Error(`expected an approval, got ${pending.kind}`);
      return { threadId, key: keyOf(fleet, threadId), requestId: pending.requestId, decisions: pending.decisions.map((option) => option.decision) };
    };
    const first = await ask("Careful 1");
    offered.push(...first.decisions);
    expect(offered.length).toBeGreaterThan(0);
    expect(fleet.service.model.counts().needsYou).toBeGreaterThanOrEqual(1);
    for (const [index, decision] of offered.entries()) {
      const request = index === 0 ? first : await ask(`Careful ${index + 1}`);
      const delivery = (await fleet.service.request("agent.respondApproval", { key: request.key, requestId: request.requestId, decision })) as Delivery;
      await until(fleet, () => fleet.service.delivery(delivery.commandId)?.state === "delivered", `${decision} delivered`);
      await until(
        fleet,
        () => agent(fleet, request.threadId)?.pending.length === 0 && ENDED.includes(agent(fleet, request.threadId)!.status),
        () => `${decision}: the request answered and the run over (${row(request.threadId)})`,
      );
      const stored = await operator.projection(request.threadId);
      expect(stored.runtimeRequests.map((entry) => entry.status)).toEqual(["resolved"]);
      const ran = model.requests.some(
        (seen) =>
          seen.text.includes(`(Careful ${index + 1})`) && seen.conversation?.endsWithToolResult === true && seen.conversation.toolResult.includes(SHELL_MARKER),
      );
      expect(ran, `the command ran after ${decision}`).toBe(decision === "accept" || decision === "acceptForSession");
    }
  });

  it("interrupts a running turn: shown interrupted, and the engine's run is interrupted", async () => {
    const { threadId, key, runId } = await runningThread("Interrupted");
    const delivery = (await fleet.service.request("agent.interrupt", { key })) as Delivery;
    await until(
      fleet,
      () => fleet.service.delivery(delivery.commandId)?.state === "delivered",
      () => `interrupt delivered (${shown(delivery.commandId)})`,
    );
    await until(fleet, () => agent(fleet, threadId)?.status !== "running", "the run ended");
    expect(agent(fleet, threadId)!.status).toBe("interrupted");
    expect((await operator.projection(threadId)).runs.find((run) => run.id === runId)?.status).toBe("interrupted");
  });

  it("a failing turn shows failed with Codex's reason on the row, and counts", async () => {
    // Not a fork: a fork's first run stays "starting" on the engine with the Codex stand-in (no thread/fork).
    const failingId = await newThread("Failing worker");
    const before = fleet.service.model.counts();
    await operator.send(failingId, "this will fail");
    await until(
      fleet,
      () => agent(fleet, failingId)?.status === "failed",
      () => `failed (${row(failingId)})`,
    ).catch(async (error: Error) => {
      const projection = await operator.projection(failingId);
      throw new Error(
        `${error.message}; the engine's runs: ${JSON.stringify(projection.runs.map((run) => run.status))}, shell row: ${JSON.stringify((await operator.shell()).threads.find((thread) => thread.id === failingId)?.status)}`,
      );
    });
    const after = fleet.service.model.counts();
    expect(after.byStatus.failed ?? 0).toBe((before.byStatus.failed ?? 0) + 1);
    // The engine's shell row has no lastError for a failed turn: the reason is only in the thread's error item.
    await until(
      fleet,
      () => (agent(fleet, failingId)?.reason ?? "") !== "",
      () => `the reason on the row (shown ${JSON.stringify(agent(fleet, failingId)?.reason)})`,
      10_000,
    );
    const stored = await operator.projection(failingId);
    // Codex passes the model's own error body on: the scripted model's message is in both.
    expect(agent(fleet, failingId)!.reason).toContain("Scripted model failure");
    expect(JSON.stringify(stored.turnItems.find((item) => item.type === "error"))).toContain("Scripted model failure");
  });

  it("snoozes a failed thread in the engine, reads its wake time back, and the engine wakes it on new activity; a blocked thread stays the window's, with the engine's refusal", async () => {
    const failedId = await newThread("Failing, to snooze");
    await operator.send(failedId, "this will fail");
    await until(
      fleet,
      () => agent(fleet, failedId)?.status === "failed",
      () => `failed (${row(failedId)})`,
    );
    expect(agent(fleet, failedId)!.capabilities.snooze).toBe(true); // the engine advertises threadSnooze
    const key = keyOf(fleet, failedId);
    const wake = new Date(Date.now() + 3_600_000).toISOString();
    expect(await fleet.service.request("agent.snooze", { key, until: wake })).toEqual({ key, onServer: "snoozed", until: wake, note: null });
    const storedRow = async (threadId: string) => (await operator.shell()).threads.find((thread) => thread.id === threadId)!;
    expect(Date.parse(String((await storedRow(failedId)).snoozedUntil))).toBe(Date.parse(wake));
    await until(fleet, () => agent(fleet, failedId)?.snoozedUntil != null, "the engine's wake time in the facts");
    expect(Date.parse(agent(fleet, failedId)!.snoozedUntil!)).toBe(Date.parse(wake));
    // A new message is activity: the engine wakes the thread itself.
    await operator.send(failedId, "say hello");
    await until(fleet, () => agent(fleet, failedId)?.snoozedUntil === null, "awake after the new message", 60_000).catch(async (error: Error) => {
      throw new Error(
        `${error.message}; the engine's row: snoozedUntil ${JSON.stringify((await storedRow(failedId)).snoozedUntil)}, status ${(await storedRow(failedId)).status}; the fleet: ${env(fleet)?.connection.phase}, ${row(failedId)}`,
      );
    });
    expect((await storedRow(failedId)).snoozedUntil ?? null).toBeNull();

    const blockedId = await newThread("Careful, to snooze", "approval-required");
    await operator.send(blockedId, "run the approval command");
    await until(fleet, () => agent(fleet, blockedId)?.status === "needs-approval" && agent(fleet, blockedId)!.pending.length === 1, "needs approval");
    const blockedKey = keyOf(fleet, blockedId);
    const refused = await fleet.service.request("agent.snooze", { key: blockedKey, until: wake });
    expect(refused).toMatchObject({
      key: blockedKey,
      onServer: "local",
      note: expect.stringMatching(/^T3 refused it: .*pending approval or user-input request/),
    });
    expect((await storedRow(blockedId)).snoozedUntil ?? null).toBeNull();
    const requestId = agent(fleet, blockedId)!.pending[0]!.requestId;
    await fleet.service.request("agent.respondApproval", { key: blockedKey, requestId, decision: "decline" });
    await until(
      fleet,
      () => agent(fleet, blockedId)?.pending.length === 0 && ENDED.includes(agent(fleet, blockedId)!.status),
      () => `answered and over (${row(blockedId)})`,
    );
  });

  it(`holds ${THREADS_ON_ENGINE} threads, and creating a project while the fleet watches changes no row`, async () => {
    for (let index = rows(fleet).length; index < THREADS_ON_ENGINE; index++) await operator.createThread(projectId, `Idle ${index}`);
    const engineRows = (await operator.shell()).threads.length;
    expect(engineRows).toBeGreaterThanOrEqual(THREADS_ON_ENGINE);
    await until(
      fleet,
      () => rows(fleet).length === engineRows,
      () => `${engineRows} rows (shown ${rows(fleet).length})`,
    );
    const before = rows(fleet)
      .map((view) => view.key)
      .sort();
    const removed = removals(fleet, cleanups);
    const watch = await operator.watchShell();
    cleanups.push(() => watch.stop());
    const from = watch.items.length;
    const watchedProject = await operator.createProject("Watched project");
    // The engine follows a project's creation with a shell snapshot of metadata only (threads: []).
    await watch.until((item) => item.kind === "project.updated" && item.projectId === watchedProject, "the new project on the shell stream", from);
    await watch.until((item) => item.kind === "snapshot" && item.threads === 0, "the engine's metadata-only snapshot after the project", from);
    const sentinel = await caughtUp(fleet, "the project");
    expect(removed()).toEqual([]);
    expect(
      rows(fleet)
        .map((view) => view.key)
        .sort(),
    ).toEqual([...before, sentinel].sort());
  });

  it("SIGKILL → offline → restart → every row back, none removed on the way", async () => {
    await until(fleet, () => env(fleet)?.connection.phase === "online", "online");
    const before = rows(fleet)
      .map((view) => view.key)
      .sort();
    expect(before.length).toBeGreaterThanOrEqual(THREADS_ON_ENGINE);
    const removed = removals(fleet, cleanups);
    await server.kill();
    await until(fleet, () => env(fleet)?.connection.phase === "offline", "offline");
    const offline = env(fleet)!.connection;
    expect(offline.phase === "offline" && offline.lastConfirmedAt !== null).toBe(true);
    expect(rows(fleet).every((view) => view.status === "unknown")).toBe(true);
    await server.restart();
    await until(fleet, () => env(fleet)?.connection.phase === "online", "online after the restart", 40_000);
    expect(env(fleet)!.environmentId).toBe(fleet.environmentId);
    const sentinel = await caughtUp(fleet, "the restart");
    expect(removed()).toEqual([]);
    expect(
      rows(fleet)
        .map((view) => view.key)
        .sort(),
    ).toEqual([...before, sentinel].sort());
    expect(rows(fleet).filter((view) => view.status === "unknown")).toEqual([]);
  });

  it("SIGSTOP → offline → SIGCONT → every row back, none removed on the way", async () => {
    // A fleet of its own, which starts from the engine's full shell (whatever the restart left in the main fleet).
    const frozen = await startFleet(FAST);
    const engineRows = (await operator.shell()).threads.length;
    await until(
      frozen,
      () => rows(frozen).length === engineRows,
      () => `${engineRows} rows (shown ${rows(frozen).length})`,
    );
    const before = rows(frozen)
      .map((view) => view.key)
      .sort();
    expect(before.length).toBeGreaterThanOrEqual(THREADS_ON_ENGINE);
    const removed = removals(frozen, cleanups);
    server.freeze();
    await until(frozen, () => env(frozen)?.connection.phase === "offline", "offline", 30_000);
    // Noticed by the heartbeat (the socket of a frozen process stays open).
    expect(env(frozen)!.connection).toMatchObject({ phase: "offline", error: "The server stopped answering pings." });
    expect(rows(frozen).every((view) => view.status === "unknown")).toBe(true);
    server.thaw();
    await until(frozen, () => env(frozen)?.connection.phase === "online", "online after SIGCONT", 30_000);
    const sentinel = await caughtUp(frozen, "the thaw");
    expect(removed()).toEqual([]);
    expect(
      rows(frozen)
        .map((view) => view.key)
        .sort(),
    ).toEqual([...before, sentinel].sort());
    expect(rows(frozen).filter((view) => view.status === "unknown")).toEqual([]);
  });

  it("a revoked session is unauthorized by the periodic re-check while its socket stays open, then makes no retry storm", async () => {
    await revokedSessionMakesNoRetryStorm(server, fleet, parentId, cleanups);
    // The engine took 20-45 s (more on a loaded machine) to refuse a session revoked by its CLI.
  }, 180_000);
});

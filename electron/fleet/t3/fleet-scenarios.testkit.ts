// One list of fleet scenarios for both protocols: the union of what the real-server suites held the
// fleet service to (integration/realt3/fleet.real.test.ts against T3 0.0.42, and the withdrawn
// fleet.v2.real.test.ts against T3's V2 engine, commit 5f8c64f), played against a simulated server
// (server-under-test.testkit.ts). Each scenario asserts what the fleet shows afterwards against what
// the server stored. The scenarios share one server and one paired fleet, in order, as the real suites
// did; a scenario a protocol does not have is named in NOT_PLAYED with the reason (no skips).
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { AgentDetail } from "../../../shared/bridge/contract";
import type { Delivery, DeliveryState } from "../../../shared/fleet/delivery";
import { DEFAULT_TIMING } from "../supervisor";
import { TruthWatch } from "../truth-watch.testkit";
import { defaultClientLabel } from "./client";
import {
  type Fleet,
  SCENARIO_TIMING,
  agent,
  deliveryStates,
  env,
  keyOf,
  phases,
  removals,
  rows,
  startFleet,
  statusHistory,
  until,
} from "./scenario-fleet.testkit";
import { Protocol2Machine, type Provider, type ServerUnderTest, type StoredThread } from "./server-under-test.testkit";

export interface ScenarioContext {
  server: ServerUnderTest;
  /** The fleet paired before the first scenario, kept for all of them. */
  fleet: Fleet;
  /** Threads a scenario archived or deleted: the fleet keeps their rows a while by design (shared/fleet/model.ts, LEFT_ROWS_KEPT_MS). */
  left: Set<string>;
  /** The truth oracle's record of `fleet` (issue 39). */
  truth: TruthWatch;
}

/** After a step: what the server stored of every thread against what `fleet` says of it, once both have settled (issue 39). */
const truthful = ({ server, fleet, truth }: ScenarioContext, step: string) =>
  truth.check(server.environmentId, () => server.truth(rows(fleet).map((view) => view.threadId)), step);

export interface FleetScenario {
  name: string;
  play(context: ScenarioContext): Promise<void>;
}

/** How many threads the server holds in the kill and freeze scenarios (as in the field report the real suite followed). */
const THREADS_ON_SERVER = 30;
/** Statuses of a thread whose turn is over. */
const ENDED: string[] = ["idle", "failed", "interrupted"];
/**
 * "No retry storm" is the absence of requests, so it is watched for a bounded window: four of the
 * longest backoffs, in which any retry loop would have sent several.
 */
const NO_RETRY_WINDOW_MS = 4 * SCENARIO_TIMING.timing.maxBackoffMs;

const userMessages = (stored: StoredThread, text: string) => stored.messages.filter((message) => message.role === "user" && message.text === text);
const assistantTexts = (stored: StoredThread) => stored.messages.filter((message) => message.role === "assistant").map((message) => message.text);

async function newThread(
  { server, fleet }: ScenarioContext,
  title: string,
  options?: { provider?: Provider; runtimeMode?: "full-access" | "approval-required" },
): Promise<string> {
  const threadId = await server.createThread(title, options);
  await until(fleet, () => agent(fleet, threadId) !== undefined, `${title} in the fleet`);
  return threadId;
}

/** A thread whose turn runs until released (`#hold`), as the fleet sees it. */
async function runningThread(context: ScenarioContext, title: string, provider: Provider = "codex") {
  const { server, fleet } = context;
  const threadId = await newThread(context, title, { provider });
  await server.send(threadId, "#hold a slow job, take your time");
  await until(fleet, () => agent(fleet, threadId)?.status === "running" && agent(fleet, threadId)?.activeRunId != null, `${title} running`);
  return { threadId, key: keyOf(fleet, threadId), runId: agent(fleet, threadId)!.activeRunId! };
}

/** A thread with one answered turn (what a fork is taken from), sent through the fleet. */
async function threadWithATurn(context: ScenarioContext, title: string): Promise<string> {
  const { fleet } = context;
  const threadId = await newThread(context, title);
  const key = keyOf(fleet, threadId);
  await until(fleet, () => fleet.service.intent(key).kind === "new-turn", `a new turn offered to ${title}`);
  const delivery = await send(fleet, key, "say hello", "new-turn");
  await until(fleet, () => reached(fleet, delivery, ["answered"]) && agent(fleet, threadId)?.status === "idle", `${title} answered`);
  return threadId;
}

/** Resolves once the fleet has handled what the server sent so far: a thread created now reaches it after all of that. */
async function caughtUp({ server }: ScenarioContext, fleet: Fleet, what: string): Promise<string> {
  const sentinel = await server.createThread(`Sentinel after ${what}`);
  await until(fleet, () => agent(fleet, sentinel) !== undefined, `a thread created after ${what}`);
  return keyOf(fleet, sentinel);
}

/** The keys of the fleet's rows of active threads (not those of threads that left: they stay a while, shown as such). */
const listedRowsOf = ({ left }: ScenarioContext, fleet: Fleet) =>
  rows(fleet)
    .filter((view) => view.lifecycle === "active" && !left.has(view.threadId))
    .map((view) => view.key)
    .sort();

/** Until the fleet shows a row for every thread the server lists, and no other. */
async function everyRowShown(context: ScenarioContext, fleet: Fleet): Promise<string[]> {
  const listed = (await context.server.threadIds()).map((threadId) => keyOf(fleet, threadId)).sort();
  await until(
    fleet,
    () => JSON.stringify(listedRowsOf(context, fleet)) === JSON.stringify(listed),
    `${listed.length} rows`,
    () => ({
      missing: listed.filter((key) => !listedRowsOf(context, fleet).includes(key)),
      extra: listedRowsOf(context, fleet).filter((key) => !listed.includes(key)),
    }),
  );
  return listed;
}

/** After `what`: the fleet is online and shows every row it showed `before` (none removed, none unknown), and a thread created now. */
async function everyRowBack(context: ScenarioContext, fleet: Fleet, before: string[], removed: () => string[], what: string): Promise<void> {
  await until(fleet, () => env(fleet)?.connection.phase === "online", `online after ${what}`);
  const sentinel = await caughtUp(context, fleet, what);
  expect(removed()).toEqual([]);
  expect(listedRowsOf(context, fleet)).toEqual([...before, sentinel].sort());
  expect(rows(fleet).filter((view) => view.status === "unknown")).toEqual([]);
}

async function send(fleet: Fleet, key: string, text: string, expectedIntent: string): Promise<Delivery> {
  return (await fleet.service.request("agent.send", { key, text, expectedIntent })) as Delivery;
}

const reached = (fleet: Fleet, delivery: Delivery, states: DeliveryState[]) =>
  states.includes(fleet.service.delivery(delivery.commandId)?.state as DeliveryState);

/** A message stays with the server across a freeze and a kill only if it was sent: kill, then start, keeping a frozen server's socket data. */
async function restartFrozen(server: ServerUnderTest): Promise<void> {
  server.thaw();
  await server.kill();
  await server.restart();
}

export const FLEET_SCENARIOS: FleetScenario[] = [
  {
    name: "pairs by link and names itself to T3",
    async play({ server }) {
      const fleet = await startFleet(server);
      expect(fleet.environmentId).toBe(server.environmentId);
      expect(env(fleet)).toMatchObject({ serverVersion: server.serverVersion, protocol: server.protocol, readOnly: false });
      expect((await server.sessions()).map((session) => session.label)).toContain(defaultClientLabel());
    },
  },
  {
    name: "follows a live turn starting → running → idle, and shows the reply the server stored",
    async play(context) {
      const { server, fleet } = context;
      const threadId = await newThread(context, "Live turn");
      const history = statusHistory(fleet, threadId);
      // Held until the fleet shows it running: a simulated turn is over within a few ticks.
      await server.send(threadId, "#hold say hello");
      await until(fleet, () => agent(fleet, threadId)?.status === "running", "running");
      await truthful(context, "mid-turn");
      await server.release(threadId);
      await until(fleet, () => agent(fleet, threadId)?.status === "idle", "idle after the turn");
      await truthful(context, "the turn over");
      // Never idle before the turn ends; a protocol-2 run is `waiting` while it captures checkpoints.
      const shown = history().filter((status) => status !== "waiting");
      expect((["starting", "running", "idle"] as const).filter((status) => shown.includes(status))).toEqual(shown);

      const key = keyOf(fleet, threadId);
      await fleet.service.request("agent.open", { key });
      const stored = assistantTexts(await server.stored(threadId));
      expect(stored).toHaveLength(1);
      const replies = (detail: AgentDetail) =>
        detail.items.flatMap((item) => (item.type === "message" && item.role === "assistant" && !item.streaming ? [item.text] : []));
      await until(fleet, () => replies(fleet.service.detail(key)).length > 0, "the reply in the transcript");
      expect(replies(fleet.service.detail(key))).toEqual(stored);
      await fleet.service.request("agent.close", { key });
    },
  },
  {
    name: "shows a child sub.<parent>.<suffix> nested under its parent",
    async play(context) {
      const { server, fleet } = context;
      const parentId = await newThread(context, "Planner");
      const childId = await server.createChild(parentId, "Worker");
      expect(childId).toBe(`sub.${parentId}.${childId.split(".").at(-1)}`);
      await until(fleet, () => agent(fleet, childId) !== undefined, "the child");
      expect(agent(fleet, childId)).toMatchObject({ parentThreadId: parentId, relationship: "child-id", orphaned: false, title: "Worker", status: "idle" });
      expect(agent(fleet, parentId)).toMatchObject({ parentThreadId: null, status: "idle" });
    },
  },
  {
    name: "nests a fork under the thread it was forked from (lineage, not the id)",
    async play(context) {
      const { server, fleet } = context;
      const parentId = await threadWithATurn(context, "Planner");
      const forkId = await server.createChild(parentId, "Planner's fork");
      await until(fleet, () => agent(fleet, forkId) !== undefined, "the fork in the fleet");
      expect(agent(fleet, forkId)).toMatchObject({ parentThreadId: parentId, relationship: "fork", orphaned: false, title: "Planner's fork" });
      expect(agent(fleet, parentId)).toMatchObject({ parentThreadId: null });
      if (!(server instanceof Protocol2Machine)) throw new Error("forks are protocol 2's");
      expect((await server.operator.projection(forkId)).thread.lineage).toMatchObject({ parentThreadId: parentId, relationshipToParent: "fork" });
    },
  },
  {
    name: "shows a subagent delegated from a running turn on its parent; its child thread is not in the server's shell and has no row",
    async play(context) {
      const { server, fleet } = context;
      if (!(server instanceof Protocol2Machine)) throw new Error("delegated tasks are protocol 2's");
      const { threadId, key, runId } = await runningThread(context, "Delegating");
      await fleet.service.request("agent.open", { key });
      const run = (await server.operator.projection(threadId)).runs.find((entry) => entry.id === runId)!;
      await server.operator.delegate(threadId, runId, run.rootNodeId, "Write the summary", "Summary");
      const subagent = (await server.operator.projection(threadId)).subagents[0]!;
      expect(subagent).toMatchObject({ title: "Summary", childThreadId: expect.any(String) });
      await until(
        fleet,
        () => agent(fleet, threadId)!.subagents.some((entry) => entry.title === "Summary"),
        "the subagent on its parent",
        () => agent(fleet, threadId)?.subagents,
      );
      expect(agent(fleet, threadId)!.subagents.find((entry) => entry.title === "Summary")).toMatchObject({ childThreadId: subagent.childThreadId });
      // Its child thread is not in the server's shell, so it has no row of its own.
      expect((await server.operator.shell()).threads.map((thread) => thread.id)).not.toContain(subagent.childThreadId);
      expect(agent(fleet, subagent.childThreadId)).toBeUndefined();
      await server.release(threadId);
      await until(fleet, () => agent(fleet, threadId)?.status === "idle", "the parent's turn over");
      expect(agent(fleet, subagent.childThreadId)).toBeUndefined();
      await fleet.service.request("agent.close", { key });
    },
  },
  {
    name: "delivers a message to an idle thread exactly once: accepted → delivered → answered, one user message stored",
    async play(context) {
      const { server, fleet } = context;
      const threadId = await newThread(context, "Messaged");
      const key = keyOf(fleet, threadId);
      await until(fleet, () => fleet.service.intent(key).kind === "new-turn", "a new turn offered");
      const text = "please report, once";
      const delivery = await send(fleet, key, text, "new-turn");
      await until(fleet, () => reached(fleet, delivery, ["answered"]), "answered");
      // In this order, ending answered; the server may report the message and its answer at once.
      const states = deliveryStates(fleet, delivery.commandId);
      expect((["sending", "accepted", "delivered", "answered"] as DeliveryState[]).filter((state) => states.includes(state))).toEqual(states);
      expect(states.at(-1)).toBe("answered");
      const stored = await server.stored(threadId);
      expect(userMessages(stored, text)).toHaveLength(1);
      expect(stored.turns).toHaveLength(1);
      expect(fleet.service.delivery(delivery.commandId)!.observed).toMatchObject({ outcome: "new-turn", turnId: stored.turns[0] });
    },
  },
  {
    name: "steers a running turn: the message joins it and is answered in it, one copy stored",
    async play(context) {
      const { server, fleet } = context;
      const { threadId, key, runId } = await runningThread(context, "Steered");
      await fleet.service.request("agent.open", { key });
      await until(fleet, () => fleet.service.intent(key).kind === "steer", "steer offered");
      const text = "steer: also mention the tests";
      const delivery = await send(fleet, key, text, "steer");
      await until(fleet, () => reached(fleet, delivery, ["delivered", "answered"]), "delivered");
      await truthful(context, "the steer delivered mid-turn");
      await server.release(threadId);
      await until(fleet, () => reached(fleet, delivery, ["answered"]) && agent(fleet, threadId)?.status === "idle", "answered, the turn over");
      expect(fleet.service.delivery(delivery.commandId)!.observed).toMatchObject({ outcome: "steered", turnId: runId });
      const stored = await server.stored(threadId);
      expect(userMessages(stored, text)).toHaveLength(1);
      expect(stored.turns).toEqual([runId]);
      expect(assistantTexts(stored).join(" ")).toContain(`[steered: ${text}]`);
      await fleet.service.request("agent.close", { key });
    },
  },
  {
    name: "queues a message behind a running turn: a second turn that starts after the first, one copy stored",
    async play(context) {
      const { server, fleet } = context;
      const { threadId, key, runId } = await runningThread(context, "Queued", "claudeAgent");
      expect(fleet.service.intent(key, "queue").kind).toBe("queue");
      const text = "and then the next thing";
      const delivery = await send(fleet, key, text, "queue");
      await until(fleet, () => reached(fleet, delivery, ["delivered", "answered"]), "delivered");
      await truthful(context, "a message queued mid-turn");
      await server.release(threadId);
      await until(fleet, () => reached(fleet, delivery, ["answered"]), "answered");
      const stored = await server.stored(threadId);
      expect(userMessages(stored, text)).toHaveLength(1);
      expect(stored.turns).toHaveLength(2);
      expect(stored.turns[0]).toBe(runId);
      expect(stored.lastTurnStatus).toBe("completed");
      expect(fleet.service.delivery(delivery.commandId)!.observed?.turnId).toBe(stored.turns[1]);
    },
  },
  {
    name: "answers an approval with each decision it offers, and the command runs only when allowed",
    async play(context) {
      const { server, fleet } = context;
      const ask = async (title: string) => {
        const threadId = await newThread(context, title, { runtimeMode: "approval-required" });
        await server.send(threadId, `#approval run the approval command (${title})`);
        await until(
          fleet,
          () => agent(fleet, threadId)?.status === "needs-approval" && agent(fleet, threadId)!.pending.length === 1,
          `${title} needs approval`,
        );
        await truthful(context, `${title}: the approval pending`);
        const pending = agent(fleet, threadId)!.pending[0]!;
        if (pending.kind !== "approval") throw new Error(`expected an approval, got ${pending.kind}`);
        return { threadId, key: keyOf(fleet, threadId), requestId: pending.requestId, decisions: pending.decisions.map((option) => option.decision) };
      };
      const first = await ask("Careful 1");
      expect(first.decisions.length).toBeGreaterThan(0);
      expect(fleet.service.model.counts().needsYou).toBeGreaterThanOrEqual(1);
      for (const [index, decision] of first.decisions.entries()) {
        const request = index === 0 ? first : await ask(`Careful ${index + 1}`);
        const delivery = (await fleet.service.request("agent.respondApproval", { key: request.key, requestId: request.requestId, decision })) as Delivery;
        await until(fleet, () => reached(fleet, delivery, ["delivered"]), `${decision} delivered`);
        await until(
          fleet,
          () => agent(fleet, request.threadId)?.pending.length === 0 && ENDED.includes(agent(fleet, request.threadId)!.status),
          `${decision}: the request answered and the turn over`,
        );
        await truthful(context, `${decision}: answered, the turn over`);
        const stored = await server.stored(request.threadId);
        expect(stored.approvals).toHaveLength(1);
        expect(stored.approvals[0]!.settled).toBe(true);
        if (stored.approvals[0]!.decision !== null) expect(stored.approvals[0]!.decision).toBe(decision);
        expect(stored.commandRan, `the command ran after ${decision}`).toBe(decision === "accept" || decision === "acceptForSession");
      }
    },
  },
  {
    name: "interrupts a running turn: shown interrupted, not idle, and the server runs it no more",
    async play(context) {
      const { server, fleet } = context;
      const { threadId, key } = await runningThread(context, "Interrupted");
      const delivery = (await fleet.service.request("agent.interrupt", { key })) as Delivery;
      await until(fleet, () => reached(fleet, delivery, ["delivered"]), "interrupt delivered");
      await until(fleet, () => agent(fleet, threadId)?.status !== "running", "the turn ended");
      expect(agent(fleet, threadId)!.status).toBe("interrupted");
      const stored = await server.stored(threadId);
      expect(stored.active).toBe(false);
      expect(stored.lastTurnStatus).toBe("interrupted");
    },
  },
  {
    name: "a failing child turn shows failed with the server's reason, rolls up to its parent and counts",
    async play(context) {
      const { server, fleet } = context;
      const parentId = await threadWithATurn(context, "Planner of a failure");
      const childId = await server.createChild(parentId, "Failing worker");
      await until(fleet, () => agent(fleet, childId)?.status === "idle", "the child idle");
      const before = fleet.service.model.counts();
      await server.send(childId, "#fail this will fail");
      await until(fleet, () => agent(fleet, childId)?.status === "failed" && (agent(fleet, childId)?.reason ?? "") !== "", "failed, with a reason");
      const stored = await server.stored(childId);
      expect(stored.failure).toEqual(expect.any(String));
      expect(agent(fleet, childId)).toMatchObject({ parentThreadId: parentId, reason: expect.stringContaining(stored.failure!) });
      // Protocol 2's shell row has no error for a failed turn (05-fail.json): the reason is the thread's error item.
      expect((await server.storedRow(childId)).lastError).toBe(server.protocol === 1 ? stored.failure : null);
      expect(fleet.service.model.rollup(fleet.environmentId, parentId)).toBe("failed");
      const after = fleet.service.model.counts();
      expect(after.byStatus.failed ?? 0).toBe((before.byStatus.failed ?? 0) + 1);
      expect(after.needsYou).toBe(before.needsYou + 1);
    },
  },
  {
    name: "snoozes a failed thread in the server, reads its wake time back, and the server wakes it on new activity; a blocked thread's snooze stays the window's, with the server's refusal",
    async play(context) {
      const { server, fleet } = context;
      const failedId = await newThread(context, "Failing, to snooze");
      await server.send(failedId, "#fail this will fail");
      await until(fleet, () => agent(fleet, failedId)?.status === "failed", "failed");
      await truthful(context, "failed, to snooze");
      expect(agent(fleet, failedId)!.capabilities.snooze).toBe(true);
      const key = keyOf(fleet, failedId);
      const wake = new Date(Date.now() + 3_600_000).toISOString();
      expect(await fleet.service.request("agent.snooze", { key, until: wake })).toEqual({ key, onServer: "snoozed", until: wake, note: null });
      expect(Date.parse(String((await server.storedRow(failedId)).snoozedUntil))).toBe(Date.parse(wake));
      await until(fleet, () => agent(fleet, failedId)?.snoozedUntil != null, "the server's wake time in the facts");
      expect(Date.parse(agent(fleet, failedId)!.snoozedUntil!)).toBe(Date.parse(wake));
      // A new message is activity: the server wakes the thread itself.
      await server.send(failedId, "say hello");
      await until(fleet, () => agent(fleet, failedId)?.snoozedUntil === null, "awake after the new message");
      expect((await server.storedRow(failedId)).snoozedUntil).toBeNull();

      const blockedId = await newThread(context, "Careful, to snooze", { runtimeMode: "approval-required" });
      await server.send(blockedId, "#approval run the approval command");
      await until(fleet, () => agent(fleet, blockedId)?.status === "needs-approval" && agent(fleet, blockedId)!.pending.length === 1, "needs approval");
      const blockedKey = keyOf(fleet, blockedId);
      expect(await fleet.service.request("agent.snooze", { key: blockedKey, until: wake })).toMatchObject({
        key: blockedKey,
        onServer: "local",
        note: expect.stringMatching(/^T3 refused it: .*pending approval or user-input request/),
      });
      expect((await server.storedRow(blockedId)).snoozedUntil).toBeNull();
      const requestId = agent(fleet, blockedId)!.pending[0]!.requestId;
      await fleet.service.request("agent.respondApproval", { key: blockedKey, requestId, decision: "decline" });
      await until(fleet, () => agent(fleet, blockedId)?.pending.length === 0 && ENDED.includes(agent(fleet, blockedId)!.status), "answered and over");
    },
  },
  {
    name: "archived and deleted threads are shown as such",
    async play(context) {
      const { server, fleet } = context;
      const archivedId = await newThread(context, "To archive");
      const deletedId = await newThread(context, "To delete");
      context.left.add(archivedId).add(deletedId);
      await server.archive(archivedId);
      await server.delete(deletedId);
      // Protocol 2's shell only says a deleted thread left (thread.removed): the fleet shows it ended, as a thread gone without saying how.
      const deleted = server.protocol === 1 ? { status: "deleted", lifecycle: "deleted" } : { status: "ended", lifecycle: "active" };
      const shown = () => [archivedId, deletedId].map((threadId) => ({ status: agent(fleet, threadId)?.status, lifecycle: agent(fleet, threadId)?.lifecycle }));
      await until(
        fleet,
        () => agent(fleet, archivedId)?.lifecycle === "archived" && agent(fleet, deletedId)?.status === deleted.status,
        "archived and deleted",
        shown,
      );
      expect(shown()[1]).toEqual(deleted);
      expect(agent(fleet, archivedId)!.status).not.toBe("deleted");
      const listed = await server.threadIds();
      expect(listed).not.toContain(archivedId);
      expect(listed).not.toContain(deletedId);
    },
  },
  {
    name: `holds ${THREADS_ON_SERVER} threads, and creating a project while the fleet watches changes no row`,
    async play(context) {
      const { server, fleet } = context;
      for (let count = (await server.threadIds()).length; count < THREADS_ON_SERVER; count++) await server.createThread(`Idle ${count}`);
      const before = await everyRowShown(context, fleet);
      expect(before.length).toBeGreaterThanOrEqual(THREADS_ON_SERVER);
      const removed = removals(fleet);
      if (server instanceof Protocol2Machine) {
        // The V2 engine follows a project's creation with a shell snapshot of metadata only (threads: []; 09-shell-stream.json).
        const watch = await server.operator.watchShell();
        const from = watch.items.length;
        const projectId = await server.createProject("Watched project");
        await watch.until((item) => item.kind === "project.updated" && item.projectId === projectId, "the new project on the shell stream", from);
        await watch.until((item) => item.kind === "snapshot" && item.threads === 0, "the metadata-only snapshot after the project", from);
        watch.stop();
      } else {
        await server.createProject("Watched project");
      }
      await everyRowBack(context, fleet, before, removed, "the project");
    },
  },
  {
    name: "SIGKILL: offline as of the last confirmation with every row unknown, re-probed quickly; after a restart every row is back, none removed",
    async play(context) {
      const { server, fleet } = context;
      await until(fleet, () => env(fleet)?.connection.phase === "online", "online");
      // Production retry timing beside the fast one: only quick re-probing of a recently seen host keeps the restart quick.
      const production = await startFleet(server, { socket: SCENARIO_TIMING.socket });
      const before = await everyRowShown(context, fleet);
      await everyRowShown(context, production);
      const removed = removals(fleet);
      const retries: number[] = [];
      const recordRetry = () => {
        const phase = env(production)?.connection;
        if (phase?.phase === "offline" && retries.length < phase.attempt) retries.push(Date.parse(phase.nextAttemptAt) - Date.parse(phase.since));
      };
      production.service.on("event", recordRetry);
      try {
        await server.kill();
        for (const target of [fleet, production]) {
          await until(target, () => env(target)?.connection.phase === "offline", "offline");
          const offline = env(target)!.connection;
          expect(offline.phase === "offline" && offline.lastConfirmedAt !== null).toBe(true);
          expect(rows(target).every((view) => view.status === "unknown" && view.asOf !== null)).toBe(true);
        }
        await server.restart();
        await until(production, () => env(production)?.connection.phase === "online", "online after the restart (production timing)");
      } finally {
        production.service.off("event", recordRetry);
      }
      // Every retry was a quick probe (the jittered quickProbeMs), never a growing backoff.
      expect(retries.length).toBeGreaterThan(0);
      expect(Math.max(...retries)).toBeLessThanOrEqual(1.2 * DEFAULT_TIMING.quickProbeMs);
      await everyRowBack(context, fleet, before, removed, "the restart");
      expect(env(fleet)!.environmentId).toBe(server.environmentId);
    },
  },
  {
    name: "SIGSTOP: offline by the heartbeat with every row unknown; after SIGCONT every row is back, none removed",
    async play(context) {
      const { server } = context;
      const frozen = await startFleet(server);
      const before = await everyRowShown(context, frozen);
      const removed = removals(frozen);
      server.freeze();
      await until(frozen, () => env(frozen)?.connection.phase === "offline", "offline");
      // Noticed by missed pings: a frozen process keeps its sockets open.
      expect(env(frozen)!.connection).toMatchObject({ phase: "offline", error: "The server stopped answering pings." });
      expect(rows(frozen).every((view) => view.status === "unknown")).toBe(true);
      server.thaw();
      await everyRowBack(context, frozen, before, removed, "SIGCONT");
    },
  },
  {
    name: "a message sent as the server freezes is uncertain, then exactly one copy after the restart",
    async play(context) {
      const { server, fleet } = context;
      const threadId = await newThread(context, "Sent into a freeze");
      const key = keyOf(fleet, threadId);
      await until(fleet, () => env(fleet)?.connection.phase === "online" && fleet.service.intent(key).kind === "new-turn", "online and idle");
      const text = "exactly once across a freeze";
      server.freeze();
      const delivery = await send(fleet, key, text, "new-turn");
      await until(fleet, () => reached(fleet, delivery, ["uncertain"]), "uncertain");
      await restartFrozen(server);
      await until(fleet, () => reached(fleet, delivery, ["delivered", "answered"]), "reconciled");
      expect(userMessages(await server.stored(threadId), text)).toHaveLength(1);
      expect(deliveryStates(fleet, delivery.commandId)).toContain("uncertain");
    },
  },
  {
    name: "a revoked session is unauthorized by the periodic re-check while its socket stays open, then makes no retry storm",
    async play(context) {
      const { server, fleet } = context;
      // A fleet of its own, re-checking its token often (30 s in production).
      const revoked = await startFleet(server, { ...SCENARIO_TIMING, timing: { ...SCENARIO_TIMING.timing, tokenRecheckMs: 200 } });
      const mine = (await server.sessions()).filter((session) => session.label === defaultClientLabel()).at(-1)!;
      const shown = phases(revoked);
      const since = Date.now();
      await server.revokeSession(mine.sessionId);
      await until(revoked, () => env(revoked)?.connection.phase === "unauthorized", "unauthorized");
      // Straight from online (no reconnect: its socket stayed open), and all it asked meanwhile was the re-check.
      expect(shown()).toEqual(["online", "unauthorized"]);
      const asked = async (from: number) =>
        (await server.requestsSince(from)).filter((request) => request.sessionId === mine.sessionId || request.sessionId === null);
      expect([...new Set((await asked(since)).map((request) => `${request.method} ${request.path}`))]).toEqual(["GET /api/auth/session"]);
      const quiet = Date.now();
      await new Promise((resolve) => setTimeout(resolve, NO_RETRY_WINDOW_MS));
      expect(await asked(quiet)).toEqual([]);
      expect(env(revoked)!.connection.phase).toBe("unauthorized");
      expect(env(fleet)!.connection.phase).toBe("online");
    },
  },
];

/** The scenarios a protocol does not have, with why: the docs cite this table. */
export const NOT_PLAYED: { scenario: string; protocol: 1 | 2; why: string }[] = [
  {
    scenario: "nests a fork under the thread it was forked from (lineage, not the id)",
    protocol: 1,
    why: "Protocol 1 has no forks and no lineage: a child is known only by its id, sub.<parent>.<suffix>.",
  },
  {
    scenario: "shows a subagent delegated from a running turn on its parent; its child thread is not in the server's shell and has no row",
    protocol: 1,
    why: "Protocol 1 has no delegated tasks (delegated_task.request and subagent rows are protocol 2's, t3-protocol.md §16.9); its children are threads of their own.",
  },
  {
    scenario: "shows a child sub.<parent>.<suffix> nested under its parent",
    protocol: 2,
    why: "On protocol 2 lineage is set only by T3 (thread.fork, delegated tasks); a thread created with a sub.<parent>.<suffix> id is a root there (t3-protocol.md §16.9).",
  },
];

/** The scenarios `protocol` plays, in order. */
export function scenariosFor(protocol: 1 | 2): FleetScenario[] {
  return FLEET_SCENARIOS.filter((scenario) => !NOT_PLAYED.some((entry) => entry.protocol === protocol && entry.scenario === scenario.name));
}

/**
 * Registers the scenarios `protocol` plays, in order, on one server from `start` and one fleet paired
 * with it before the first; after each, a scenario that failed leaves the server neither frozen nor down.
 */
export function playScenarios(protocol: 1 | 2, start: () => Promise<ServerUnderTest>): void {
  const stops: (() => unknown)[] = [];
  let context: ScenarioContext;
  beforeAll(async () => {
    const server = await start();
    stops.push(() => server.stop());
    const fleet = await startFleet(server, SCENARIO_TIMING, stops);
    const truth = new TruthWatch(fleet.service, fleet.events);
    stops.push(() => truth.stop());
    context = { server, fleet, left: new Set(), truth };
  }, 60_000);
  afterAll(async () => {
    while (stops.length) await stops.pop()!();
  });
  afterEach(async () => {
    if (context.server.frozen) context.server.thaw();
    if (!context.server.running) await context.server.restart();
  });
  const played = async (scenario: FleetScenario) => (await scenario.play(context), truthful(context, `${scenario.name}: at its end`));
  for (const scenario of scenariosFor(protocol)) it(scenario.name, () => played(scenario), 30_000);
  it("names every scenario it does not play, with why", () => {
    const names = FLEET_SCENARIOS.map((scenario) => scenario.name);
    for (const entry of NOT_PLAYED.filter((skipped) => skipped.protocol === protocol)) {
      expect(names).toContain(entry.scenario);
      expect(entry.why).not.toBe("");
    }
    expect(scenariosFor(protocol).length + NOT_PLAYED.filter((skipped) => skipped.protocol === protocol).length).toBe(FLEET_SCENARIOS.length);
  });
}

// The protocol-2 adapter against the protocol-2 simulator: every status, card, command, stream rule
// and error a fleet user would notice.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { T3Error } from "../../../../shared/t3/errors";
import { providerTurnRunning, untilEngine } from "../../../../sim/protocol2/engine.testkit";
import type { V2SimServer } from "../../../../sim/protocol2/server";
import { FleetRecorder, ThreadDetailRecorder, v2Fixture } from "./recorders.testkit";
import type { AdapterSession, AgentCommand, FollowedThread } from "../adapter";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(options: Parameters<typeof v2Fixture>[0] = {}) {
  const fixture = await v2Fixture(options);
  cleanups.push(() => fixture.sim.stop());
  const session = await fixture.adapter.connect(fixture.credentials);
  cleanups.push(() => session.close());
  const fleet = new FleetRecorder();
  const subscription = session.subscribeFleet(fleet);
  cleanups.push(() => subscription.close());
  return { ...fixture, session, fleet };
}

function project(sim: V2SimServer): string {
  const id = `project-${sim.label}`;
  if (!sim.engine.projects.has(id)) sim.engine.addProject({ id, title: "Repo", workspaceRoot: "/home/user/repo", defaultModelSelection: null, scripts: [] });
  return id;
}

function newThread(sim: V2SimServer, provider: "codex" | "claudeAgent" | "grok" = "claudeAgent"): string {
  return sim.engine.createThread({ projectId: project(sim), title: "Task", provider }).thread.id;
}

function send(session: AdapterSession, threadId: string, text: string, mode: "start" | "steer" | "queue" = "start", runId: string | null = null) {
  const messageId = `message-${randomUUID()}`;
  const command: AgentCommand = { type: "send", commandId: `command-${randomUUID()}`, threadId, messageId, text, mode, runId };
  return { messageId, command, receipt: session.execute(command) };
}

/** Follows a thread (by id: a fresh follow; by its FollowedThread: resuming it, as electron/fleet/threads.ts does). */
function follow(session: AdapterSession, adapter: { thread(id: string): FollowedThread }, thread: string | FollowedThread) {
  const recorder = new ThreadDetailRecorder();
  const subscription = session.followThread(typeof thread === "string" ? adapter.thread(thread) : thread, recorder);
  cleanups.push(() => subscription.close());
  return recorder;
}

async function rejected(promise: Promise<unknown>): Promise<T3Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(T3Error);
  return error as T3Error;
}

describe("protocol-2 adapter: fleet stream", () => {
  it("delivers a snapshot of the active agents with lineage (archived threads are not agents, as on protocol 1), then live changes", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const parent = newThread(sim);
    const fork = sim.engine.fork(parent, "Fork of task").thread.id;
    const archived = newThread(sim);
    sim.engine.dispatch({ type: "thread.archive", commandId: "archive-1", threadId: archived });
    const second = new FleetRecorder();
    const subscription = session.subscribeFleet(second);
    cleanups.push(() => subscription.close());
    await fleet.until(() => fleet.synced === 1, "synchronized");
    await second.until(() => second.snapshots >= 1 && second.agents.size === 2, "two agents");
    expect(second.agent(parent)).toMatchObject({
      parent: null,
      lifecycle: "active",
      run: { phase: "idle" },
      capabilities: { whileRunning: ["steer", "queue"], stop: false, cancelQueued: true },
    });
    expect(second.agent(fork)?.parent).toEqual({ threadId: parent, relationship: "fork" });
    expect(second.agent(archived)).toBeUndefined();
    expect(adapter.shell?.threads.has(archived), "no archived row is kept").toBe(false);
    expect(second.agent(parent)?.projectTitle).toBe("Repo");
  });

  it("runs a message through starting, running, waiting and completed, with cumulative assistant text", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim);
    await fleet.untilAgent(threadId, () => true, "thread appears");
    const detail = follow(session, adapter, threadId);
    const { messageId, receipt } = send(session, threadId, "Refactor the parser #stream");
    expect((await receipt).sequence).toBeGreaterThan(0);
    const done = await fleet.untilAgent(threadId, (agent) => agent.run.phase === "completed", "completed");
    expect(done.latestUserMessageAt).not.toBeNull();
    const final = await detail.untilDetail(
      (d) => d.facts.run?.phase === "completed" && d.items.some((item) => item.type === "message" && item.role === "assistant" && !item.streaming),
      "assistant reply",
    );
    const reply = final.items.find((item) => item.type === "message" && item.role === "assistant");
    expect(reply).toMatchObject({ text: "Claude reply to: Refactor the parser", streaming: false });
    expect(final.items.find((item) => item.id === messageId)).toMatchObject({ type: "message", role: "user" });
    expect(final.facts.messageOutcomes?.[messageId]).toMatchObject({ how: "started" });
  });

  it("queues behind an active run with its position, steers the active run, and cancels a queued one", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim);
    const detail = follow(session, adapter, threadId);
    await send(session, threadId, "Long task #hold").receipt;
    const running = await fleet.untilAgent(threadId, (agent) => agent.run.phase === "running" && agent.activeRunId !== null, "running");
    const runId = running.activeRunId!;

    const queued = send(session, threadId, "Then write docs", "queue", runId);
    await queued.receipt;
    const third = send(session, threadId, "And release", "queue", runId);
    await third.receipt;
    const withQueue = await detail.untilDetail((d) => d.facts.messageOutcomes?.[third.messageId]?.queuePosition === 2, "second in queue");
    expect(withQueue.facts.messageOutcomes?.[queued.messageId]).toMatchObject({ how: "queued", queuePosition: 1 });
    expect(withQueue.facts.activeRunId).toBe(runId);
    // The transcript says which messages wait, and where.
    const queueOf = (d: typeof withQueue, messageId: string) => d.items.find((item) => item.id === messageId && item.type === "message");
    expect(queueOf(withQueue, queued.messageId)).toMatchObject({ role: "user", text: "Then write docs", queue: { state: "queued", position: 1 } });
    expect(queueOf(withQueue, third.messageId)).toMatchObject({ queue: { state: "queued", position: 2 } });

    const steer = send(session, threadId, "Use the new API", "steer", runId);
    await steer.receipt;
    const steered = await detail.untilDetail((d) => d.facts.messageOutcomes?.[steer.messageId]?.how === "joined", "steer joined");
    expect(steered.facts.messageOutcomes?.[steer.messageId]?.runId).toBe(runId);

    const thirdRun = withQueue.facts.messageOutcomes![third.messageId]!.runId;
    await session.execute({ type: "cancel-queued", commandId: `cancel-${randomUUID()}`, threadId, runId: thirdRun });
    await detail.untilDetail(
      (d) =>
        d.facts.messageOutcomes?.[queued.messageId]?.queuePosition === 1 && !Object.values(d.facts.messageOutcomes ?? {}).some((o) => o.queuePosition === 2),
      "queue renumbered",
    );

    expect(sim.engine.release(threadId)).toBe(true);
    const started = await detail.untilDetail((d) => d.facts.messageOutcomes?.[queued.messageId]?.how === "started", "queued run started");
    // Once its run started it reads like any other message; the cancelled one says it never ran.
    expect(queueOf(started, queued.messageId)).toMatchObject({ text: "Then write docs" });
    expect(queueOf(started, queued.messageId)).not.toHaveProperty("queue");
    expect(queueOf(started, third.messageId)).toMatchObject({ queue: { state: "cancelled" } });
    // Text is buffered until the turn ends (as on T3's engine): the steered run's reply shows the steer then.
    await detail.untilDetail(
      (d) =>
        d.items.some(
          (item) => item.type === "message" && item.role === "assistant" && item.runId === runId && item.text.includes("[steered: Use the new API]"),
        ),
      "steer answered",
    );
    const finished = await fleet.untilAgent(threadId, (agent) => agent.run.phase === "completed", "all done");
    expect(finished.activeRunId).toBeNull();
    const runs = sim.engine.threads.get(threadId)!.runs.map((run) => run.status);
    expect(runs).toEqual(["completed", "completed", "cancelled"]);
    const last = await detail.untilDetail((d) => d.facts.run?.phase === "completed", "detail completed");
    expect(last.facts.messageOutcomes?.[third.messageId]?.how).toBe("cancelled");
  });

  it("refuses a steer of a run that is not active, a steer without a run id, and stop", async () => {
    const { sim, session } = await setup();
    const threadId = newThread(sim);
    const stale = await rejected(send(session, threadId, "hi", "steer", "run:thread:x:ordinal:9").receipt);
    expect(stale.kind).toBe("rejected");
    expect(stale.details.tag).toBe("OrchestrationV2DispatchCommandError");
    expect(stale.message).toMatch(/does not exist|not active/);
    expect((await rejected(send(session, threadId, "hi", "steer", null).receipt)).kind).toBe("rejected");
    expect((await rejected(session.execute({ type: "stop", commandId: "stop-1", threadId }))).message).toMatch(/no session stop/);
  });

  it("offers only queue for an agent whose provider session cannot steer, once its thread was followed", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim, "grok");
    const detail = follow(session, adapter, threadId);
    expect((await fleet.untilAgent(threadId, () => true, "appears")).capabilities.whileRunning).toEqual(["steer", "queue"]);
    send(session, threadId, "#hold");
    await detail.untilDetail((d) => d.facts.run?.phase === "running", "running");
    const learned = await fleet.untilAgent(threadId, (agent) => agent.capabilities.whileRunning.length === 1, "queue only");
    expect(learned.capabilities.whileRunning).toEqual(["queue"]);
    // The engine refuses a steer before the provider's turn runs for another reason ("No running provider turn"): wait for it.
    await untilEngine(sim.engine, () => providerTurnRunning(sim.engine, threadId), "the provider turn running");
    const refused = await rejected(send(session, threadId, "fold in", "steer", learned.activeRunId ?? detail.latest!.facts.activeRunId).receipt);
    expect(refused.message).toMatch(/does not support steering/);
  });

  it("a resend with the same commandId has one effect and the same receipt", async () => {
    const { sim, session, fleet } = await setup();
    const threadId = newThread(sim);
    const first = send(session, threadId, "Once #hold");
    const again = await session.execute(first.command);
    expect(again.sequence).toBe((await first.receipt).sequence);
    await fleet.untilAgent(threadId, (agent) => agent.run.phase === "running", "running");
    expect(sim.engine.threads.get(threadId)!.runs).toHaveLength(1);
  });
});

describe("protocol-2 adapter: blocked agents and answers", () => {
  it("shows an approval with every offered decision and unblocks on accept-for-session", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim);
    const detail = follow(session, adapter, threadId);
    send(session, threadId, "Test it #approval");
    const blocked = await fleet.untilAgent(threadId, (agent) => agent.blockedBy !== null, "blocked");
    expect(blocked.blockedBy).toMatchObject({ kind: "approval" });
    // The request and its turn item may arrive in separate chunks: wait for the item's prompt.
    const card = await detail.untilDetail((d) => d.facts.pending.length === 1 && d.facts.pending[0]!.detail !== "command", "approval card");
    const pending = card.facts.pending[0]!;
    expect(pending).toMatchObject({ kind: "approval", requestKind: "command", detail: "Run `npm test`?", requestId: blocked.blockedBy!.requestId });
    if (pending.kind !== "approval") throw new Error("not an approval");
    expect(pending.decisions.map((option) => option.decision)).toEqual(["accept", "acceptForSession", "decline", "cancel"]);
    await session.execute({
      type: "respond-approval",
      commandId: `approve-${randomUUID()}`,
      threadId,
      requestId: pending.requestId,
      decision: "acceptForSession",
    });
    const done = await fleet.untilAgent(threadId, (agent) => agent.run.phase === "completed" && agent.blockedBy === null, "completed");
    expect(done.blockedBy).toBeNull();
    const request = sim.engine.threads.get(threadId)!.requests[0]!;
    // A resolved request does not repeat the decision on T3's engine (nor in the simulator that follows it).
    expect(request).toMatchObject({ status: "resolved" });
    const after = await detail.untilDetail(
      (d) => d.facts.pending.length === 0 && d.items.some((item) => item.type === "command" && item.command === "npm test"),
      "tool ran",
    );
    expect(after.facts.pending).toEqual([]);
  });

  it("asks several questions (multi-select, free text, required) and enforces required answers", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim);
    const detail = follow(session, adapter, threadId);
    send(session, threadId, "Plan it #question");
    const blocked = await fleet.untilAgent(threadId, (agent) => agent.blockedBy?.kind === "input", "waiting for answers");
    const shown = await detail.untilDetail((d) => d.facts.pending[0]?.kind === "input" && d.facts.pending[0].questions.length === 2, "question card");
    const card = shown.facts.pending[0]!;
    if (card.kind !== "input") throw new Error("not a question");
    expect(card.requestId).toBe(blocked.blockedBy!.requestId);
    expect(card.questions).toEqual([
      {
        id: "scope",
        header: "Scope",
        question: "Which packages should I touch?",
        options: [
          { label: "api", description: "The API package", value: "api" },
          { label: "web", description: "The web app", value: "web" },
        ],
        multiSelect: true,
        allowsFreeText: false,
        required: true,
      },
      { id: "note", header: "Note", question: "Anything else?", options: [], multiSelect: false, allowsFreeText: true, required: false },
    ]);
    const missing = await rejected(
      session.execute({ type: "respond-input", commandId: `answer-${randomUUID()}`, threadId, requestId: card.requestId, answers: { note: "x" } }),
    );
    expect(missing.message).toMatch(/requires an answer/);
    await session.execute({
      type: "respond-input",
      commandId: `answer-${randomUUID()}`,
      threadId,
      requestId: card.requestId,
      answers: { scope: ["api", "web"], note: "keep it small" },
    });
    await fleet.untilAgent(threadId, (agent) => agent.run.phase === "completed" && agent.blockedBy === null, "answered and done");
    await detail.untilDetail(
      (d) => d.items.some((item) => item.type === "message" && item.text === "Thanks (scope=api+web, note=keep it small)."),
      "answers used",
    );
  });

  it("interrupts a blocked run: the request is cancelled and the agent reads interrupted", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim);
    const detail = follow(session, adapter, threadId);
    send(session, threadId, "#approval");
    await detail.untilDetail((d) => d.facts.pending.length === 1, "approval");
    await session.execute({ type: "interrupt", commandId: `interrupt-${randomUUID()}`, threadId, runId: null });
    const stopped = await fleet.untilAgent(threadId, (agent) => agent.run.phase === "interrupted", "interrupted");
    expect(stopped.blockedBy).toBeNull();
    await detail.untilDetail((d) => d.facts.pending.length === 0 && d.facts.run?.phase === "interrupted", "request cancelled");
    const noRun = await rejected(session.execute({ type: "interrupt", commandId: `interrupt-${randomUUID()}`, threadId, runId: null }));
    expect(noRun.kind).toBe("rejected");
  });
});

describe("protocol-2 adapter: failures, waiting and subagents", () => {
  it.each(["provider_error", "transport_error", "permission_error", "validation_error"] as const)(
    "reports a %s failure with its reason",
    async (failureClass) => {
      const { sim, adapter, session, fleet } = await setup();
      const threadId = newThread(sim);
      const detail = follow(session, adapter, threadId);
      send(session, threadId, `Go #fail:${failureClass}`);
      const failed = await fleet.untilAgent(threadId, (agent) => agent.run.phase === "failed", "failed");
      expect(failed.run).toEqual({ phase: "failed", reason: `Claude failed: ${failureClass.replace("_", " ")}` });
      const seen = await detail.untilDetail((d) => d.facts.run?.phase === "failed", "failure in detail");
      expect(seen.facts.lastErrorText).toBe(`Claude failed: ${failureClass.replace("_", " ")}`);
      expect(seen.items.some((item) => item.type === "error" && item.message.includes(failureClass))).toBe(true);
    },
  );

  it("offers a steer on a followed agent only while its provider turn runs", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim, "codex");
    const detail = follow(session, adapter, threadId);
    send(session, threadId, "Long task #hold");
    const steerable = await fleet.untilAgent(
      threadId,
      (agent) => agent.run.phase === "running" && agent.capabilities.whileRunning.includes("steer"),
      "steer offered",
    );
    // Whenever steer is offered, the followed thread shows the run's provider turn running (T3's own steer rule).
    const shown = detail.latest!;
    expect(shown.facts.run?.phase).toBe("running");
    const run = sim.engine.threads.get(threadId)!.runs.find((entry) => entry.id === steerable.activeRunId)!;
    expect(sim.engine.threads.get(threadId)!.providerTurns.some((turn) => turn.runAttemptId === run.activeAttemptId && turn.status === "running")).toBe(true);
    expect((await send(session, threadId, "Use the new API", "steer", steerable.activeRunId).receipt).sequence).toBeGreaterThan(0);
    sim.engine.release(threadId);
    await fleet.untilAgent(threadId, (agent) => agent.run.phase === "completed", "completed");
  });

  it("reads waiting while background work drains, then completed", async () => {
    const { sim, session, fleet } = await setup();
    const threadId = newThread(sim);
    send(session, threadId, "Watch tests #background");
    const waiting = await fleet.untilAgent(threadId, (agent) => agent.run.phase === "waiting", "waiting");
    expect(waiting.run).toEqual({ phase: "waiting", note: "Background test watcher" });
    // Finishing: T3 refuses a steer and an interrupt now; a message can still queue.
    expect(waiting.capabilities).toMatchObject({ whileRunning: ["queue"], interrupt: false });
    sim.engine.release(threadId);
    await fleet.untilAgent(threadId, (agent) => agent.run.phase === "completed", "completed");
  });

  it("reports a provider-native subagent inside its parent thread", async () => {
    const { sim, adapter, session } = await setup();
    const threadId = newThread(sim);
    const detail = follow(session, adapter, threadId);
    send(session, threadId, "#subagent");
    const done = await detail.untilDetail((d) => d.facts.subagents.some((subagent) => subagent.status === "completed"), "subagent done");
    expect(done.facts.subagents).toEqual([expect.objectContaining({ kind: "provider_native", title: "Explore", childThreadId: null, status: "completed" })]);
  });

  it("links an app-owned subagent to its child thread, which nests under the parent", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim);
    const detail = follow(session, adapter, threadId);
    send(session, threadId, "#delegate");
    const child = await fleet
      .until(() => [...fleet.agents.values()].some((agent) => agent.parent?.threadId === threadId), "child appears")
      .then(() => [...fleet.agents.values()].find((agent) => agent.parent?.threadId === threadId)!);
    expect(child.parent).toEqual({ threadId, relationship: "subagent" });
    const linked = await detail.untilDetail((d) => d.facts.subagents.some((subagent) => subagent.status === "completed"), "subagent completed");
    expect(linked.facts.subagents[0]).toMatchObject({ kind: "app_owned", childThreadId: child.threadId });
    await fleet.untilAgent(child.threadId, (agent) => agent.run.phase === "completed", "child completed");
    await fleet.untilAgent(threadId, (agent) => agent.run.phase === "completed", "parent completed");
  });
});

describe("protocol-2 adapter: streams, resume and lifecycle", () => {
  it("resubscribes by sequence when the server ends streams after their first snapshot (no new snapshot)", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim);
    const detail = follow(session, adapter, threadId);
    await fleet.until(() => fleet.synced === 1, "synced");
    await detail.untilDetail((d) => d.loaded, "loaded");
    await detail.untilDetail((d) => d.synced, "thread stream live");
    expect(sim.endStreams()).toBe(2);
    send(session, threadId, "After the cutoff");
    await fleet.untilAgent(threadId, (agent) => agent.run.phase === "completed", "completed after resume");
    await detail.untilDetail((d) => d.facts.run?.phase === "completed", "detail completed after resume");
    expect(fleet.snapshots).toBe(1);
    expect(fleet.ended).toBeUndefined();
    expect(detail.ended).toBeUndefined();
  });

  it("resumes a thread by sequence on a new connection, or takes the server's snapshot when the gap is too large", async () => {
    const frames: unknown[] = [];
    const { sim, adapter, session, credentials } = await setup({
      adapter: { socket: { onFrame: (direction, frame) => direction === "recv" && frames.push(frame) } },
    });
    const threadId = newThread(sim);
    // The followed thread's state (its cursor) is kept across connections, as the thread followers keep it.
    const thread = adapter.thread(threadId);
    const first = follow(session, adapter, thread);
    await first.untilDetail((d) => d.loaded, "loaded");
    session.close();
    await first.untilEnded();

    const reconnectAndFollow = async () => {
      frames.length = 0;
      const next = await adapter.connect(credentials);
      cleanups.push(() => next.close());
      return { next, recorder: follow(next, adapter, thread) };
    };

    // A small gap: the server replays it as events, and the run's result shows.
    await runToCompletion(sim, threadId, "small gap");
    const { next, recorder: resumed } = await reconnectAndFollow();
    await resumed.untilDetail((d) => d.facts.run?.phase === "completed", "small gap replayed");
    expect(streamItemKinds(frames)).not.toContain("snapshot");
    expect(streamItemKinds(frames)).toContain("event");
    next.close();
    await resumed.untilEnded();

    // A gap of more than 128 events: the server sends a snapshot instead.
    for (let i = 0; i < 30; i++) await runToCompletion(sim, threadId, `batch ${i}`);
    const { recorder: fallback } = await reconnectAndFollow();
    await fallback.untilDetail(
      (d) => d.items.filter((item) => item.type === "message" && item.role === "user").length === 31,
      "every message after the snapshot",
    );
    expect(streamItemKinds(frames)).toContain("snapshot");
  });

  it("reports the end of the socket on restart; the next connection sees the interrupted run and resumes", async () => {
    const { sim, adapter, session, fleet, credentials } = await setup();
    const threadId = newThread(sim);
    send(session, threadId, "#hold");
    await fleet.untilAgent(threadId, (agent) => agent.run.phase === "running", "running");
    const closed = new Promise<T3Error>((resolve) => session.onClose(resolve));
    await sim.restart();
    expect((await closed).kind).toBe("network");
    const next = await adapter.connect(credentials);
    cleanups.push(() => next.close());
    const after = new FleetRecorder();
    const subscription = next.subscribeFleet(after);
    cleanups.push(() => subscription.close());
    await after.until(() => after.synced === 1, "resumed");
    expect(after.snapshots).toBe(0);
    await after.untilAgent(threadId, (agent) => agent.run.phase === "interrupted", "interrupted by restart");
  });

  it("turns archive and delete into removals that say how the thread left; unarchived, it is an agent again", async () => {
    const { sim, adapter, fleet } = await setup();
    const threadId = newThread(sim);
    await fleet.untilAgent(threadId, () => true, "appears");
    sim.engine.dispatch({ type: "thread.archive", commandId: "a-1", threadId });
    await fleet.until(() => fleet.leftAs.get(threadId) === "archived", "removed as archived");
    expect(adapter.shell?.threads.has(threadId), "its row is let go").toBe(false);
    sim.engine.dispatch({ type: "thread.unarchive", commandId: "a-2", threadId });
    await fleet.untilAgent(threadId, (agent) => agent.lifecycle === "active", "active again");
    expect(adapter.shell?.threads.has(threadId)).toBe(true);
    sim.engine.dispatch({ type: "thread.delete", commandId: "a-3", threadId });
    await fleet.until(() => fleet.leftAs.get(threadId) === "archived-or-deleted", "removed");
  });

  it("keeps nothing learned from a followed thread once it is deleted and its stream ends", async () => {
    const { sim, adapter, session, fleet } = await setup();
    const threadId = newThread(sim, "grok");
    const detail = new ThreadDetailRecorder();
    const subscription = session.followThread(adapter.thread(threadId), detail);
    await fleet.untilAgent(threadId, () => true, "appears");
    send(session, threadId, "#hold");
    await detail.untilDetail((d) => d.facts.run?.phase === "running", "running");
    // Its provider session says it cannot steer: learned from the thread's stream.
    await fleet.untilAgent(threadId, (agent) => agent.capabilities.whileRunning.length === 1, "queue only");
    expect(adapter.keepsLearned(threadId)).toBe(true);
    sim.engine.dispatch({ type: "thread.delete", commandId: "d-1", threadId });
    await fleet.until(() => fleet.leftAs.has(threadId), "removed");
    // An event of the thread's stream that comes after the shell let the thread go teaches the
    // adapter again (./thread-stream.ts does this for each event); the fleet then stops following it
    // (electron/fleet/threads.ts).
    adapter.learnFromThread(threadId, adapter.streamedProjection(threadId)!);
    await subscription.close();
    expect(adapter.keepsLearned(threadId)).toBe(false);
  });

  it("ends the follow of a thread the server does not know with the reason on the thread: not a connection failure", async () => {
    const { adapter, session } = await setup();
    const thread = adapter.thread("no-such-thread");
    const recorder = follow(session, adapter, thread);
    // A failure handed on would make the supervisor drop and retry the whole connection (threads.ts).
    expect(await recorder.untilEnded()).toBeUndefined();
    expect(thread.detail().error).toMatch(/not found/);
  });

  it("reads the shell over HTTP with the protocol header", async () => {
    const { sim, adapter, credentials } = await setup();
    const threadId = newThread(sim);
    const shell = await adapter.http.getShell(credentials);
    expect(shell.schemaVersion).toBe(3);
    expect(shell.threads.map((row) => row.id)).toContain(threadId);
  });
});

/** Sends a message from outside the fleet (another T3 client) and resolves when its run completed. */
function runToCompletion(sim: V2SimServer, threadId: string, text: string): Promise<void> {
  const messageId = `message-${randomUUID()}`;
  return new Promise((resolve) => {
    const onEvent = (stored: { event: { type: string; threadId: string; payload: unknown } }) => {
      const run = stored.event.payload as { userMessageId?: string; status?: string };
      if (stored.event.threadId === threadId && stored.event.type === "run.updated" && run.userMessageId === messageId && run.status === "completed") {
        sim.engine.off("event", onEvent);
        resolve();
      }
    };
    sim.engine.on("event", onEvent);
    sim.engine.dispatch({
      type: "message.dispatch",
      createdBy: "user",
      creationSource: "web",
      commandId: `c-${messageId}`,
      threadId,
      messageId,
      text,
      attachments: [],
      dispatchMode: { type: "queue_after_active" },
    });
  });
}

function streamItemKinds(frames: unknown[]): string[] {
  return frames.flatMap((frame) => {
    const chunk = frame as { _tag?: string; values?: { kind?: string }[] };
    return chunk._tag === "Chunk" ? (chunk.values ?? []).map((value) => value.kind ?? "?") : [];
  });
}

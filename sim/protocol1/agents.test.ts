// Scripted agents behave as T3's provider reactor does (docs/t3-protocols.md, "Protocol 1").
import { afterEach, describe, expect, it } from "vitest";
import { ORPHANED_PROVIDER_SESSION_ERROR } from "./engine";
import type { Generation, WireEvent } from "./model";
import { makeThread, nextEvent, sendTurn } from "./threads.testkit";
import { SimServer } from "./server";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startSim(generation: Generation = "upstream", tickMs = 3) {
  const sim = await new SimServer({ generation, tickMs }).start();
  cleanups.push(() => sim.stop());
  return sim;
}

const sessionIs = (threadId: string, status: string) => (event: WireEvent) =>
  event.aggregateId === threadId && event.type === "thread.session-set" && (event.payload.session as { status: string }).status === status;
const activityIs = (threadId: string, kind: string) => (event: WireEvent) =>
  event.aggregateId === threadId && event.type === "thread.activity-appended" && (event.payload.activity as { kind: string }).kind === kind;

/** Starts a turn that never ends on its own, then interrupts it; resolves once the session is ready again. */
async function runThenInterrupt(sim: SimServer, threadId: string): Promise<void> {
  const running = nextEvent(sim, sessionIs(threadId, "running"));
  sendTurn(sim, threadId, "#hang");
  await running;
  const ready = nextEvent(sim, sessionIs(threadId, "ready"));
  sim.engine.dispatch({ type: "thread.turn.interrupt", commandId: "i-1", threadId, createdAt: sim.engine.now() });
  await ready;
}

function assistantTurns(sim: SimServer, threadId: string): (string | null)[] {
  return sim.engine.threads
    .get(threadId)!
    .messages.filter((m) => m.role === "assistant")
    .map((m) => m.turnId);
}

describe("scripted agents", () => {
  // Seen on real 0.0.42 with Codex and OpenCode: one turn, one reply that covers both messages.
  it.each(["codex", "opencode"] as const)("a message to a running %s thread joins the running turn on upstream", async (provider) => {
    const sim = await startSim("upstream");
    const threadId = makeThread(sim, provider);
    const running = nextEvent(sim, sessionIs(threadId, "running"));
    sendTurn(sim, threadId, "long task #slow");
    const turnId = ((await running).payload.session as { activeTurnId: string }).activeTurnId;
    const ready = nextEvent(sim, sessionIs(threadId, "ready"));
    sendTurn(sim, threadId, "also check the docs");
    await ready;
    const thread = sim.engine.threads.get(threadId)!;
    expect(assistantTurns(sim, threadId)).toEqual([turnId]);
    expect(thread.latestTurn).toMatchObject({ turnId, state: "completed" });
    const [first, joined, reply] = thread.messages;
    expect([first!.role, joined!.role, reply!.role]).toEqual(["user", "user", "assistant"]);
    expect(joined!.text).toBe("also check the docs");
    expect(reply!.text).toContain("long task");
    expect(reply!.text).toContain("also check the docs");
  });

  it("a message to a running claudeAgent thread starts a new turn after it, as the real Claude Code did under 0.0.42", async () => {
    const sim = await startSim("upstream");
    const threadId = makeThread(sim, "claudeAgent");
    const running = nextEvent(sim, sessionIs(threadId, "running"));
    sendTurn(sim, threadId, "long task #slow");
    const turnId = ((await running).payload.session as { activeTurnId: string }).activeTurnId;
    const second = nextEvent(
      sim,
      (e) =>
        e.aggregateId === threadId &&
        e.type === "thread.session-set" &&
        (e.payload.session as { status: string; activeTurnId: string | null }).status === "running" &&
        (e.payload.session as { activeTurnId: string }).activeTurnId !== turnId,
    );
    sendTurn(sim, threadId, "also check the docs");
    await second;
    const ready = nextEvent(sim, sessionIs(threadId, "ready"));
    await ready;
    const turns = assistantTurns(sim, threadId);
    expect(new Set(turns).size).toBe(2);
    expect(turns[0]).toBe(turnId);
  });

  it("a message that joins after the turn's reply gets a reply of its own in the same turn", async () => {
    const sim = await startSim("upstream");
    const threadId = makeThread(sim, "codex");
    sim.scriptNextTurn(threadId, {
      steps: [
        { kind: "reply", text: "First part." },
        { kind: "delay", ms: 2_000 },
      ],
    });
    const firstReply = nextEvent(
      sim,
      (e) => e.aggregateId === threadId && e.type === "thread.message-sent" && e.payload.role === "assistant" && e.payload.streaming === false,
    );
    sendTurn(sim, threadId, "go");
    await firstReply;
    const ready = nextEvent(sim, sessionIs(threadId, "ready"));
    sendTurn(sim, threadId, "one more thing");
    await ready;
    const turns = assistantTurns(sim, threadId);
    expect(turns).toHaveLength(2);
    expect(new Set(turns).size).toBe(1);
    expect(sim.engine.threads.get(threadId)!.messages.at(-1)!.text).toContain("one more thing");
  });

  it.each([
    ["grok on upstream", "upstream", "grok"],
    ["codex on the 0.0.24 fork", "fork", "codex"],
  ] as const)("a message to a running thread starts a second turn (%s)", async (_name, generation, provider) => {
    const sim = await startSim(generation);
    const threadId = makeThread(sim, provider);
    const running = nextEvent(sim, sessionIs(threadId, "running"));
    sendTurn(sim, threadId, "first #slow");
    await running;
    sendTurn(sim, threadId, "second");
    const secondReply = nextEvent(sim, (e) => e.aggregateId === threadId && e.type === "thread.message-sent" && String(e.payload.text).includes("second"));
    await secondReply;
    const turns = assistantTurns(sim, threadId);
    expect(new Set(turns).size).toBe(2);
  });

  it("a message while the session is starting leaves a second turn that never ends", async () => {
    const sim = await startSim("upstream", 10);
    const threadId = makeThread(sim);
    const starting = nextEvent(sim, sessionIs(threadId, "starting"));
    sendTurn(sim, threadId, "first");
    await starting;
    sendTurn(sim, threadId, "sent while starting");
    const firstRunning = await nextEvent(sim, sessionIs(threadId, "running"));
    const firstReady = nextEvent(sim, sessionIs(threadId, "ready"));
    const ghostRunning = nextEvent(sim, (e) => sessionIs(threadId, "running")(e) && e.sequence > firstRunning.sequence);
    await firstReady;
    const ghost = await ghostRunning;
    const thread = sim.engine.threads.get(threadId)!;
    expect(thread.session?.activeTurnId).toBe((ghost.payload.session as { activeTurnId: string }).activeTurnId);
    // Only an interrupt ends it.
    const ready = nextEvent(sim, sessionIs(threadId, "ready"));
    sim.engine.dispatch({ type: "thread.turn.interrupt", commandId: "int-ghost", threadId, createdAt: sim.engine.now() });
    await ready;
    expect(thread.session?.activeTurnId).toBeNull();
  });

  it("an approval request blocks the turn until answered", async () => {
    const sim = await startSim();
    const threadId = makeThread(sim);
    const requested = nextEvent(sim, activityIs(threadId, "approval.requested"));
    sendTurn(sim, threadId, "deploy #approval");
    const event = await requested;
    const thread = sim.engine.threads.get(threadId)!;
    expect(sim.engine.shellRow(thread).hasPendingApprovals).toBe(true);
    expect(thread.session?.status).toBe("running");
    const requestId = (event.payload.activity as { payload: { requestId: string } }).payload.requestId;
    const ready = nextEvent(sim, sessionIs(threadId, "ready"));
    sim.engine.dispatch({ type: "thread.approval.respond", commandId: "ap-1", threadId, requestId, decision: "accept", createdAt: sim.engine.now() });
    expect(sim.engine.shellRow(thread).hasPendingApprovals).toBe(false);
    await ready;
    expect(thread.activities.map((a) => a.kind)).toEqual(expect.arrayContaining(["approval.requested", "approval.resolved", "tool.completed"]));
  });

  it("answering an unknown approval reports provider.approval.respond.failed", async () => {
    const sim = await startSim();
    const threadId = makeThread(sim);
    const failed = nextEvent(sim, activityIs(threadId, "provider.approval.respond.failed"));
    sim.engine.dispatch({ type: "thread.approval.respond", commandId: "ap-x", threadId, requestId: "stale", decision: "accept", createdAt: sim.engine.now() });
    expect(((await failed).payload.activity as { payload: { requestId: string } }).payload.requestId).toBe("stale");
  });

  it("a user-input request blocks until answered", async () => {
    const sim = await startSim();
    const threadId = makeThread(sim);
    const requested = nextEvent(sim, activityIs(threadId, "user-input.requested"));
    sendTurn(sim, threadId, "migrate #input");
    const event = await requested;
    const thread = sim.engine.threads.get(threadId)!;
    expect(sim.engine.shellRow(thread).hasPendingUserInput).toBe(true);
    const requestId = (event.payload.activity as { payload: { requestId: string } }).payload.requestId;
    // The question offers what answers it: which database, not Yes or No.
    expect((event.payload.activity as { payload: { questions: { question: string; options: { label: string }[] }[] } }).payload.questions).toEqual([
      expect.objectContaining({
        question: "Which database should I migrate first?",
        options: [expect.objectContaining({ label: "orders" }), expect.objectContaining({ label: "users" })],
      }),
    ]);
    const ready = nextEvent(sim, sessionIs(threadId, "ready"));
    sim.engine.dispatch({ type: "thread.user-input.respond", commandId: "ui-1", threadId, requestId, answers: { q1: "orders" }, createdAt: sim.engine.now() });
    await ready;
    expect(sim.engine.shellRow(thread).hasPendingUserInput).toBe(false);
  });

  it("a failed turn: upstream keeps latestTurn error; the fork drops latestTurn to null", async () => {
    for (const generation of ["upstream", "fork"] as const) {
      const sim = await startSim(generation);
      const threadId = makeThread(sim);
      const failed = nextEvent(sim, sessionIs(threadId, "error"));
      sendTurn(sim, threadId, "break it #fail");
      await failed;
      const thread = sim.engine.threads.get(threadId)!;
      expect(thread.session?.lastError).toMatch(/turn failed/);
      expect(thread.latestTurn?.state ?? null).toBe(generation === "upstream" ? "error" : null);
      expect(thread.messages.some((m) => m.role === "assistant" && m.text === "Working on it…")).toBe(true);
    }
  });

  it("#crash also appends a runtime.error activity", async () => {
    const sim = await startSim();
    const threadId = makeThread(sim);
    const runtimeError = nextEvent(sim, activityIs(threadId, "runtime.error"));
    const failed = nextEvent(sim, sessionIs(threadId, "error"));
    sendTurn(sim, threadId, "#crash");
    await runtimeError;
    await failed;
  });

  it("a turn that cannot start leaves session null and a provider.turn.start.failed activity", async () => {
    const sim = await startSim("fork");
    const threadId = makeThread(sim);
    const failed = nextEvent(sim, activityIs(threadId, "provider.turn.start.failed"));
    sendTurn(sim, threadId, "#startfail");
    const event = await failed;
    expect(sim.engine.threads.get(threadId)!.session).toBeNull();
    expect((event.payload.activity as { payload: { detail: string } }).payload.detail).toContain("ENOENT");
  });

  it("a capacity warning leaves the turn running", async () => {
    const sim = await startSim();
    const threadId = makeThread(sim);
    const warning = nextEvent(sim, activityIs(threadId, "runtime.warning"));
    sendTurn(sim, threadId, "#capacity");
    await warning;
    const thread = sim.engine.threads.get(threadId)!;
    expect(thread.session?.status).toBe("running");
    expect(thread.latestTurn?.state).toBe("running");
  });

  it("interrupt and session stop end a running turn", async () => {
    const sim = await startSim();
    const threadId = makeThread(sim);
    await runThenInterrupt(sim, threadId);
    expect(sim.engine.threads.get(threadId)!.latestTurn?.state).toBe("interrupted");

    const runningAgain = nextEvent(sim, sessionIs(threadId, "running"));
    sendTurn(sim, threadId, "#hang");
    await runningAgain;
    const stopped = nextEvent(sim, sessionIs(threadId, "stopped"));
    sim.engine.dispatch({ type: "thread.session.stop", commandId: "s-1", threadId, createdAt: sim.engine.now() });
    await stopped;
  });

  it("0.0.42: an interrupt naming the turn records it interrupted, even after its final reply, as the release's own projection does", async () => {
    const sim = await new SimServer({ generation: "upstream", tickMs: 3, serverVersion: "0.0.42" }).start();
    cleanups.push(() => sim.stop());
    const threadId = makeThread(sim);
    const running = nextEvent(sim, sessionIs(threadId, "running"));
    sendTurn(sim, threadId, "#hang");
    await running;
    const turnId = sim.engine.threads.get(threadId)!.latestTurn!.turnId;
    const ready = nextEvent(sim, sessionIs(threadId, "ready"));
    sim.engine.dispatch({ type: "thread.turn.interrupt", commandId: "i-named", threadId, turnId, createdAt: sim.engine.now() });
    await ready;
    expect(sim.engine.threads.get(threadId)!.latestTurn).toMatchObject({ turnId, state: "interrupted" });
    // A late request naming the ended turn marks it interrupted too.
    const other = makeThread(sim);
    const otherRunning = nextEvent(sim, sessionIs(other, "running"));
    sendTurn(sim, other, "hello");
    await otherRunning;
    await nextEvent(sim, sessionIs(other, "ready"));
    const ended = sim.engine.threads.get(other)!.latestTurn!;
    expect(ended.state).toBe("completed");
    sim.engine.dispatch({ type: "thread.turn.interrupt", commandId: "i-late", threadId: other, turnId: ended.turnId, createdAt: sim.engine.now() });
    expect(sim.engine.threads.get(other)!.latestTurn).toMatchObject({ turnId: ended.turnId, state: "interrupted" });
  });

  it("0.0.42: an interrupt naming no turn ends it completed; 0.0.33 records it interrupted", async () => {
    for (const [serverVersion, state] of [
      ["0.0.42", "completed"],
      ["0.0.33", "interrupted"],
    ] as const) {
      const sim = await new SimServer({ generation: "upstream", tickMs: 3, serverVersion }).start();
      cleanups.push(() => sim.stop());
      const threadId = makeThread(sim);
      await runThenInterrupt(sim, threadId);
      expect(sim.engine.threads.get(threadId)!.latestTurn?.state).toBe(state);
      expect(sim.engine.threads.get(threadId)!.session).toMatchObject({ status: "ready", activeTurnId: null });
    }
  });

  it("interrupting a thread without a session reports provider.turn.interrupt.failed", async () => {
    const sim = await startSim();
    const threadId = makeThread(sim);
    const failed = nextEvent(sim, activityIs(threadId, "provider.turn.interrupt.failed"));
    sim.engine.dispatch({ type: "thread.turn.interrupt", commandId: "i-none", threadId, createdAt: sim.engine.now() });
    expect(((await failed).payload.activity as { payload: { detail: string } }).payload.detail).toBe("No active provider session is bound to this thread.");
  });

  it("native subagents are reported as task.* activities, children as sub.<parent>.<suffix> threads", async () => {
    const sim = await startSim();
    const threadId = makeThread(sim, "claudeAgent");
    const ready = nextEvent(sim, sessionIs(threadId, "ready"));
    sendTurn(sim, threadId, "plan it #subagents #spawn:2");
    await ready;
    const kinds = sim.engine.threads.get(threadId)!.activities.map((a) => a.kind);
    expect(kinds.filter((kind) => kind === "task.started")).toHaveLength(2);
    expect(kinds.filter((kind) => kind === "task.completed")).toHaveLength(2);
    expect(sim.engine.threads.has(`sub.${threadId}.worker1`)).toBe(true);
    expect(sim.engine.threads.has(`sub.${threadId}.worker2`)).toBe(true);
  });

  it("a restart keeps the environmentId; upstream ends orphaned turns with the restart error, the fork leaves them stale", async () => {
    for (const generation of ["upstream", "fork"] as const) {
      const sim = await startSim(generation);
      const threadId = makeThread(sim);
      const running = nextEvent(sim, sessionIs(threadId, "running"));
      sendTurn(sim, threadId, "#hang");
      await running;
      const before = { id: sim.environmentId, url: sim.baseUrl };
      await sim.restart();
      expect({ id: sim.environmentId, url: sim.baseUrl }).toEqual(before);
      const thread = sim.engine.threads.get(threadId)!;
      if (generation === "upstream") {
        expect(thread.session).toMatchObject({ status: "error", activeTurnId: null, lastError: ORPHANED_PROVIDER_SESSION_ERROR });
        expect(thread.latestTurn?.state).toBe("interrupted");
      } else {
        expect(thread.session?.status).toBe("running");
      }
    }
  });
});

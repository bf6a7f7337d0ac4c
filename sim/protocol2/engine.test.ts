// The simulated protocol-2 engine's run rules where the real engine showed them: held runs and
// their release (also across a steer), buffered text, refusals while a run finishes, a failed turn.
import { afterEach, describe, expect, it } from "vitest";
import { DispatchError, type StoredEvent, V2Engine } from "./engine";
import { providerTurnRunning, untilEngine } from "./engine.testkit";

const engines: V2Engine[] = [];
afterEach(() => {
  while (engines.length) engines.pop()!.halt();
});

function setup(settings: { enableLegacyTokenStreaming?: boolean } = {}) {
  const engine = new V2Engine({ tickMs: 2, settings });
  engines.push(engine);
  engine.addProject({ id: "p", title: "Repo", workspaceRoot: "/repo" });
  const threadId = engine.createThread({ projectId: "p", title: "Task", provider: "claudeAgent" }).thread.id;
  const events: StoredEvent[] = [];
  engine.on("event", (stored: StoredEvent) => events.push(stored));
  let n = 0;
  const send = (text: string, dispatchMode: { type: "queue_after_active" } | { type: "steer_active"; targetRunId: string } = { type: "queue_after_active" }) =>
    engine.dispatch({
      type: "message.dispatch",
      createdBy: "user",
      creationSource: "web",
      commandId: `c${++n}`,
      threadId,
      messageId: `m${n}`,
      text,
      attachments: [],
      dispatchMode,
    });
  const runs = () => engine.threads.get(threadId)!.runs;
  const kinds = () => events.map(({ event }) => (event.type === "turn-item.updated" ? `item:${(event.payload as { type: string }).type}` : event.type));
  return { engine, threadId, send, runs, events, kinds };
}

describe("the simulated protocol-2 engine", () => {
  it("ends a held run on release even right after a steer, and then runs the queued message", async () => {
    const { engine, threadId, send, runs } = setup();
    send("long task #hold");
    await untilEngine(engine, () => providerTurnRunning(engine, threadId) && engine.threads.get(threadId)!.items.length > 0, "held");
    const runId = runs()[0]!.id;
    send("then docs");
    send("use the new API", { type: "steer_active", targetRunId: runId });
    // In the same tick as the steer: the release must not be lost.
    expect(engine.release(threadId)).toBe(true);
    await untilEngine(engine, () => runs().every((run) => run.status === "completed"), "both runs completed");
    const replies = engine.threads.get(threadId)!.items.filter((item) => item.type === "assistant_message" && item.runId === runId);
    expect(replies.map((item) => item.type === "assistant_message" && item.text)).toEqual(["Claude reply to: long task [steered: use the new API]"]);
  });

  it("takes a release that comes before the run reaches its hold", async () => {
    const { engine, threadId, send, runs } = setup();
    send("#hold");
    expect(engine.release(threadId)).toBe(true);
    await untilEngine(engine, () => runs()[0]?.status === "completed", "completed");
  });

  it("sends assistant text whole when the provider turn ends, unless legacy token streaming is on", async () => {
    for (const legacy of [false, true]) {
      const { engine, send, runs, events } = setup({ enableLegacyTokenStreaming: legacy });
      send("hello #stream");
      await untilEngine(engine, () => runs()[0]?.status === "completed", "completed");
      const updates = events
        .filter(({ event }) => event.type === "turn-item.updated" && (event.payload as { type: string }).type === "assistant_message")
        .map(({ event }) => (event.payload as { streaming: boolean }).streaming);
      expect(updates).toEqual(legacy ? [true, true, false] : [false]);
      const waiting = events.findIndex(({ event }) => event.type === "run.updated" && (event.payload as { status: string }).status === "waiting");
      const reply = events.findLastIndex(({ event }) => event.type === "turn-item.updated" && (event.payload as { type: string }).type === "assistant_message");
      expect(reply).toBeLessThan(waiting);
    }
  });

  it("refuses a steer before the provider turn runs and an interrupt or steer once the run is waiting", async () => {
    const { engine, threadId, send, runs } = setup();
    send("#hold");
    const runId = runs()[0]!.id;
    expect(() => send("too early", { type: "steer_active", targetRunId: runId })).toThrow(/No running provider turn/);
    await untilEngine(engine, () => providerTurnRunning(engine, threadId), "provider turn");
    engine.release(threadId);
    await untilEngine(engine, () => runs()[0]!.status === "waiting", "waiting");
    const interrupt = () => engine.dispatch({ type: "run.interrupt", commandId: "i1", threadId, runId });
    expect(interrupt).toThrow(DispatchError);
    expect(interrupt).toThrow(/is not interruptible/);
    expect(() => send("late", { type: "steer_active", targetRunId: runId })).toThrow(/cannot be steered/);
    await untilEngine(engine, () => runs()[0]!.status === "completed", "completed");
  });

  it("interrupts a running run: request item, partial reply, provider turn, result, run", async () => {
    const { engine, threadId, send, runs, kinds } = setup();
    engine.scriptNextRun(threadId, [{ kind: "reply", text: "Hello from " }, { kind: "hold" }, { kind: "reply", text: "the end." }]);
    send("slow");
    await untilEngine(engine, () => engine.threads.get(threadId)!.runner?.blockedOn?.kind === "hold", "holding after some text");
    const start = kinds().length;
    engine.dispatch({ type: "run.interrupt", commandId: "i1", threadId, runId: runs()[0]!.id, reason: "stop" });
    await untilEngine(engine, () => runs()[0]!.status === "interrupted", "interrupted");
    expect(kinds().slice(start)).toEqual([
      "item:run_interrupt_request",
      "node.updated",
      "message.updated",
      "item:assistant_message",
      "provider-turn.updated",
      "run-attempt.updated",
      "item:run_interrupt_result",
      "run.updated",
      "node.updated",
      "provider-thread.updated",
    ]);
    const partial = engine.threads.get(threadId)!.items.find((item) => item.type === "assistant_message");
    expect(partial).toMatchObject({ text: "Hello from ", streaming: false });
  });

  it("keeps lastError null on the row and the provider session after a failed turn; the reason is the error item", async () => {
    const { engine, threadId, send, runs } = setup();
    send("#fail:transport_error");
    await untilEngine(engine, () => runs()[0]?.status === "failed", "failed");
    const state = engine.threads.get(threadId)!;
    expect(engine.shellRow(state)).toMatchObject({ status: "failed", lastError: null });
    expect(state.sessions[0]).toMatchObject({ status: "ready", lastError: null });
    expect(state.items.find((item) => item.type === "error")).toMatchObject({
      status: "failed",
      failure: { class: "transport_error", message: "Claude failed: transport error" },
    });
  });
});

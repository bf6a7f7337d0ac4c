// Scripted provider agents (codex, claudeAgent, opencode, grok) for a simulated T3 server. They react
// to the engine's events the way T3's provider reactor does and write provider-side events back.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { type Engine, ORPHANED_PROVIDER_SESSION_ERROR } from "./engine";
import type { ThreadState, WireEvent, WireSession } from "./model";
import { simTurnChanges } from "../changes";
import { contextWindowPayload, turnCheckpoint } from "./turn-changes";
import { PROVIDERS, type ProviderKind } from "../providers";
import { type AgentStep, type TurnScript, scriptFromText } from "./turn-scripts";

function providerOf(thread: ThreadState): ProviderKind {
  const id = thread.session?.providerName ?? thread.modelSelection.instanceId;
  return (id in PROVIDERS ? id : "codex") as ProviderKind;
}

class Interrupted extends Error {}

interface RunningTurn {
  abort: AbortController;
  turnId: string | null;
  /** Texts sent while this turn runs, folded into its next reply by steering providers. */
  steers: string[];
  /** Ends the `hold` step it is in; releases that came before the hold are counted. */
  release?: () => void;
  releases?: number;
  waiting?: { requestId: string; kind: "approval" | "input"; resolve: (answer: unknown) => void };
}

interface ThreadRuntime {
  running?: RunningTurn;
  /** Messages waiting for a new turn (non-steering providers, fork servers). */
  queue: string[];
  /** A message arrived while the session was starting: T3 then creates a turn that never ends. */
  ghostTurn: boolean;
}

export interface AgentOptions {
  /** Base delay between provider events; tests use a few ms, the demo a few hundred. */
  tickMs: number;
  /** Upstream `enableLegacyTokenStreaming`: token deltas instead of one buffered message. */
  tokenStreaming: boolean;
}

export class Agents {
  private readonly runtimes = new Map<string, ThreadRuntime>();
  private readonly scripted = new Map<string, TurnScript[]>();
  private active = true;

  constructor(
    private readonly engine: Engine,
    readonly options: AgentOptions,
  ) {
    engine.on("event", (event) => this.react(event));
  }

  /** Queues a script for the next turn(s) of a thread, overriding the text directives. */
  scriptNextTurn(threadId: string, script: TurnScript): void {
    const list = this.scripted.get(threadId) ?? [];
    list.push(script);
    this.scripted.set(threadId, list);
  }

  /** Ends a `hold` step of the thread's running turn (now, or when it gets there); false when no turn runs. */
  release(threadId: string): boolean {
    const turn = this.runtimes.get(threadId)?.running;
    if (!turn) return false;
    if (turn.release) turn.release();
    else turn.releases = (turn.releases ?? 0) + 1;
    return true;
  }

  /** Stops every running turn without writing events (the process died). */
  haltAll(): void {
    this.active = false;
    for (const runtime of this.runtimes.values()) runtime.running?.abort.abort();
    this.runtimes.clear();
  }

  resume(): void {
    this.active = true;
  }

  /** Upstream startup reconciliation: turns that did not survive end with the orphan error. */
  reconcileAfterRestart(): void {
    if (this.engine.generation !== "upstream") return; // 0.0.24 has no reconciliation: stale "running" stays.
    for (const thread of this.engine.threads.values()) {
      const session = thread.session;
      if (!session || (session.status !== "running" && session.status !== "starting")) continue;
      this.setSession(thread, { status: "error", activeTurnId: null, lastError: ORPHANED_PROVIDER_SESSION_ERROR });
    }
  }

  private runtime(threadId: string): ThreadRuntime {
    let runtime = this.runtimes.get(threadId);
    if (!runtime) {
      runtime = { queue: [], ghostTurn: false };
      this.runtimes.set(threadId, runtime);
    }
    return runtime;
  }

  private react(event: WireEvent): void {
    if (!this.active || event.aggregateKind !== "thread") return;
    const thread = this.engine.threads.get(event.aggregateId);
    if (!thread) return;
    const p = event.payload;
    switch (event.type) {
      case "thread.turn-start-requested": {
        const message = thread.messages.find((m) => m.id === p.messageId);
        this.onMessage(thread, message?.text ?? "");
        break;
      }
      case "thread.turn-interrupt-requested":
        this.onInterrupt(thread);
        break;
      case "thread.session-stop-requested":
        this.onStop(thread);
        break;
      case "thread.approval-response-requested":
        this.onAnswer(thread, "approval", String(p.requestId), p.decision);
        break;
      case "thread.user-input-response-requested":
        this.onAnswer(thread, "input", String(p.requestId), p.answers);
        break;
    }
  }

  private onMessage(thread: ThreadState, text: string): void {
    const runtime = this.runtime(thread.id);
    const running = runtime.running;
    if (!running) {
      void this.runTurn(thread, text);
      return;
    }
    if (running.turnId === null) {
      runtime.ghostTurn = true;
      return;
    }
    // The 0.0.24 fork starts a new turn after the running one, whatever the provider.
    const steers = PROVIDERS[providerOf(thread)].steers && this.engine.generation === "upstream";
    if (steers) running.steers.push(text);
    else runtime.queue.push(text);
  }

  private onInterrupt(thread: ThreadState): void {
    const runtime = this.runtimes.get(thread.id);
    if (!runtime?.running && thread.session?.activeTurnId == null) {
      this.activity(thread, "error", "provider.turn.interrupt.failed", "Turn interrupt failed", {
        detail: "No active provider session is bound to this thread.",
      });
      return;
    }
    if (runtime) {
      runtime.queue = [];
      runtime.ghostTurn = false;
      runtime.running?.abort.abort();
      runtime.running = undefined;
    }
    this.setSession(thread, { status: "ready", activeTurnId: null, lastError: null });
  }

  private onStop(thread: ThreadState): void {
    const runtime = this.runtimes.get(thread.id);
    if (runtime) {
      runtime.queue = [];
      runtime.ghostTurn = false;
      runtime.running?.abort.abort();
      runtime.running = undefined;
    }
    if (thread.session) this.setSession(thread, { status: "stopped", activeTurnId: null });
  }

  private onAnswer(thread: ThreadState, kind: "approval" | "input", requestId: string, answer: unknown): void {
    const waiting = this.runtimes.get(thread.id)?.running?.waiting;
    if (waiting && waiting.kind === kind && waiting.requestId === requestId) {
      waiting.resolve(answer);
      return;
    }
    const failure = kind === "approval" ? "provider.approval.respond.failed" : "provider.user-input.respond.failed";
    this.activity(thread, "error", failure, "Provider response failed", {
      detail: `Unknown pending ${kind === "approval" ? "approval" : "user input"} request: ${requestId}`,
      requestId,
    });
  }

  // ------------------------------------------------------------------ running a turn

  private async runTurn(thread: ThreadState, text: string): Promise<void> {
    const runtime = this.runtime(thread.id);
    const turn: RunningTurn = { abort: new AbortController(), turnId: null, steers: [] };
    runtime.running = turn;
    const provider = providerOf(thread);
    const script = this.scripted.get(thread.id)?.shift() ?? scriptFromText(provider, text);
    try {
      await this.tick(turn);
      if (script.startFailure) {
        this.startFailed(thread, script.startFailure);
        return;
      }
      // Real servers report "starting" before every provider turn, even on a ready session (recordings).
      this.setSession(thread, { status: "starting", activeTurnId: null, lastError: null }, provider);
      await this.tick(turn, 2);
      // 0.0.24 reports the started session as ready before the turn runs (recorded shell rows).
      if (this.engine.generation === "fork") this.setSession(thread, { status: "ready" }, provider);
      turn.turnId = randomUUID();
      const turnCount = (thread.turnCount = (thread.turnCount ?? 0) + 1);
      this.setSession(thread, { status: "running", activeTurnId: turn.turnId, lastError: null }, provider);
      for (const step of script.steps) {
        const ended = await this.step(thread, turn, step);
        if (ended) return;
      }
      // A message that joined after the last reply gets one of its own, still in this turn.
      while (turn.steers.length > 0) {
        const steer = turn.steers.shift()!;
        await this.reply(thread, turn, `${PROVIDERS[provider].label} (steered) noted: ${steer}`);
      }
      const changes = simTurnChanges(text, turnCount);
      this.activity(thread, "info", "context-window.updated", "Context window updated", contextWindowPayload(thread, text, turnCount, changes), null);
      this.setSession(thread, { status: "ready", activeTurnId: null, lastError: null });
      // T3 captures the checkpoint after the provider's turn ended (a git workspace only).
      const checkpoint = turn.turnId ? turnCheckpoint(thread, text, turn.turnId, turnCount, this.engine.now()) : undefined;
      if (checkpoint) this.providerEvent(thread, "thread.turn-diff-completed", { threadId: thread.id, ...checkpoint });
    } catch (error) {
      if (!(error instanceof Interrupted)) throw error;
      return;
    } finally {
      if (runtime.running === turn) runtime.running = undefined;
    }
    if (runtime.ghostTurn) {
      runtime.ghostTurn = false;
      // The second turn T3 starts for a message sent while starting; nothing ever completes it.
      this.setSession(thread, { status: "running", activeTurnId: randomUUID(), lastError: null });
      runtime.running = { abort: new AbortController(), turnId: thread.session?.activeTurnId ?? null, steers: [] };
      return;
    }
    const next = runtime.queue.shift();
    if (next !== undefined) void this.runTurn(thread, next);
  }

  /** Runs one step; returns true when the turn ended inside it (failure). */
  private async step(thread: ThreadState, turn: RunningTurn, step: AgentStep): Promise<boolean> {
    switch (step.kind) {
      case "reply": {
        // Messages that joined the turn so far are answered in this reply.
        const joined = turn.steers.splice(0).map((steer) => ` [steered: ${steer.replace(/#\S+/g, "").trim()}]`);
        await this.reply(thread, turn, step.text + joined.join(""));
        return false;
      }
      case "delay":
        await this.wait(turn, step.ms);
        return false;
      case "hang":
        await this.wait(turn, Number.MAX_SAFE_INTEGER);
        return false;
      case "hold":
        await this.hold(turn);
        return false;
      case "approval": {
        const requestId = randomUUID();
        const detail = step.detail ?? "npm test";
        this.activity(
          thread,
          "approval",
          "approval.requested",
          "Command approval requested",
          {
            requestId,
            requestKind: "command",
            requestType: "command_execution_approval",
            detail,
          },
          turn.turnId,
        );
        this.activity(thread, "tool", "tool.started", "Ran command started", { itemType: "command_execution", detail }, turn.turnId);
        const decision = String(await this.waitForAnswer(turn, "approval", requestId));
        this.activity(thread, "approval", "approval.resolved", "Approval resolved", { requestId, decision }, turn.turnId);
        const accepted = decision === "accept" || decision === "acceptForSession";
        this.activity(
          thread,
          "tool",
          "tool.completed",
          accepted ? "Ran command" : "Command declined",
          {
            itemType: "command_execution",
            status: accepted ? "completed" : "declined",
            detail,
          },
          turn.turnId,
        );
        return false;
      }
      case "input": {
        const requestId = randomUUID();
        this.activity(
          thread,
          "info",
          "user-input.requested",
          "User input requested",
          {
            requestId,
            questions: [{ id: "q1", header: "Question", question: step.question, options: step.options }],
          },
          turn.turnId,
        );
        const answers = await this.waitForAnswer(turn, "input", requestId);
        this.activity(thread, "info", "user-input.resolved", "User input received", { requestId, answers }, turn.turnId);
        return false;
      }
      case "capacity":
        // A capacity limit leaves the turn running; only this warning tells (docs/t3-protocols.md, `hiddenFailure`).
        this.activity(
          thread,
          "error",
          "runtime.warning",
          "Runtime warning",
          {
            message: step.message ?? "Free-tier capacity limit reached. Waiting for capacity to continue.",
            detail: "rate_limit_exceeded",
          },
          turn.turnId,
        );
        await this.wait(turn, Number.MAX_SAFE_INTEGER);
        return false;
      case "subagents":
        for (let i = 1; i <= step.count; i++) {
          this.activity(
            thread,
            "info",
            "task.started",
            "Subagent started",
            { taskId: `task-${i}`, taskType: "subagent", detail: `Explore area ${i}` },
            turn.turnId,
          );
        }
        await this.tick(turn);
        for (let i = 1; i <= step.count; i++) {
          this.activity(
            thread,
            "info",
            "task.progress",
            "Subagent progress",
            { taskId: `task-${i}`, detail: `Reading files for area ${i}`, lastToolName: "Read" },
            turn.turnId,
          );
        }
        await this.tick(turn);
        for (let i = 1; i <= step.count; i++) {
          this.activity(
            thread,
            "info",
            "task.completed",
            "Subagent completed",
            { taskId: `task-${i}`, status: "completed", detail: `Area ${i} explored` },
            turn.turnId,
          );
        }
        return false;
      case "spawn":
        for (const child of step.children) this.spawnChild(thread, child.suffix, child.text, child.provider);
        return false;
      case "fail": {
        // As recorded on 0.0.33: the partial reply stays, the session errors, the message closes after.
        const close = step.partialText !== undefined ? await this.partialReply(thread, turn, step.partialText) : undefined;
        if (step.runtimeError) {
          this.activity(thread, "error", "runtime.error", "Runtime error", { message: step.message }, turn.turnId);
        }
        this.setSession(thread, { status: "error", activeTurnId: null, lastError: step.message });
        close?.();
        return true;
      }
    }
  }

  /** Child threads `sub.<parent>.<suffix>`, created through dispatch as Model Router does. */
  spawnChild(parent: ThreadState, suffix: string, text: string, provider?: string): string {
    const childId = `sub.${parent.id}.${suffix}`;
    const instanceId = provider ?? parent.modelSelection.instanceId;
    const model = (PROVIDERS as Record<string, { model: string }>)[instanceId]?.model ?? parent.modelSelection.model;
    const now = this.engine.now();
    if (!this.engine.threads.has(childId)) {
      this.engine.dispatch({
        type: "thread.create",
        commandId: `server:spawn-create:${randomUUID()}`,
        threadId: childId,
        projectId: parent.projectId,
        title: `${suffix} (child of ${parent.title})`,
        modelSelection: { instanceId, model },
        runtimeMode: "full-access",
        interactionMode: "default",
        branch: null,
        worktreePath: null,
        createdAt: now,
      });
    }
    this.engine.dispatch({
      type: "thread.turn.start",
      commandId: `server:spawn-turn:${randomUUID()}`,
      threadId: childId,
      message: { messageId: `msg-${randomUUID()}`, role: "user", text, attachments: [] },
      runtimeMode: "full-access",
      interactionMode: "default",
      createdAt: now,
    });
    return childId;
  }

  /** One assistant message of this turn: each call sends a `thread.message-sent` for it. */
  private assistantMessage(thread: ThreadState, turn: RunningTurn): (text: string, streaming: boolean) => void {
    const messageId = `assistant:msg_${randomUUID()}`;
    const createdAt = this.engine.now();
    return (text, streaming) =>
      this.providerEvent(thread, "thread.message-sent", {
        threadId: thread.id,
        messageId,
        role: "assistant",
        text,
        turnId: turn.turnId,
        streaming,
        createdAt,
        updatedAt: this.engine.now(),
      });
  }

  /** Streams `text` without closing the message; returns the close. */
  private async partialReply(thread: ThreadState, turn: RunningTurn, text: string): Promise<() => void> {
    const send = this.assistantMessage(thread, turn);
    await this.tick(turn);
    send(text, true);
    await this.tick(turn);
    return () => send("", false);
  }

  private async reply(thread: ThreadState, turn: RunningTurn, text: string): Promise<void> {
    if (!this.options.tokenStreaming) {
      // Buffered by default: the full text in one streaming message, then an empty close.
      (await this.partialReply(thread, turn, text))();
      return;
    }
    const send = this.assistantMessage(thread, turn);
    await this.tick(turn);
    for (const word of text.split(/(?<=\s)/)) {
      send(word, true);
      await this.wait(turn, Math.max(1, Math.floor(this.options.tickMs / 4)));
    }
    send("", false);
  }

  private startFailed(thread: ThreadState, detail: string): void {
    if (thread.session) this.setSession(thread, { status: "ready", activeTurnId: null, lastError: detail });
    this.activity(thread, "error", "provider.turn.start.failed", "Provider turn start failed", { detail }, null);
  }

  private setSession(thread: ThreadState, patch: Partial<WireSession>, provider?: ProviderKind): void {
    const kind = provider ?? providerOf(thread);
    const session: WireSession = {
      threadId: thread.id,
      status: "idle",
      providerName: kind,
      providerInstanceId: thread.modelSelection.instanceId,
      runtimeMode: thread.runtimeMode,
      activeTurnId: null,
      lastError: null,
      ...thread.session,
      ...patch,
      updatedAt: this.engine.now(),
    };
    this.providerEvent(thread, "thread.session-set", { threadId: thread.id, session });
  }

  private activity(
    thread: ThreadState,
    tone: "info" | "tool" | "approval" | "error",
    kind: string,
    summary: string,
    payload: Record<string, unknown>,
    turnId: string | null = thread.session?.activeTurnId ?? null,
  ): void {
    this.providerEvent(thread, "thread.activity-appended", {
      threadId: thread.id,
      activity: { id: randomUUID(), tone, kind, summary, payload, turnId, createdAt: this.engine.now() },
    });
  }

  private providerEvent(thread: ThreadState, type: string, payload: Record<string, unknown>): void {
    const commandId = `provider:${randomUUID()}:${type.replace("thread.", "thread-")}:${randomUUID()}`;
    this.engine.append("thread", thread.id, type, commandId, payload);
  }

  private waitForAnswer(turn: RunningTurn, kind: "approval" | "input", requestId: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new Interrupted());
      if (turn.abort.signal.aborted) return onAbort();
      turn.abort.signal.addEventListener("abort", onAbort, { once: true });
      turn.waiting = {
        kind,
        requestId,
        resolve: (answer) => {
          turn.abort.signal.removeEventListener("abort", onAbort);
          turn.waiting = undefined;
          resolve(answer);
        },
      };
    });
  }

  private hold(turn: RunningTurn): Promise<void> {
    if (turn.releases) {
      turn.releases--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new Interrupted());
      if (turn.abort.signal.aborted) return onAbort();
      turn.abort.signal.addEventListener("abort", onAbort, { once: true });
      turn.release = () => {
        turn.abort.signal.removeEventListener("abort", onAbort);
        turn.release = undefined;
        resolve();
      };
    });
  }

  private tick(turn: RunningTurn, factor = 1): Promise<void> {
    return this.wait(turn, this.options.tickMs * factor);
  }

  private async wait(turn: RunningTurn, ms: number): Promise<void> {
    try {
      await sleep(Math.min(ms, 2 ** 31 - 1), undefined, { signal: turn.abort.signal });
    } catch {
      throw new Interrupted();
    }
  }
}

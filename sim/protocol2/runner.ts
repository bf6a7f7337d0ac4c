// The scripted agent of a simulated protocol-2 server (sim/protocol2/engine.ts): starts runs as
// they come off the queue, attaches the provider, plays each run's steps (replies, tools, files,
// approvals and questions, subagents, failures, holds and background work) one tick apart, takes
// steers, and ends runs completed, failed, interrupted or cancelled, in the real engine's order.
// Assistant text is buffered until the provider turn ends unless `enableLegacyTokenStreaming` is on.
import { baselineCheckpoint, providerTurnUsage, runCheckpoint } from "./turn-changes";
import { randomUUID } from "node:crypto";
import type { ClientCommandV2 } from "../../shared/t3/protocol2/commands";
import type { AgentStep, EngineCore, PendingReply, Runner, ThreadState } from "./engine-types";
import * as ids from "./ids";
import { openRequest } from "./requests";
import { retryThroughLimit } from "./retries";
import { startSubagent } from "./subagents";
import type { AppThread, Checkpoint, Run, RunStatus } from "./model";

export class ScriptedAgent {
  /** The message each queued or starting run was dispatched with, until the run starts. */
  readonly pendingTexts = new Map<
    string,
    { text: string; steps: AgentStep[]; createdBy: AppThread["createdBy"]; creationSource: AppThread["creationSource"] }
  >();
  private halted = false;

  constructor(private readonly engine: EngineCore) {}

  /** Starts a run (now, or when the one before it ends): the user's turn item, then the provider after a tick. */
  startRun(state: ThreadState, queued: Run): void {
    const pending = this.pendingTexts.get(queued.id);
    this.pendingTexts.delete(queued.id);
    const wasQueued = queued.status === "queued";
    if (wasQueued) this.engine.putProviderThread(state, "not_loaded", queued);
    const run: Run = { ...queued, status: "starting", queuePosition: null };
    state.thread.activeProviderThreadId = run.providerThreadId;
    const base = this.engine.newItem(state, run, "completed", null, { id: ids.userMessageItemId(run.userMessageId) });
    this.engine.putItem(state, {
      ...base,
      type: "user_message",
      createdBy: pending?.createdBy ?? "user",
      creationSource: pending?.creationSource ?? "web",
      messageId: run.userMessageId,
      inputIntent: wasQueued ? "queued_turn" : "turn_start",
      text: pending?.text ?? "",
      attachments: [],
    });
    if (wasQueued) {
      this.engine.putRun(state, run);
      this.renumberQueue(state);
    } else {
      this.engine.upsert(state.runs, run);
    }
    const runner: Runner = {
      run,
      steps: pending?.steps ?? [{ kind: "reply", text: "Done." }],
      index: 0,
      phase: "starting",
      releases: 0,
      replies: [],
      steered: [],
      ...(pending && { text: pending.text }),
    };
    state.runner = runner;
    this.schedule(state, () => this.attachProvider(state, runner));
  }

  /** The provider session takes the run: running, then the provider's turn starts. */
  private attachProvider(state: ThreadState, runner: Runner): void {
    if (state.runner !== runner || runner.phase !== "starting") return;
    this.engine.putSession(state);
    this.engine.putProviderThread(state, "active", runner.run);
    this.setRunStatus(state, runner, "running", { startedAt: this.engine.now() });
    this.engine.setAttempt(state, runner.run, "running");
    this.engine.setRootNode(state, runner.run, "running");
    runner.phase = "running";
    this.schedule(state, () => {
      if (state.runner !== runner || runner.phase !== "running") return;
      const native = randomUUID();
      const now = this.engine.now();
      runner.providerTurn = {
        id: ids.providerTurnId(state.provider, native),
        providerThreadId: runner.run.providerThreadId!,
        nodeId: runner.run.rootNodeId!,
        runAttemptId: runner.run.activeAttemptId!,
        nativeTurnRef: { driver: state.provider, nativeId: native, strength: "strong" },
        ordinal: state.providerTurns.length + 1,
        status: "running",
        startedAt: now,
        completedAt: null,
      };
      this.engine.putProviderTurn(state, runner, "running");
      this.schedule(state, () => this.step(state));
    });
  }

  /** A steer joins the running run: the user's message in the same run, and the provider adjusts its answer. */
  steer(state: ThreadState, runner: Runner, command: Extract<ClientCommandV2, { type: "message.dispatch" }>): void {
    const run = runner.run;
    const now = this.engine.now();
    this.engine.putMessage(state, {
      createdBy: command.createdBy,
      creationSource: command.creationSource,
      id: command.messageId,
      threadId: state.thread.id,
      runId: run.id,
      nodeId: run.rootNodeId,
      role: "user",
      text: command.text,
      attachments: [],
      streaming: false,
      createdAt: now,
      updatedAt: now,
    });
    // Bound to the provider turn it steers, as recorded.
    const base = this.engine.newItem(state, run, "completed", null, {
      id: ids.userMessageItemId(command.messageId),
      providerTurnId: runner.providerTurn?.id ?? null,
    });
    this.engine.putItem(state, {
      ...base,
      type: "user_message",
      createdBy: command.createdBy,
      creationSource: command.creationSource,
      messageId: command.messageId,
      inputIntent: "steer",
      text: command.text,
      attachments: [],
    });
    // The provider folds the steer into the answer it is writing. Whatever the run waits on (a held
    // task, a request) it keeps waiting on: a steer never lets a held run slip past its release.
    const note = ` [steered: ${command.text.replace(/#\S+/g, "").trim()}]`;
    const last = runner.replies.at(-1);
    if (last) last.text += note;
    else runner.steered.push(note);
  }

  private setRunStatus(state: ThreadState, runner: Runner, status: RunStatus, extra: Partial<Run> = {}): void {
    runner.run = { ...runner.run, status, ...extra };
    this.engine.putRun(state, runner.run);
  }

  renumberQueue(state: ThreadState): void {
    const queued = state.runs.filter((run) => run.status === "queued").sort((a, b) => a.ordinal - b.ordinal);
    queued.forEach((run, index) => {
      if (run.queuePosition !== index + 1) this.engine.putRun(state, { ...run, queuePosition: index + 1 });
    });
  }

  schedule(state: ThreadState, next: () => void): void {
    const runner = state.runner;
    if (!runner || this.halted) return;
    clearTimeout(runner.timer);
    runner.timer = setTimeout(() => {
      if (!this.halted) next();
    }, this.engine.tickMs);
  }

  /**
   * Assistant text. With legacy token streaming it goes out as it comes (cumulative updates, then
   * the final one). Otherwise each message waits for the end of the provider turn; a steer's text
   * joins the message being written.
   */
  private say(state: ThreadState, runner: Runner, said: string, chunks: number): void {
    const text = said + runner.steered.join("");
    runner.steered = [];
    const native = `msg_${randomUUID()}`;
    const reply: PendingReply = {
      nativeId: native,
      text,
      startedAt: this.engine.now(),
      itemId: ids.nativeItemId(state.provider, native),
      messageId: ids.assistantMessageId(state.provider, native),
    };
    if (!this.engine.settings.enableLegacyTokenStreaming) {
      runner.replies.push(reply);
      return;
    }
    // The text is cumulative on the wire: each update carries everything so far.
    for (let chunk = 1; chunk < chunks; chunk++) this.putReply(state, runner, reply, text.slice(0, Math.ceil((text.length * chunk) / chunks)), true);
    this.putReply(state, runner, reply, text, false);
  }

  /** One assistant message as its turn item; its conversation message (and, once final, its node) come first. */
  private putReply(state: ThreadState, runner: Runner, reply: PendingReply, text: string, streaming: boolean): void {
    const run = runner.run;
    const nodeId = ids.nativeNodeId(state.provider, reply.nativeId);
    const existing = state.items.find((item) => item.id === reply.itemId);
    if (!streaming)
      this.engine.providerNode(state, runner, nodeId, "assistant_message", "completed", {
        nativeItemRef: { driver: state.provider, nativeId: reply.nativeId, strength: "strong" },
      });
    this.engine.putMessage(state, {
      createdBy: "agent",
      creationSource: "provider",
      id: reply.messageId,
      threadId: state.thread.id,
      runId: run.id,
      nodeId,
      role: "assistant",
      text,
      attachments: [],
      streaming,
      createdAt: reply.startedAt,
      updatedAt: this.engine.now(),
    });
    const base =
      existing ??
      this.engine.newItem(state, run, "running", null, { id: reply.itemId, nodeId, providerTurnId: runner.providerTurn?.id ?? null, native: reply.nativeId });
    this.engine.putItem(state, {
      ...base,
      status: streaming ? "running" : "completed",
      completedAt: streaming ? null : this.engine.now(),
      type: "assistant_message",
      messageId: reply.messageId,
      text,
      streaming,
    });
  }

  /** The provider turn is over (answered, failed or interrupted): the buffered messages go out, whole. */
  private flushReply(state: ThreadState, runner: Runner): void {
    if (runner.steered.length > 0) this.say(state, runner, "", 1);
    const replies = runner.replies;
    runner.replies = [];
    for (const reply of replies) this.putReply(state, runner, reply, reply.text, false);
  }

  step(state: ThreadState): void {
    this.stepOnce(state);
    // Not a wire event: buffered text and holds change nothing a client sees; tests wait on it.
    this.engine.emit("step", state.thread.id);
  }

  private stepOnce(state: ThreadState): void {
    const runner = state.runner;
    if (!runner || runner.blockedOn || runner.phase !== "running" || this.halted) return;
    const step = runner.steps[runner.index];
    if (!step) {
      this.settle(state, runner);
      return;
    }
    runner.index++;
    const run = runner.run;
    const turnId = runner.providerTurn?.id ?? null;
    switch (step.kind) {
      case "reply":
        this.say(state, runner, step.text, Math.max(1, step.chunks ?? 1));
        break;
      case "tool": {
        if (runner.openCommand) {
          const open = runner.openCommand;
          runner.openCommand = undefined;
          this.engine.providerNode(state, runner, open.nodeId!, "tool_call", step.exitCode ? "failed" : "completed");
          this.engine.putItem(state, {
            ...open,
            status: step.exitCode ? "failed" : "completed",
            completedAt: this.engine.now(),
            output: "",
            exitCode: step.exitCode ?? 0,
          });
          break;
        }
        const native = `call_${randomUUID()}`;
        const node = this.engine.providerNode(state, runner, ids.nativeNodeId(state.provider, native), "tool_call", "running", {
          nativeItemRef: { driver: state.provider, nativeId: native, strength: "strong" },
        });
        const base = this.engine.newItem(state, run, "running", null, {
          id: ids.nativeItemId(state.provider, native),
          nodeId: node.id,
          providerTurnId: turnId,
          native,
        });
        this.engine.putItem(state, { ...base, type: "command_execution", input: step.command, output: null });
        this.engine.providerNode(state, runner, node.id, "tool_call", step.exitCode ? "failed" : "completed");
        this.engine.putItem(state, {
          ...base,
          status: step.exitCode ? "failed" : "completed",
          completedAt: this.engine.now(),
          type: "command_execution",
          input: step.command,
          output: "",
          exitCode: step.exitCode ?? 0,
        });
        break;
      }
      case "file": {
        const native = `call_${randomUUID()}`;
        const base = this.engine.newItem(state, run, "completed", step.fileName, {
          id: ids.nativeItemId(state.provider, native),
          nodeId: ids.nativeNodeId(state.provider, native),
          providerTurnId: turnId,
          native,
        });
        this.engine.putItem(state, { ...base, type: "file_change", fileName: step.fileName, additions: 3, deletions: 1 });
        break;
      }
      case "approval":
      case "question": {
        openRequest(this.engine, state, runner, step);
        return;
      }
      case "subagent": {
        startSubagent(this.engine, state, runner, step, {
          resume: () => this.schedule(state, () => this.step(state)),
          halted: () => this.halted,
        });
        return;
      }
      case "fail": {
        this.flushReply(state, runner);
        this.engine.putProviderTurn(state, runner, "failed");
        const base = this.engine.newItem(state, run, "failed", null, { providerTurnId: turnId });
        this.engine.putItem(state, {
          ...base,
          completedAt: this.engine.now(),
          type: "error",
          failure: {
            class: step.failureClass,
            message: step.message,
            code: step.code ?? null,
            retryable: step.failureClass === "transport_error" ? true : null,
          },
        });
        this.endRun(state, runner, "failed");
        return;
      }
      case "retry":
        retryThroughLimit(this.engine, state, runner, step, () => this.step(state));
        return;
      case "hold":
        if (runner.releases > 0) {
          runner.releases--;
          break;
        }
        runner.blockedOn = { kind: "hold" };
        return;
      case "background": {
        // The answer is final; the run stays waiting until its background work drains (release).
        if (runner.releases > 0) {
          runner.releases--;
          break;
        }
        state.pendingBackgroundTasks = [{ taskId: `task-${ids.shortId()}`, description: step.description }];
        runner.blockedOn = { kind: "background" };
        this.endProviderTurn(state, runner);
        return;
      }
    }
    this.schedule(state, () => this.step(state));
  }

  /** The provider turn ended with an answer: the buffered reply, then waiting while the checkpoint is taken. */
  private settle(state: ThreadState, runner: Runner): void {
    this.endProviderTurn(state, runner);
    this.schedule(state, () => this.finishRun(state, runner));
  }

  private endProviderTurn(state: ThreadState, runner: Runner): void {
    this.flushReply(state, runner);
    if (runner.providerTurn && this.engine.reportsTokenUsage)
      runner.providerTurn = { ...runner.providerTurn, ...providerTurnUsage(state, runner.text ?? "", runner.run.ordinal) };
    this.engine.putProviderTurn(state, runner, "completed");
    this.engine.setAttempt(state, runner.run, "completed");
    runner.phase = "waiting";
    this.setRunStatus(state, runner, "waiting");
    this.engine.setRootNode(state, runner.run, "waiting");
    this.engine.putProviderThread(state, "idle", runner.run);
  }

  /** Checkpoints captured: the run completes and the next queued run starts. */
  private finishRun(state: ThreadState, runner: Runner): void {
    if (state.runner !== runner) return;
    const scope = ids.checkpointScopeId(state.thread.id);
    const nodeId = runner.run.rootNodeId!;
    const now = this.engine.now();
    // The first run also captures the baseline the thread started from.
    const ordinals = state.checkpoints.length === 0 ? [0, 1] : [state.checkpoints.length];
    // A run that waited in the queue first captures the scope's earlier checkpoints again, as run-less
    // ones at its own node: the real engine did so (07-queue.json, 08-start-immediately.json).
    const queued = state.items.some((item) => item.type === "user_message" && item.runId === runner.run.id && item.inputIntent === "queued_turn");
    for (const earlier of queued ? [...state.checkpoints] : []) {
      const again: Checkpoint = { ...earlier, runId: null, nodeId, appRunOrdinal: null };
      this.engine.upsert(state.checkpoints, again);
      this.engine.emitEvent(state, "checkpoint.captured", again, { nodeId, driver: true });
    }
    let checkpointId = "";
    for (const ordinal of ordinals) {
      const previous = state.checkpoints.at(-1);
      checkpointId = ids.checkpointId(scope, ordinal);
      const checkpoint: Checkpoint = {
        id: checkpointId,
        threadId: state.thread.id,
        scopeId: scope,
        runId: ordinal === 0 ? null : runner.run.id,
        nodeId,
        parentCheckpointId: previous?.id ?? null,
        ordinalWithinScope: ordinal,
        appRunOrdinal: ordinal === 0 ? null : runner.run.ordinal,
        ref: `refs/t3/orchestration-v2/checkpoints/${Buffer.from(state.thread.id).toString("base64url")}/ordinal/${ordinal}`,
        ...(ordinal === 0 ? baselineCheckpoint(runner.text ?? "") : runCheckpoint(state, runner.text ?? "", runner.run.ordinal)),
        capturedAt: now,
      };
      this.engine.upsert(state.checkpoints, checkpoint);
      this.engine.emitEvent(state, "checkpoint.captured", checkpoint, { ...(ordinal > 0 && { runId: runner.run.id }), nodeId, driver: true });
    }
    const base = this.engine.newItem(state, runner.run, "completed", null, { id: ids.checkpointItemId(state.provider, checkpointId) });
    this.engine.putItem(state, { ...base, type: "checkpoint", checkpointId, scopeId: scope, files: state.checkpoints.at(-1)?.files ?? [] });
    this.endRun(state, runner, "completed", undefined, checkpointId);
  }

  /** `run.interrupt` accepted: the request item now, the provider's stop (and partial reply) a tick later. */
  interrupt(state: ThreadState, runner: Runner, reason: string | undefined): void {
    const run = runner.run;
    const requests = state.items.filter((item) => item.type === "run_interrupt_request" && item.runId === run.id).length;
    // The request names the provider turn it stops, as recorded; the result does not.
    const base = this.engine.newItem(state, run, "completed", "Interrupt requested", {
      id: ids.runItemId(run.id, "interrupt-request", requests + 1),
      providerTurnId: runner.providerTurn?.id ?? null,
    });
    this.engine.putItem(state, { ...base, type: "run_interrupt_request", message: reason ?? "Interrupt requested" });
    runner.phase = "interrupting";
    runner.blockedOn = undefined;
    // A halted engine has no provider to wait for: the run ends at once (its queue stays put).
    if (this.halted) {
      this.endRun(state, runner, "interrupted", "Run interrupted by user");
      return;
    }
    this.schedule(state, () => {
      if (state.runner !== runner) return;
      this.endRun(state, runner, "interrupted", "Run interrupted by user");
    });
  }

  /** Ends the active run with its final status; the provider turn and attempt end with it, then the queue moves. */
  endRun(state: ThreadState, runner: Runner, status: RunStatus, notice?: string, checkpointId?: string): void {
    clearTimeout(runner.timer);
    const run = runner.run;
    if (status !== "completed") {
      this.flushReply(state, runner);
      if (runner.providerTurn?.status === "running") this.engine.putProviderTurn(state, runner, status === "failed" ? "failed" : "interrupted");
      this.engine.setAttempt(state, run, status === "failed" ? "failed" : status === "cancelled" ? "cancelled" : "interrupted");
    }
    for (const request of state.requests) {
      if (request.status !== "pending") continue;
      this.engine.putRequest(state, { ...request, status: "cancelled", resolvedAt: this.engine.now() }, run.id);
      const item = state.items.find((entry) => (entry.type === "approval_request" || entry.type === "user_input_request") && entry.requestId === request.id);
      if (item) this.engine.putItem(state, { ...item, status: "cancelled", completedAt: this.engine.now() });
    }
    for (const subagent of state.subagents) {
      if (subagent.runId === run.id && (subagent.status === "running" || subagent.status === "pending")) {
        this.engine.putSubagent(state, { ...subagent, status: status === "failed" ? "failed" : "interrupted", completedAt: this.engine.now() });
      }
    }
    if (status === "interrupted") {
      const results = state.items.filter((item) => item.type === "run_interrupt_result" && item.runId === run.id).length;
      this.engine.putItem(state, {
        ...this.engine.newItem(state, run, "interrupted", "Interrupted", { id: ids.runItemId(run.id, "interrupt-result", results + 1) }),
        type: "run_interrupt_result",
        message: notice ?? "Run interrupted by user",
      });
    } else if (notice) {
      this.engine.putItem(state, { ...this.engine.newItem(state, run, "completed", null), type: "system_notice", message: notice });
    }
    state.pendingBackgroundTasks = [];
    state.runner = undefined;
    this.setRunStatus(state, runner, status, { completedAt: this.engine.now(), ...(checkpointId && { checkpointId }) });
    const node = state.nodes.find((entry) => entry.id === run.rootNodeId);
    if (node)
      this.engine.setRootNode(
        state,
        runner.run,
        status === "completed" ? "completed" : status === "failed" ? "failed" : status === "cancelled" ? "cancelled" : "interrupted",
      );
    if (status !== "completed") this.engine.putProviderThread(state, "idle", runner.run);
    const next = state.runs.filter((entry) => entry.status === "queued").sort((a, b) => a.ordinal - b.ordinal)[0];
    if (next && !this.halted) this.startRun(state, next);
  }

  scriptNextRun(threadId: string, steps: AgentStep[]): void {
    const state = this.engine.threads.get(threadId);
    if (state) state.nextScript = steps;
  }

  /**
   * Ends a `hold` or `background` step of the thread's active run. A run that has not reached its
   * hold yet (still starting, or a step before it) gets the release when it does: the caller says
   * the long task is over, whenever the agent gets there.
   */
  release(threadId: string): boolean {
    const state = this.engine.threads.get(threadId);
    const runner = state?.runner;
    if (!state || !runner) return false;
    if (!runner.blockedOn || (runner.blockedOn.kind !== "hold" && runner.blockedOn.kind !== "background")) {
      const ahead = runner.steps.slice(runner.index).some((step) => step.kind === "hold" || step.kind === "background");
      if (ahead) runner.releases++;
      return ahead;
    }
    if (runner.blockedOn.kind === "background") {
      state.pendingBackgroundTasks = [];
      runner.blockedOn = undefined;
      this.finishRun(state, runner);
      return true;
    }
    runner.blockedOn = undefined;
    this.schedule(state, () => this.step(state));
    return true;
  }

  halt(): void {
    this.halted = true;
    for (const state of this.engine.threads.values()) clearTimeout(state.runner?.timer);
  }

  resume(): void {
    this.halted = false;
  }

  /** After a restart, runs the server was driving are gone: they end interrupted; their queues restart. */
  reconcileAfterRestart(): void {
    for (const state of this.engine.threads.values()) {
      const runner = state.runner;
      if (!runner) continue;
      this.endRun(state, runner, "interrupted", "The server restarted during this run.");
    }
  }
}

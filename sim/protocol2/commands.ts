// The command decider of a simulated protocol-2 server (sim/protocol2/engine.ts): checks each V2
// command as T3's real engine does, refusing with its messages (DispatchError), and writes what it
// decides as entity events; runs it starts are the scripted agent's (sim/protocol2/runner.ts).
// A command id seen before is answered with its first sequence, as T3's receipts do.
import type { ClientCommandV2 } from "../../shared/t3/protocol2/commands";
import { PROVIDERS, type ProviderKind } from "../providers";
import { DispatchError, type EngineCore } from "./engine-types";
import * as ids from "./ids";
import { type CheckpointScope, type Run, TERMINAL_RUN_STATUSES, V2_ACTIVE_STEERING } from "./model";
import type { ScriptedAgent } from "./runner";
import { stepsFromText } from "./steps";

export class CommandDecider {
  private readonly receipts = new Map<string, number>();

  constructor(
    private readonly engine: EngineCore,
    private readonly agent: ScriptedAgent,
  ) {}

  dispatch(command: ClientCommandV2): number {
    const seen = this.receipts.get(command.commandId);
    if (seen !== undefined) return seen;
    this.apply(command);
    // The result is the sequence of the command's last event (or the current one if it changed nothing).
    const sequence = this.engine.sequence;
    this.receipts.set(command.commandId, sequence);
    return sequence;
  }

  /** `projects.mutate` with `project.create`: the project row, and a shell refresh after it. */
  createProject(command: { commandId: string; projectId: string; title: string; workspaceRoot: string }): Record<string, unknown> {
    const existing = this.engine.projects.get(command.projectId);
    const project = existing ?? this.engine.addProject({ id: command.projectId, title: command.title, workspaceRoot: command.workspaceRoot });
    if (!existing) this.engine.emit("enrichment");
    return this.engine.projectRecord(project);
  }

  private apply(command: ClientCommandV2): void {
    const fail = (message: string, detail?: string): never => {
      throw new DispatchError(command.commandId, command.type, message, detail ?? message);
    };
    switch (command.type) {
      case "thread.create": {
        if (this.engine.threads.has(command.threadId)) fail(`Thread '${command.threadId}' already exists.`);
        // The real engine takes a thread for a project it does not know; its first message fails.
        const provider = (command.modelSelection.instanceId in PROVIDERS ? command.modelSelection.instanceId : "codex") as ProviderKind;
        this.engine.createThread({
          threadId: command.threadId,
          projectId: command.projectId,
          title: command.title,
          provider,
          model: command.modelSelection.model,
          createdBy: command.createdBy,
          creationSource: command.creationSource,
          ...(command.runtimeMode && { runtimeMode: command.runtimeMode }),
        });
        return;
      }
      case "thread.metadata.update": {
        const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
        if (command.title !== undefined) state.thread.title = command.title;
        if (command.branch !== undefined) state.thread.branch = command.branch;
        if (command.worktreePath !== undefined) state.thread.worktreePath = command.worktreePath;
        this.engine.putThread(state, "thread.metadata-updated");
        return;
      }
      case "thread.archive":
      case "thread.unarchive": {
        const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
        const archive = command.type === "thread.archive";
        // T3's V2 decider archives it (cancelling queued runs, then detaching the provider session); what
        // that does to the running run is not modelled here, so the simulator refuses instead.
        if (archive && state.runner) fail("Cannot archive a thread with an active run.");
        state.location = archive ? "archive" : "active";
        state.thread.archivedAt = archive ? this.engine.now() : null;
        this.engine.putThread(state, archive ? "thread.archived" : "thread.unarchived");
        return;
      }
      case "thread.delete": {
        const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
        if (state.runner) this.agent.endRun(state, state.runner, "cancelled", "The thread was deleted.");
        for (const run of state.runs)
          if (run.status === "queued") this.engine.putRun(state, { ...run, status: "cancelled", queuePosition: null, completedAt: this.engine.now() });
        state.thread.deletedAt = this.engine.now();
        this.engine.putThread(state, "thread.deleted");
        return;
      }
      case "message.dispatch":
        return this.messageDispatch(command);
      case "runtime-request.respond":
        return this.respond(command);
      case "run.interrupt": {
        const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
        const run = state.runs.find((entry) => entry.id === command.runId);
        if (!run) fail(`Run ${command.runId} does not exist.`);
        if (run!.status === "queued") fail(`Run ${command.runId} is queued; cancel it with queued-run.cancel.`);
        const runner = state.runner;
        // Once the answer is final (waiting) the run finishes on its own: T3 refuses to interrupt it.
        if (TERMINAL_RUN_STATUSES.has(run!.status) || runner?.run.id !== run!.id || runner.phase === "waiting" || runner.phase === "interrupting")
          fail(`Run ${command.runId} is not interruptible.`);
        this.agent.interrupt(state, runner!, command.reason);
        return;
      }
      case "thread.snooze": {
        // The real engine's checks: not archived, a wake time in the future, no pending request, no queued run.
        const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
        if (state.thread.archivedAt !== null) fail(`Thread ${command.threadId} is archived.`);
        if (!(Date.parse(command.snoozedUntil) > Date.parse(this.engine.now())))
          fail(`Thread ${command.threadId} snooze wake time ${command.snoozedUntil} is not in the future.`);
        if (state.requests.some((request) => request.status === "pending"))
          fail(`Thread ${command.threadId} has a pending approval or user-input request and cannot be snoozed.`);
        if (state.runs.some((run) => run.status === "queued")) fail(`Thread ${command.threadId} has a queued run and cannot be snoozed.`);
        const sameWake = state.thread.snoozedUntil !== null && Date.parse(state.thread.snoozedUntil) === Date.parse(command.snoozedUntil);
        state.thread.snoozedAt = sameWake ? state.thread.snoozedAt : this.engine.now();
        state.thread.snoozedUntil = new Date(command.snoozedUntil).toISOString();
        this.engine.putThread(state, "thread.snoozed");
        return;
      }
      case "thread.unsnooze": {
        // The real engine: an archived thread refuses; an awake thread stays awake (no event).
        const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
        if (state.thread.archivedAt !== null) fail(`Thread ${command.threadId} is archived.`);
        if (state.thread.snoozedUntil === null) return;
        state.thread.snoozedUntil = null;
        state.thread.snoozedAt = null;
        this.engine.putThread(state, "thread.unsnoozed");
        return;
      }
      case "queued-run.cancel": {
        const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
        const run = state.runs.find((entry) => entry.id === command.runId);
        if (!run || run.status !== "queued") fail(`Run ${command.runId} is not queued.`);
        this.engine.putRun(state, { ...run!, status: "cancelled", queuePosition: null, completedAt: this.engine.now() });
        this.agent.renumberQueue(state);
        return;
      }
    }
  }

  private messageDispatch(command: Extract<ClientCommandV2, { type: "message.dispatch" }>): void {
    const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
    const fail = (message: string): never => {
      throw new DispatchError(command.commandId, command.type, message, message);
    };
    if (command.attachments.some((attachment) => typeof attachment === "object" && attachment !== null && "dataUrl" in attachment)) {
      fail("Inline attachment data is not accepted; persist attachments first.");
    }
    if (!this.engine.projects.has(state.thread.projectId)) fail(`Project ${state.thread.projectId} was not found for thread ${state.thread.id}.`);
    const runner = state.runner;
    const mode = command.dispatchMode;
    if (mode.type === "defer_start" || mode.type === "restart_active") fail(`Dispatch mode ${mode.type} is not supported by this simulator.`);
    if (mode.type === "steer_active") {
      const target = state.runs.find((run) => run.id === mode.targetRunId);
      if (!target) fail(`Target run ${mode.targetRunId} does not exist.`);
      // A run that is finishing (waiting) or over cannot take a steer; T3 names the run's state.
      if (
        !runner ||
        runner.run.id !== mode.targetRunId ||
        runner.phase === "waiting" ||
        runner.phase === "interrupting" ||
        runner.blockedOn?.kind === "background"
      ) {
        fail(`Target run ${mode.targetRunId} is ${runner?.run.id === mode.targetRunId ? "completed" : target!.status} and cannot be steered.`);
      }
      // The run reads running a moment before its provider turn does; a steer needs the turn.
      if (runner!.providerTurn?.status !== "running") fail(`No running provider turn found for active run ${mode.targetRunId}.`);
      if (!V2_ACTIVE_STEERING[state.provider]) fail(`${PROVIDERS[state.provider].label} does not support steering.`);
      this.agent.steer(state, runner!, command);
      return;
    }
    // New activity wakes a snoozed thread, as the real engine does.
    if (state.thread.snoozedUntil !== null) {
      state.thread.snoozedUntil = null;
      state.thread.snoozedAt = null;
      this.engine.putThread(state, "thread.unsnoozed");
    }
    const ordinal = state.runs.length + 1;
    const busy = runner !== undefined || state.runs.some((run) => run.status === "queued");
    const id = ids.runId(state.thread.id, ordinal);
    const rootNodeId = ids.rootNodeId(id);
    const providerThreadId = state.providerThreads[0]?.id ?? ids.providerThreadId(state.provider, id);
    const now = this.engine.now();
    const run: Run = {
      id,
      threadId: state.thread.id,
      ordinal,
      providerInstanceId: state.thread.providerInstanceId,
      modelSelection: command.modelSelection
        ? { instanceId: command.modelSelection.instanceId, model: command.modelSelection.model }
        : state.thread.modelSelection,
      providerThreadId,
      userMessageId: command.messageId,
      rootNodeId,
      activeAttemptId: ids.attemptId(id),
      status: busy ? "queued" : "starting",
      queuePosition: busy ? state.runs.filter((entry) => entry.status === "queued").length + 1 : null,
      requestedAt: now,
      startedAt: null,
      completedAt: null,
      checkpointId: null,
      contextHandoffId: null,
    };
    const steps = state.nextScript ?? stepsFromText(state.provider, command.text);
    state.nextScript = undefined;
    this.agent.pendingTexts.set(run.id, { text: command.text, steps, createdBy: command.createdBy, creationSource: command.creationSource });
    if (!busy) this.engine.putProviderThread(state, "not_loaded", run);
    this.engine.putRun(state, run, "run.created");
    this.engine.putAttempt(
      state,
      {
        id: run.activeAttemptId!,
        runId: id,
        attemptOrdinal: 1,
        rootNodeId,
        providerInstanceId: run.providerInstanceId,
        providerThreadId,
        providerTurnId: null,
        reason: "initial",
        status: "pending",
        startedAt: null,
        completedAt: null,
      },
      "run-attempt.created",
    );
    this.engine.putNode(state, {
      id: rootNodeId,
      threadId: state.thread.id,
      runId: id,
      parentNodeId: null,
      rootNodeId,
      kind: "root_turn",
      status: "pending",
      countsForRun: true,
      providerThreadId,
      providerTurnId: null,
      nativeItemRef: null,
      runtimeRequestId: null,
      checkpointScopeId: ids.checkpointScopeId(state.thread.id),
      startedAt: null,
      completedAt: null,
    });
    const scope: CheckpointScope = {
      id: ids.checkpointScopeId(state.thread.id),
      threadId: state.thread.id,
      runId: id,
      nodeId: rootNodeId,
      parentScopeId: null,
      providerThreadId,
      kind: "root_run",
      ordinalWithinParent: 0,
      advancesAppRunCount: true,
      cwd: this.engine.projects.get(state.thread.projectId)?.workspaceRoot ?? "/",
      createdAt: now,
    };
    this.engine.upsert(state.checkpointScopes, scope);
    this.engine.emitEvent(state, "checkpoint-scope.created", scope, { runId: id, nodeId: rootNodeId });
    // The message exists from the dispatch on; a queued one gets its turn item only when its run starts.
    this.engine.putMessage(state, {
      createdBy: command.createdBy,
      creationSource: command.creationSource,
      id: command.messageId,
      threadId: state.thread.id,
      runId: id,
      nodeId: rootNodeId,
      role: "user",
      text: command.text,
      attachments: [],
      streaming: false,
      createdAt: now,
      updatedAt: now,
    });
    if (!busy) this.agent.startRun(state, run);
  }

  private respond(command: Extract<ClientCommandV2, { type: "runtime-request.respond" }>): void {
    const state = this.engine.requireThread(command.threadId, command.type, command.commandId);
    const request = state.requests.find((entry) => entry.id === command.requestId);
    const fail = (message: string): never => {
      throw new DispatchError(command.commandId, command.type, message, message);
    };
    if (!request) fail(`Runtime request '${command.requestId}' does not exist.`);
    if (request!.status !== "pending") fail(`Runtime request '${command.requestId}' is ${request!.status}.`);
    const item = state.items.find((entry) => (entry.type === "approval_request" || entry.type === "user_input_request") && entry.requestId === request!.id);
    if (request!.kind === "user_input") {
      if (!command.answers) fail("A user-input request needs answers.");
      const questions = item?.type === "user_input_request" ? item.questions : [];
      for (const question of questions) {
        const answer = command.answers![question.id];
        const empty = answer === undefined || answer === null || answer === "" || (Array.isArray(answer) && answer.length === 0);
        if (question.required && empty) fail(`Question '${question.id}' requires an answer.`);
        if (Array.isArray(answer) && !question.multiSelect) fail(`Question '${question.id}' takes one answer.`);
      }
    } else {
      if (!command.decision) fail("An approval request needs a decision.");
      const offered = item?.type === "approval_request" ? item.options?.map((option) => option.decision) : undefined;
      if (offered && !offered.includes(command.decision!)) fail(`Decision '${command.decision}' was not offered.`);
    }
    const runner = state.runner;
    this.engine.responses.set(request!.id, {
      ...(command.decision !== undefined && { decision: command.decision }),
      ...(command.answers !== undefined && { answers: command.answers }),
    });
    // The recorded engine resolves a request without saying how it was answered.
    this.engine.putRequest(state, { ...request!, status: "resolved", resolvedAt: this.engine.now() }, runner?.run.id ?? null);
    if (runner)
      this.engine.providerNode(state, runner, request!.nodeId, request!.kind === "user_input" ? "user_input_request" : "approval_request", "completed");
    if (item) this.engine.putItem(state, { ...item, status: "completed", completedAt: this.engine.now() });
    if (runner?.blockedOn?.kind === "request" && runner.blockedOn.requestId === request!.id) {
      runner.blockedOn = undefined;
      if (command.decision === "decline" || command.decision === "cancel") {
        // The guarded tool does not run.
        if (runner.steps[runner.index]?.kind === "tool") runner.index++;
        if (runner.openCommand) {
          this.engine.putItem(state, { ...runner.openCommand, status: "cancelled", completedAt: this.engine.now() });
          runner.openCommand = undefined;
        }
      }
      if (command.decision === "cancel") {
        this.agent.interrupt(state, runner, "The request was cancelled.");
        return;
      }
      if (command.answers) {
        const summary = Object.entries(command.answers)
          .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join("+") : String(value)}`)
          .join(", ");
        runner.steps.splice(runner.index, 0, { kind: "reply", text: `Thanks (${summary}).` });
      }
      this.agent.schedule(state, () => this.agent.step(state));
    }
  }
}

// The orchestration engine of one simulated T3 server: a global event sequence, command receipts,
// the projector that turns events into the read model, and the rows the streams serve.
// State only changes through events, as in T3.
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { DecodedClientCommand } from "../../shared/t3/protocol1/commands";
import {
  type Generation,
  type ServerQuirks,
  type ThreadState,
  type WireActivity,
  type WireCheckpoint,
  type WireEvent,
  type WireMessage,
  type WireModelSelection,
  type WireProject,
  type WireSession,
  quirksOf,
} from "./model";

/** Event types the thread stream forwards; everything else only moves the shell. */
export const THREAD_STREAM_EVENT_TYPES = new Set([
  "thread.message-sent",
  "thread.proposed-plan-upserted",
  "thread.activity-appended",
  "thread.turn-diff-completed",
  "thread.reverted",
  "thread.session-set",
]);

/** Upstream's startup reconciliation text for turns a restart killed. */
export const ORPHANED_PROVIDER_SESSION_ERROR = "Provider session did not survive a server restart. Send a new message to continue.";

/** How many past events a server keeps replayable; past that a resume falls back to a snapshot. */
export const RESUME_REPLAY_LIMIT = 1000;
const EVENT_LOG_LIMIT = 20_000;

export class CommandInvariantError extends Error {
  constructor(type: string, detail: string) {
    super(`Orchestration command invariant failed (${type}): ${detail}`);
  }
}

type Receipt = { status: "accepted"; sequence: number } | { status: "rejected"; detail: string };

export interface EngineEvents {
  event: [WireEvent];
}

export class Engine extends EventEmitter<EngineEvents> {
  sequence = 0;
  readonly projects = new Map<string, WireProject>();
  readonly threads = new Map<string, ThreadState>();
  /** Recent events, oldest first, for resume replay. */
  private readonly log: WireEvent[] = [];
  private readonly receipts = new Map<string, Receipt>();
  /** Advanced by the simulator's clock control; lets tests skew server time. */
  clockOffsetMs = 0;

  readonly quirks: ServerQuirks;

  constructor(
    readonly generation: Generation,
    quirks: Partial<ServerQuirks> = {},
  ) {
    super();
    this.quirks = { ...quirksOf(generation, generation === "fork" ? "0.0.24" : "0.0.33"), ...quirks };
    this.setMaxListeners(0);
  }

  now(): string {
    return new Date(Date.now() + this.clockOffsetMs).toISOString();
  }

  /** Oldest sequence still replayable, or the next sequence when nothing is logged. */
  get replayableFrom(): number {
    return this.log[0]?.sequence ?? this.sequence + 1;
  }

  eventsAfter(sequence: number): WireEvent[] {
    let low = 0;
    let high = this.log.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.log[mid]!.sequence <= sequence) low = mid + 1;
      else high = mid;
    }
    return this.log.slice(low);
  }

  // ------------------------------------------------------------------ commands

  /**
   * Runs a client command through receipts and invariants. Returns the sequence of the last
   * event it produced; throws CommandInvariantError (with a rejected receipt) when it cannot apply.
   */
  dispatch(command: DecodedClientCommand): number {
    const receipt = this.receipts.get(command.commandId);
    if (receipt?.status === "accepted") return receipt.sequence;
    if (receipt?.status === "rejected") {
      throw new Error(`Command previously rejected (${command.commandId}): ${receipt.detail}`);
    }
    try {
      const sequence = this.decide(command);
      this.receipts.set(command.commandId, { status: "accepted", sequence });
      return sequence;
    } catch (error) {
      if (error instanceof CommandInvariantError) {
        this.receipts.set(command.commandId, { status: "rejected", detail: error.message });
      }
      throw error;
    }
  }

  private requireThread(threadId: string, type: string): ThreadState {
    const thread = this.threads.get(threadId);
    if (!thread || thread.deletedAt) throw new CommandInvariantError(type, `Thread '${threadId}' does not exist for command '${type}'.`);
    if (thread.archivedAt && type !== "thread.unarchive" && type !== "thread.delete") {
      throw new CommandInvariantError(type, `Thread '${threadId}' is already archived and cannot handle command '${type}'.`);
    }
    return thread;
  }

  private decide(command: DecodedClientCommand): number {
    const at = "createdAt" in command && command.createdAt ? command.createdAt : this.now();
    const id = command.commandId;
    switch (command.type) {
      case "project.create": {
        if (this.projects.has(command.projectId)) {
          throw new CommandInvariantError(command.type, `Project '${command.projectId}' already exists.`);
        }
        return this.append("project", command.projectId, "project.created", id, {
          projectId: command.projectId,
          title: command.title,
          workspaceRoot: command.workspaceRoot,
          defaultModelSelection: command.defaultModelSelection ?? null,
          scripts: [],
          createdAt: at,
          updatedAt: at,
        }).sequence;
      }
      case "thread.create": {
        if (!this.projects.has(command.projectId)) {
          throw new CommandInvariantError(command.type, `Project '${command.projectId}' does not exist for command 'thread.create'.`);
        }
        if (this.threads.has(command.threadId)) {
          throw new CommandInvariantError(command.type, `Thread '${command.threadId}' already exists and cannot be created twice.`);
        }
        return this.append("thread", command.threadId, "thread.created", id, { ...command, type: undefined, commandId: undefined }).sequence;
      }
      case "thread.turn.start": {
        const thread = this.requireThread(command.threadId, command.type);
        // Upstream wakes a snoozed thread on new activity.
        if (thread.snoozedUntil) this.append("thread", thread.id, "thread.unsnoozed", id, { threadId: thread.id, reason: "activity", updatedAt: at });
        this.append("thread", thread.id, "thread.message-sent", id, {
          threadId: thread.id,
          messageId: command.message.messageId,
          role: "user",
          text: command.message.text,
          attachments: [],
          turnId: null,
          streaming: false,
          createdAt: at,
          updatedAt: at,
        });
        return this.append("thread", thread.id, "thread.turn-start-requested", id, {
          threadId: thread.id,
          messageId: command.message.messageId,
          modelSelection: command.modelSelection ?? thread.modelSelection,
          runtimeMode: thread.runtimeMode,
          interactionMode: thread.interactionMode,
          createdAt: at,
        }).sequence;
      }
      default: {
        const thread = this.requireThread(command.threadId, command.type);
        const [type, payload] = this.threadCommandEvent(command, thread, at);
        return this.append("thread", thread.id, type, id, { threadId: thread.id, ...payload }).sequence;
      }
    }
  }

  /** The one event each remaining thread command produces. */
  private threadCommandEvent(
    command: Exclude<DecodedClientCommand, { type: "project.create" | "thread.create" | "thread.turn.start" }>,
    thread: ThreadState,
    at: string,
  ): [string, Record<string, unknown>] {
    switch (command.type) {
      case "thread.turn.interrupt":
        // T3's decider names the turn only when the command did.
        return ["thread.turn-interrupt-requested", { ...(command.turnId != null && { turnId: command.turnId }), createdAt: at }];
      case "thread.approval.respond":
        return ["thread.approval-response-requested", { requestId: command.requestId, decision: command.decision, createdAt: at }];
      case "thread.user-input.respond":
        return ["thread.user-input-response-requested", { requestId: command.requestId, answers: command.answers, createdAt: at }];
      case "thread.session.stop":
        return ["thread.session-stop-requested", { createdAt: at }];
      case "thread.meta.update":
        return [
          "thread.meta-updated",
          {
            ...(command.title !== undefined && { title: command.title }),
            ...(command.modelSelection !== undefined && { modelSelection: command.modelSelection }),
            updatedAt: this.now(),
          },
        ];
      case "thread.archive":
        return ["thread.archived", { archivedAt: this.now() }];
      case "thread.delete":
        return ["thread.deleted", { deletedAt: this.now() }];
      case "thread.settle":
        // Upstream only (descriptor capability threadSettlement); 0.0.24 has no such command.
        if (this.generation === "fork") throw new CommandInvariantError(command.type, "Unknown command type 'thread.settle'.");
        return ["thread.settled", { settledAt: this.now() }];
      case "thread.snooze": {
        // Upstream's decider: unknown on 0.0.24; the wake time must be in the future; a pending request refuses it.
        if (this.generation === "fork") throw new CommandInvariantError(command.type, "Unknown command type 'thread.snooze'.");
        if (!(Date.parse(command.snoozedUntil) > Date.parse(at))) {
          throw new CommandInvariantError(command.type, `thread ${thread.id} snooze wake time ${command.snoozedUntil} is not in the future`);
        }
        if (thread.pendingApprovals.size > 0 || thread.pendingUserInputs.size > 0) {
          throw new CommandInvariantError(command.type, `thread ${thread.id} has a pending approval or user-input request and cannot be snoozed`);
        }
        const snoozedAt = thread.snoozedUntil === command.snoozedUntil && thread.snoozedAt ? thread.snoozedAt : at;
        return ["thread.snoozed", { snoozedUntil: command.snoozedUntil, snoozedAt, updatedAt: at }];
      }
      case "thread.unsettle":
        if (this.generation === "fork") throw new CommandInvariantError(command.type, "Unknown command type 'thread.unsettle'.");
        return ["thread.unsettled", { reason: command.reason, updatedAt: at }];
      case "thread.unsnooze":
        // Upstream's decider takes it whether or not the thread is snoozed (an awake thread stays awake).
        if (this.generation === "fork") throw new CommandInvariantError(command.type, "Unknown command type 'thread.unsnooze'.");
        return ["thread.unsnoozed", { threadId: thread.id, reason: command.reason, updatedAt: at }];
    }
  }

  // ------------------------------------------------------------------ events and projection

  /** Appends one event, projects it, and notifies the streams. Provider-side events use a `provider:` commandId. */
  append(aggregateKind: "project" | "thread", aggregateId: string, type: string, commandId: string | null, payload: Record<string, unknown>): WireEvent {
    const event: WireEvent = {
      sequence: ++this.sequence,
      eventId: randomUUID(),
      aggregateKind,
      aggregateId,
      occurredAt: this.now(),
      commandId,
      causationEventId: null,
      correlationId: commandId,
      metadata: {},
      type,
      payload: JSON.parse(JSON.stringify(payload)) as Record<string, unknown>,
    };
    this.project(event);
    this.log.push(event);
    if (this.log.length > EVENT_LOG_LIMIT) this.log.splice(0, this.log.length - EVENT_LOG_LIMIT);
    this.publish(event);
    return event;
  }

  private readonly outbox: WireEvent[] = [];
  private publishing = false;

  /** Listeners may append events while reacting; those are delivered after, so every listener sees sequence order. */
  private publish(event: WireEvent): void {
    this.outbox.push(event);
    if (this.publishing) return;
    this.publishing = true;
    try {
      for (let next = this.outbox.shift(); next; next = this.outbox.shift()) this.emit("event", next);
    } finally {
      this.publishing = false;
    }
  }

  /** Seeds a thread directly into the read model, as if its history predates the replay window. */
  seedThread(thread: ThreadState): void {
    this.threads.set(thread.id, thread);
  }

  seedProject(project: WireProject): void {
    this.projects.set(project.id, project);
  }

  private project(event: WireEvent): void {
    const p = event.payload;
    if (event.aggregateKind === "project") {
      if (event.type === "project.created") {
        this.projects.set(event.aggregateId, {
          id: event.aggregateId,
          title: String(p.title),
          workspaceRoot: String(p.workspaceRoot),
          repositoryIdentity: null,
          defaultModelSelection: (p.defaultModelSelection as WireModelSelection | null) ?? null,
          scripts: [],
          createdAt: String(p.createdAt),
          updatedAt: String(p.updatedAt),
          deletedAt: null,
        });
      }
      return;
    }
    if (event.type === "thread.created") {
      this.threads.set(event.aggregateId, {
        id: event.aggregateId,
        projectId: String(p.projectId),
        title: String(p.title),
        modelSelection: p.modelSelection as WireModelSelection,
        runtimeMode: String(p.runtimeMode),
        interactionMode: String(p.interactionMode ?? "default"),
        branch: (p.branch as string | null) ?? null,
        worktreePath: (p.worktreePath as string | null) ?? null,
        latestTurn: null,
        createdAt: String(p.createdAt),
        updatedAt: String(p.createdAt),
        archivedAt: null,
        deletedAt: null,
        messages: [],
        activities: [],
        session: null,
        pendingApprovals: new Set(),
        pendingUserInputs: new Set(),
        latestUserMessageAt: null,
      });
      return;
    }
    const thread = this.threads.get(event.aggregateId);
    if (!thread) return;
    thread.updatedAt = event.occurredAt;
    switch (event.type) {
      case "thread.message-sent":
        this.projectMessage(thread, p as unknown as WireMessage & { messageId: string });
        break;
      case "thread.session-set": {
        const session = p.session as WireSession;
        thread.session = session;
        if (session.status === "running" && session.activeTurnId) {
          if (thread.latestTurn?.turnId !== session.activeTurnId) {
            thread.latestTurn = {
              turnId: session.activeTurnId,
              state: "running",
              requestedAt: thread.latestUserMessageAt ?? session.updatedAt,
              startedAt: session.updatedAt,
              completedAt: null,
              assistantMessageId: null,
            };
          }
        } else if (session.status === "error" && thread.latestTurn?.state === "running") {
          if (session.lastError === ORPHANED_PROVIDER_SESSION_ERROR) {
            thread.latestTurn = { ...thread.latestTurn, state: "interrupted", completedAt: session.updatedAt };
          } else if (this.generation === "upstream") {
            thread.latestTurn = { ...thread.latestTurn, state: "error", completedAt: session.updatedAt };
          } else {
            // 0.0.24 in a non-git workspace: the turn projection drops back to null.
            thread.latestTurn = null;
          }
        } else if (session.status === "ready" && this.quirks.interruptEndsCompleted && thread.latestTurn?.state === "running") {
          // 0.0.42: a running turn whose session is back to ready is recorded completed (an interrupt
          // that named no turn ends this way).
          thread.latestTurn = { ...thread.latestTurn, state: "completed", completedAt: session.updatedAt };
        } else if (session.status === "ready" && this.generation === "fork" && thread.latestTurn && thread.latestTurn.state !== "running") {
          thread.latestTurn = null;
        }
        break;
      }
      case "thread.activity-appended": {
        const activity = p.activity as WireActivity;
        thread.activities.push(activity);
        const requestId = typeof activity.payload.requestId === "string" ? activity.payload.requestId : undefined;
        if (requestId) {
          if (activity.kind === "approval.requested") thread.pendingApprovals.add(requestId);
          if (activity.kind === "approval.resolved" || activity.kind === "provider.approval.respond.failed") {
            thread.pendingApprovals.delete(requestId);
          }
          if (activity.kind === "user-input.requested") thread.pendingUserInputs.add(requestId);
          if (activity.kind === "user-input.resolved" || activity.kind === "provider.user-input.respond.failed") {
            thread.pendingUserInputs.delete(requestId);
          }
        }
        break;
      }
      case "thread.turn-diff-completed": {
        // T3's projector: upsert by turn; the turn ends completed with a ready checkpoint.
        const { threadId: _threadId, ...checkpoint } = p as unknown as WireCheckpoint & { threadId: string };
        thread.checkpoints = [...(thread.checkpoints ?? []).filter((existing) => existing.turnId !== checkpoint.turnId), checkpoint];
        if (thread.latestTurn?.turnId === checkpoint.turnId)
          thread.latestTurn = { ...thread.latestTurn, state: "completed", completedAt: checkpoint.completedAt };
        break;
      }
      case "thread.approval-response-requested":
        thread.pendingApprovals.delete(String(p.requestId));
        break;
      case "thread.user-input-response-requested":
        thread.pendingUserInputs.delete(String(p.requestId));
        break;
      case "thread.turn-interrupt-requested": {
        const turn = thread.latestTurn;
        const named = typeof p.turnId === "string" ? p.turnId : null;
        if (!turn) break;
        if (this.quirks.interruptEndsCompleted) {
          // 0.0.42's turn projection (its executable's ProjectionPipeline): a request naming the turn
          // marks it interrupted whatever its state; one naming none leaves it to end with its session.
          if (named === turn.turnId) thread.latestTurn = { ...turn, state: "interrupted", completedAt: turn.completedAt ?? event.occurredAt };
        } else if ((named === null || named === turn.turnId) && turn.state === "running") {
          thread.latestTurn = { ...turn, state: "interrupted", completedAt: event.occurredAt };
        }
        break;
      }
      case "thread.meta-updated":
        if (typeof p.title === "string") thread.title = p.title;
        if (p.modelSelection) thread.modelSelection = p.modelSelection as WireModelSelection;
        break;
      case "thread.archived":
        thread.archivedAt = String(p.archivedAt);
        break;
      case "thread.deleted":
        thread.deletedAt = String(p.deletedAt);
        break;
      case "thread.snoozed":
        thread.snoozedUntil = String(p.snoozedUntil);
        thread.snoozedAt = String(p.snoozedAt);
        break;
      case "thread.unsnoozed":
        thread.snoozedUntil = null;
        thread.snoozedAt = null;
        break;
    }
  }

  /** The projector's message rule: streaming appends, a non-empty close replaces, an empty close only ends. */
  private projectMessage(thread: ThreadState, payload: WireMessage & { messageId: string }): void {
    const existing = thread.messages.find((message) => message.id === payload.messageId);
    if (existing) {
      if (payload.streaming) existing.text += payload.text;
      else if (payload.text !== "") existing.text = payload.text;
      existing.streaming = payload.streaming;
      existing.updatedAt = payload.updatedAt;
    } else {
      const message: WireMessage = {
        id: payload.messageId,
        role: payload.role,
        text: payload.text,
        ...(payload.role === "user" && { attachments: payload.attachments ?? [] }),
        turnId: payload.turnId,
        streaming: payload.streaming,
        createdAt: payload.createdAt,
        updatedAt: payload.updatedAt,
      };
      thread.messages.push(message);
      if (payload.role === "user") thread.latestUserMessageAt = payload.createdAt;
    }
    // An assistant close marks the turn completed unless it already ended otherwise.
    if (payload.role === "assistant" && !payload.streaming && thread.latestTurn?.turnId === payload.turnId) {
      if (thread.latestTurn.state === "running") {
        thread.latestTurn = {
          ...thread.latestTurn,
          state: "completed",
          completedAt: payload.updatedAt,
          assistantMessageId: payload.messageId,
        };
      }
    }
  }

  // ------------------------------------------------------------------ read model views

  /** The fields every thread shape starts with, in T3's order. */
  private threadHeader(thread: ThreadState): Record<string, unknown> {
    return {
      id: thread.id,
      projectId: thread.projectId,
      title: thread.title,
      modelSelection: thread.modelSelection,
      runtimeMode: thread.runtimeMode,
      interactionMode: thread.interactionMode,
      branch: thread.branch,
      worktreePath: thread.worktreePath,
    };
  }

  shellRow(thread: ThreadState): Record<string, unknown> {
    const row: Record<string, unknown> = {
      ...this.threadHeader(thread),
      latestTurn: thread.latestTurn,
      createdAt: thread.createdAt,
      updatedAt: thread.updatedAt,
      archivedAt: thread.archivedAt,
    };
    if (this.generation === "upstream") Object.assign(row, upstreamThreadFields(thread));
    Object.assign(row, {
      session: thread.session,
      latestUserMessageAt: thread.latestUserMessageAt,
      hasPendingApprovals: thread.pendingApprovals.size > 0,
      hasPendingUserInput: thread.pendingUserInputs.size > 0,
      hasActionableProposedPlan: false,
    });
    if (this.generation === "upstream") Object.assign(row, { backgroundLiveness: null, planProgress: null });
    return row;
  }

  threadDetail(thread: ThreadState): Record<string, unknown> {
    const detail: Record<string, unknown> = this.threadHeader(thread);
    if (this.generation === "upstream") detail.retention = "retained";
    Object.assign(detail, {
      latestTurn: thread.latestTurn,
      createdAt: thread.createdAt,
      updatedAt: thread.updatedAt,
      archivedAt: thread.archivedAt,
    });
    if (this.generation === "upstream") Object.assign(detail, upstreamThreadFields(thread));
    Object.assign(detail, {
      deletedAt: thread.deletedAt,
      messages: thread.messages,
      proposedPlans: [],
      activities: thread.activities,
      checkpoints: thread.checkpoints ?? [],
      session: thread.session,
    });
    return detail;
  }

  projectRow(project: WireProject): Record<string, unknown> {
    const row: Record<string, unknown> = {
      id: project.id,
      title: project.title,
      workspaceRoot: project.workspaceRoot,
      repositoryIdentity: project.repositoryIdentity,
      defaultModelSelection: project.defaultModelSelection,
    };
    if (this.generation === "upstream") Object.assign(row, { defaultThreadEnvMode: null, faviconPath: null });
    Object.assign(row, { scripts: project.scripts, createdAt: project.createdAt, updatedAt: project.updatedAt });
    return row;
  }

  /** Visible in the shell: not deleted, not archived. */
  isShellVisible(thread: ThreadState): boolean {
    return !thread.deletedAt && !thread.archivedAt;
  }

  shellSnapshot(): Record<string, unknown> {
    const threads: Record<string, unknown>[] = [];
    for (const thread of this.threads.values()) if (this.isShellVisible(thread)) threads.push(this.shellRow(thread));
    const projects: Record<string, unknown>[] = [];
    for (const project of this.projects.values()) if (!project.deletedAt) projects.push(this.projectRow(project));
    return { snapshotSequence: this.sequence, projects, threads, updatedAt: this.now() };
  }

  readModelSnapshot(): Record<string, unknown> {
    return {
      snapshotSequence: this.sequence,
      projects: [...this.projects.values()].map((project) => ({ ...this.projectRow(project), deletedAt: project.deletedAt })),
      threads: [...this.threads.values()].map((thread) => this.threadDetail(thread)),
      updatedAt: this.now(),
    };
  }
}

function upstreamThreadFields(thread: ThreadState): Record<string, unknown> {
  return {
    settledOverride: null,
    settledAt: null,
    snoozedUntil: thread.snoozedUntil ?? null,
    snoozedAt: thread.snoozedAt ?? null,
    pinnedAt: null,
    pinOrderKey: null,
    titleRegeneration: null,
  };
}

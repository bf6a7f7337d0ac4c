// Folds one thread's stream (snapshot + events) into its transcript, activities and the facts the
// fleet needs from it: pending requests, failures the shell row never shows, native subagents.
// Reducer rules follow T3's projector (protocol note §7.3).
import type {
  LatestTurn,
  OrchestrationEvent,
  OrchestrationThread,
  ThreadActivity,
  ThreadDetailSnapshot,
  ThreadMessage,
  ThreadSession,
} from "../t3/schemas";
import type { PendingRequest, SubagentView } from "./types";

export interface ThreadFacts {
  pending: PendingRequest[];
  /** Newest error text from activities (runtime.error, provider.*.failed). */
  lastErrorText: string | null;
  /** A turn asked for after the latest session change could not start (provider.turn.start.failed). */
  startFailure: string | null;
  /** A capacity warning on the active turn: the turn stays "running" but will not progress. */
  capacityWarning: string | null;
  subagents: SubagentView[];
  lastEventAt: string | null;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}
function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

/** Activities whose resolution closes a pending request (§4.6). */
const RESOLUTIONS: Record<string, PendingRequest["kind"]> = {
  "approval.resolved": "approval",
  "provider.approval.respond.failed": "approval",
  "user-input.resolved": "input",
  "provider.user-input.respond.failed": "input",
};

export class ThreadProjection {
  thread: OrchestrationThread | undefined;
  lastSequence = -1;
  private readonly messageIndex = new Map<string, number>();
  /** Requests answered through this client, resolved at once as T3's projection does (§4.6). */
  private readonly answered = new Set<string>();
  private lastEventAt: string | null = null;

  applySnapshot(snapshot: ThreadDetailSnapshot): void {
    this.thread = structuredClone(snapshot.thread);
    this.lastSequence = snapshot.snapshotSequence;
    this.messageIndex.clear();
    this.thread.messages.forEach((message, index) => this.messageIndex.set(message.id, index));
    this.thread.activities.sort(byActivityOrder);
  }

  /** Applies one event newer than the last applied; older or duplicate ones are ignored. Returns whether it changed anything. */
  applyEvent(event: OrchestrationEvent): boolean {
    const thread = this.thread;
    if (!thread || event.sequence <= this.lastSequence) return false;
    this.lastSequence = event.sequence;
    this.lastEventAt = event.occurredAt;
    if (!event.known) return false;
    switch (event.type) {
      case "thread.message-sent":
        this.applyMessage(thread, event.payload);
        return true;
      case "thread.session-set":
        this.applySession(thread, event.payload.session);
        return true;
      case "thread.activity-appended": {
        const activity = event.payload.activity;
        const existing = thread.activities.findIndex((candidate) => candidate.id === activity.id);
        if (existing >= 0) thread.activities[existing] = activity;
        else thread.activities.push(activity);
        thread.activities.sort(byActivityOrder);
        return true;
      }
      case "thread.turn-diff-completed": {
        const state = event.payload.status === "error" ? "error" : event.payload.status === "missing" ? "interrupted" : "completed";
        if (thread.latestTurn?.turnId === event.payload.turnId) thread.latestTurn = { ...thread.latestTurn, state, completedAt: event.payload.completedAt };
        return true;
      }
      case "thread.reverted":
      case "thread.proposed-plan-upserted":
        return false;
    }
    return false;
  }

  /** Marks a request answered by this client so it leaves the pending list before the provider confirms. */
  markAnswered(requestId: string): void {
    this.answered.add(requestId);
  }

  private applyMessage(thread: OrchestrationThread, payload: Extract<OrchestrationEvent, { type: "thread.message-sent" }>["payload"]): void {
    const index = this.messageIndex.get(payload.messageId);
    const existing = index === undefined ? undefined : thread.messages[index];
    if (existing) {
      if (payload.streaming) existing.text += payload.text;
      else if (payload.text !== "") existing.text = payload.text;
      existing.streaming = payload.streaming;
      existing.updatedAt = payload.updatedAt;
      if (payload.turnId) existing.turnId = payload.turnId;
    } else {
      const message: ThreadMessage = {
        id: payload.messageId,
        role: payload.role,
        text: payload.text,
        turnId: payload.turnId,
        streaming: payload.streaming,
        createdAt: payload.createdAt,
        updatedAt: payload.updatedAt,
        ...(payload.attachments && { attachments: payload.attachments }),
      };
      this.messageIndex.set(message.id, thread.messages.length);
      thread.messages.push(message);
    }
    const turn = thread.latestTurn;
    if (payload.role === "assistant" && !payload.streaming && turn && turn.turnId === payload.turnId && turn.state === "running") {
      thread.latestTurn = { ...turn, state: "completed", completedAt: payload.updatedAt, assistantMessageId: payload.messageId };
    }
  }

  private applySession(thread: OrchestrationThread, session: ThreadSession): void {
    thread.session = session;
    if (session.status === "running" && session.activeTurnId && thread.latestTurn?.turnId !== session.activeTurnId) {
      const turn: LatestTurn = {
        turnId: session.activeTurnId,
        state: "running",
        requestedAt: session.updatedAt,
        startedAt: session.updatedAt,
        completedAt: null,
        assistantMessageId: null,
      };
      thread.latestTurn = turn;
    }
  }

  facts(): ThreadFacts {
    const thread = this.thread;
    if (!thread) return { pending: [], lastErrorText: null, startFailure: null, capacityWarning: null, subagents: [], lastEventAt: null };
    const pending = new Map<string, PendingRequest>();
    const subagents = new Map<string, SubagentView>();
    let lastErrorText: string | null = null;
    let lastErrorAt = "";
    let startFailure: { detail: string; at: string } | null = null;
    let capacityWarning: string | null = null;
    const activeTurnId = thread.session?.activeTurnId ?? null;
    for (const activity of thread.activities) {
      const payload = record(activity.payload);
      const requestId = text(payload.requestId);
      if (activity.kind === "approval.requested" && requestId) {
        pending.set(requestId, {
          requestId,
          kind: "approval",
          detail: text(payload.detail) ?? activity.summary,
          requestKind: text(payload.requestKind),
          questions: [],
          createdAt: activity.createdAt,
        });
      } else if (activity.kind === "user-input.requested" && requestId) {
        const questions = Array.isArray(payload.questions) ? payload.questions.map(record) : [];
        pending.set(requestId, {
          requestId,
          kind: "input",
          detail: questions.map((q) => text(q.question) ?? "").filter(Boolean).join(" ") || activity.summary,
          requestKind: null,
          questions: questions.map((q, i) => ({
            id: text(q.id) ?? `q${i + 1}`,
            question: text(q.question) ?? text(q.header) ?? "",
            options: Array.isArray(q.options) ? q.options.map((o) => text(record(o).label) ?? "").filter(Boolean) : [],
          })),
          createdAt: activity.createdAt,
        });
      } else if (requestId && RESOLUTIONS[activity.kind]) {
        pending.delete(requestId);
      }
      if (activity.tone === "error" && activity.kind !== "runtime.warning") {
        const detail = text(payload.message) ?? text(payload.detail) ?? activity.summary;
        if (activity.createdAt >= lastErrorAt) {
          lastErrorText = detail;
          lastErrorAt = activity.createdAt;
        }
        if (activity.kind === "provider.turn.start.failed") startFailure = { detail, at: activity.createdAt };
      }
      if (activity.kind === "runtime.warning" && activeTurnId !== null && activity.turnId === activeTurnId) {
        capacityWarning = text(payload.message) ?? activity.summary;
      }
      if (activity.kind.startsWith("task.")) {
        const taskId = text(payload.taskId);
        if (!taskId) continue;
        const previous = subagents.get(taskId);
        const finished = activity.kind === "task.completed";
        const status = finished ? (["failed", "stopped"].includes(String(payload.status)) ? (payload.status as "failed" | "stopped") : "completed") : "running";
        subagents.set(taskId, {
          taskId,
          status: previous && previous.status !== "running" && !finished ? previous.status : status,
          detail: text(payload.summary) ?? text(payload.detail) ?? previous?.detail ?? null,
          taskType: text(payload.taskType) ?? previous?.taskType ?? null,
          updatedAt: activity.createdAt,
        });
      }
    }
    for (const requestId of this.answered) pending.delete(requestId);
    // A start failure counts only if no session has run a turn since it (§4.5).
    const latestUser = [...thread.messages].reverse().find((message) => message.role === "user");
    const startFailureText =
      startFailure && (!latestUser || startFailure.at >= latestUser.createdAt) && (thread.session === null || thread.session.activeTurnId === null)
        ? startFailure.detail
        : null;
    return {
      pending: [...pending.values()],
      lastErrorText,
      startFailure: startFailureText,
      capacityWarning,
      subagents: [...subagents.values()],
      lastEventAt: this.lastEventAt,
    };
  }

  get messages(): readonly ThreadMessage[] {
    return this.thread?.messages ?? [];
  }

  get activities(): readonly ThreadActivity[] {
    return this.thread?.activities ?? [];
  }
}

function byActivityOrder(a: ThreadActivity, b: ThreadActivity): number {
  if (a.sequence !== undefined && b.sequence !== undefined && a.sequence !== b.sequence) return a.sequence - b.sequence;
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0;
}

// Protocol 1: folds one thread's stream (snapshot + events) into its messages and activities, and
// into the neutral facts the fleet needs from it (shared/fleet/facts.ts): pending requests, failures
// the shell row never shows, native subagents, transcript items. Reducer rules follow T3's projector;
// the mapping is in docs/t3-protocols.md ("Protocol 1: thread stream → detail facts").
// An event costs O(change), not O(history): transcript items are kept in order and only the item an
// event touched is rebuilt (unchanged items keep their identity, so consumers compare by reference),
// and the facts derived from activities are recomputed only when an activity or the active turn changes.
import {
  type ApprovalOption,
  noThreadFacts,
  type PendingRequest,
  type Question,
  type RequestEnd,
  type SubagentFacts,
  type SubagentStatus,
  type ThreadDetailFacts,
  type TranscriptItem,
  type TurnChanges,
  type UsageFacts,
} from "../../fleet/facts";
import { countOrNull } from "../../fleet/counts";
import type { LatestTurn, OrchestrationEvent, OrchestrationThread, ThreadActivity, ThreadDetailSnapshot, ThreadMessage, ThreadSession } from "./schemas";
import { cleanText, TEXT_LIMITS } from "../text";
import { runStateOfRow, sessionLost } from "./facts";
import { revertCheckpoints, turnChangesOf, upsertCheckpoint, usageOfActivities } from "./changes";
import { observedHarness } from "./harnesses";

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}
const KNOWN_DECISIONS = new Set<string>(["accept", "acceptForSession", "acceptAlways", "decline", "cancel"]);

/** The decisions an approval lists itself (T3 0.0.42 does for OpenCode): T3's word wins over what was observed. */
function decisionsOf(options: unknown): ApprovalOption[] | null {
  if (!Array.isArray(options)) return null;
  const listed = options.map(record).flatMap((option): ApprovalOption[] => {
    const decision = text(option.decision);
    if (!decision || !KNOWN_DECISIONS.has(decision)) return [];
    return [{ decision: decision as ApprovalOption["decision"], label: text(option.label) ?? decision, warning: text(option.warning) }];
  });
  return listed.length > 0 ? listed : null;
}

/** A string from an activity's free-form payload: server text, so cleaned like every decoded field. */
function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? cleanText(value, { max: TEXT_LIMITS.reason }) : null;
}

/** Activities that close a pending request: the agent took an answer, or T3 could not pass one on. */
const RESOLUTIONS: Record<string, RequestEnd["how"]> = {
  "approval.resolved": "resolved",
  "provider.approval.respond.failed": "failed",
  "user-input.resolved": "resolved",
  "provider.user-input.respond.failed": "failed",
};

/** What the activities say, recomputed only when they (or the active turn) change. */
interface ActivityFacts {
  pending: Map<string, PendingRequest>;
  ends: Record<string, RequestEnd>;
  subagents: SubagentFacts[];
  lastErrorText: string | null;
  startFailure: { detail: string; at: string } | null;
  capacityWarning: string | null;
}

export class ThreadProjection {
  thread: OrchestrationThread | undefined;
  lastSequence = -1;
  private readonly messageIndex = new Map<string, number>();
  /** Requests answered through this client, resolved at once as T3's projection does. */
  private readonly answered = new Set<string>();
  private lastEventAt: string | null = null;
  /** The latest user message (by arrival), for start failures and the run state. */
  private latestUser: ThreadMessage | undefined;
  /** The transcript in order (undefined: rebuild on the next read) and each item's position in it. */
  private orderedItems: TranscriptItem[] | undefined;
  private readonly itemPosition = new Map<string, number>();
  private activityFacts: { facts: ActivityFacts; activeTurnId: string | null; driver: string | null } | undefined;
  /** Changes and usage as facts, rebuilt only after a checkpoint or activity changed (undefined: rebuild). */
  private changes: TurnChanges[] | undefined;
  private usage: UsageFacts | null | undefined;

  applySnapshot(snapshot: ThreadDetailSnapshot): void {
    this.thread = structuredClone(snapshot.thread);
    this.lastSequence = snapshot.snapshotSequence;
    this.messageIndex.clear();
    this.thread.messages.forEach((message, index) => this.messageIndex.set(message.id, index));
    this.latestUser = this.thread.messages.findLast((message) => message.role === "user");
    this.thread.activities.sort(byActivityOrder);
    this.orderedItems = undefined;
    this.activityFacts = undefined;
    this.changes = undefined;
    this.usage = undefined;
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
      case "thread.activity-appended":
        this.applyActivity(thread, event.payload.activity);
        return true;
      case "thread.turn-diff-completed": {
        const state = event.payload.status === "error" ? "error" : event.payload.status === "missing" ? "interrupted" : "completed";
        if (thread.latestTurn?.turnId === event.payload.turnId) thread.latestTurn = { ...thread.latestTurn, state, completedAt: event.payload.completedAt };
        const { threadId: _threadId, ...checkpoint } = event.payload;
        thread.checkpoints = upsertCheckpoint(thread.checkpoints, checkpoint);
        this.changes = undefined;
        return true;
      }
      case "thread.reverted":
        thread.checkpoints = revertCheckpoints(thread.checkpoints, event.payload.turnCount);
        this.changes = undefined;
        return true;
      case "thread.proposed-plan-upserted":
        return false;
    }
    return false;
  }

  /** Marks a request answered by this client so it leaves the pending list before the provider confirms. */
  markAnswered(requestId: string): void {
    this.answered.add(requestId);
  }

  /** Activities stay in T3's order; one that arrives in order (the usual case) is appended. */
  private applyActivity(thread: OrchestrationThread, activity: ThreadActivity): void {
    this.activityFacts = undefined;
    const activities = thread.activities;
    const last = activities.at(-1);
    const existing = last?.id === activity.id ? activities.length - 1 : activities.findIndex((candidate) => candidate.id === activity.id);
    if (activity.kind === "context-window.updated" || (existing !== -1 && activities[existing]!.kind === "context-window.updated")) this.usage = undefined;
    if (existing >= 0) {
      const previous = activities[existing]!;
      activities[existing] = activity;
      const inPlace =
        byActivityOrder(previous, activity) === 0 &&
        (existing === 0 || byActivityOrder(activities[existing - 1]!, activity) <= 0) &&
        (existing === activities.length - 1 || byActivityOrder(activity, activities[existing + 1]!) <= 0);
      if (!inPlace) {
        activities.sort(byActivityOrder);
        this.orderedItems = undefined;
        return;
      }
      if (activity.kind === "context-window.updated" && previous.kind === "context-window.updated") return;
      this.replaceItem(previous.id, activity.kind === "context-window.updated" ? null : activityItem(activity), previous.createdAt);
      return;
    }
    if (last && byActivityOrder(last, activity) > 0) {
      activities.push(activity);
      activities.sort(byActivityOrder);
      this.orderedItems = undefined;
      return;
    }
    activities.push(activity);
    if (activity.kind !== "context-window.updated") this.appendItem(activityItem(activity), "activity");
  }

  /** Replaces an item whose place did not move; anything else rebuilds the order on the next read. */
  private replaceItem(id: string, item: TranscriptItem | null, previousCreatedAt: string): void {
    const items = this.orderedItems;
    if (!items) return;
    const position = this.itemPosition.get(id);
    if (item === null || position === undefined || item.createdAt !== previousCreatedAt) {
      this.orderedItems = undefined;
      return;
    }
    const next = [...items];
    next[position] = item;
    this.orderedItems = next;
  }

  /**
   * Appends a new item when it sorts after every other one (time order; at equal times messages
   * before activities, each in arrival order), which is how streams grow; otherwise rebuilds.
   */
  private appendItem(item: TranscriptItem, source: "message" | "activity"): void {
    const items = this.orderedItems;
    if (!items) return;
    const last = items.at(-1);
    const after = !last || item.createdAt > last.createdAt || (item.createdAt === last.createdAt && (source === "activity" || last.type === "message"));
    if (!after) {
      this.orderedItems = undefined;
      return;
    }
    this.itemPosition.set(item.id, items.length);
    this.orderedItems = [...items, item];
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
      this.replaceItem(existing.id, messageItem(existing), existing.createdAt);
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
      if (message.role === "user") this.latestUser = message;
      this.appendItem(messageItem(message), "message");
    }
    const turn = thread.latestTurn;
    if (payload.role === "assistant" && !payload.streaming && turn && turn.turnId === payload.turnId && turn.state === "running") {
      thread.latestTurn = { ...turn, state: "completed", completedAt: payload.updatedAt, assistantMessageId: payload.messageId };
    }
  }

  private applySession(thread: OrchestrationThread, session: ThreadSession): void {
    thread.session = session;
    // The active turn decides which capacity warning counts (see activityFactsOf).
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

  facts(): ThreadDetailFacts {
    const thread = this.thread;
    if (!thread) return noThreadFacts();
    const activeTurnId = thread.session?.activeTurnId ?? null;
    const driver = thread.session?.providerName ?? thread.modelSelection?.instanceId ?? null;
    if (this.activityFacts?.activeTurnId !== activeTurnId || this.activityFacts.driver !== driver) {
      this.activityFacts = { facts: activityFactsOf(thread.activities, activeTurnId, observedHarness(driver).decisions), activeTurnId, driver };
    }
    const { pending: pendingById, ends, subagents, lastErrorText, startFailure, capacityWarning } = this.activityFacts.facts;
    // A session in error with no turn can take no answer (blockedByOf in ./facts.ts): nothing is pending.
    const pending = sessionLost(thread.session) ? [] : [...pendingById.values()].filter((request) => !this.answered.has(request.requestId));
    // A start failure counts only if no session has run a turn since it.
    const latestUser = this.latestUser;
    const startFailureText =
      startFailure && (!latestUser || startFailure.at >= latestUser.createdAt) && (thread.session === null || thread.session.activeTurnId === null)
        ? startFailure.detail
        : null;
    const hiddenFailure =
      capacityWarning !== null && activeTurnId !== null
        ? { reason: capacityWarning, runId: activeTurnId }
        : startFailureText !== null && startFailure
          ? { reason: startFailureText, runId: null, at: startFailure.at }
          : null;
    return {
      pending,
      requestEnds: ends,
      lastErrorText,
      hiddenFailure,
      subagents,
      activeRunId: activeTurnId,
      run: runStateOfRow({ ...thread, latestUserMessageAt: latestUser?.createdAt ?? null, hasPendingApprovals: false, hasPendingUserInput: false }, null),
      lastEventAt: this.lastEventAt,
      changes: (this.changes ??= turnChangesOf(thread.checkpoints)),
      usage: this.usage === undefined ? (this.usage = usageOfActivities(thread.activities)) : this.usage,
      lastTurnReported: lastTurnReported(thread, this.usage),
    };
  }

  /** The transcript as neutral items: messages and activities in time order (the same array until something changes). */
  items(): TranscriptItem[] {
    const thread = this.thread;
    if (!thread) return [];
    if (!this.orderedItems) {
      const items = [
        ...thread.messages.map(messageItem),
        ...thread.activities.filter((activity) => activity.kind !== "context-window.updated").map(activityItem),
      ];
      this.orderedItems = items.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
      this.itemPosition.clear();
      this.orderedItems.forEach((item, position) => this.itemPosition.set(item.id, position));
    }
    return this.orderedItems;
  }

  get messages(): readonly ThreadMessage[] {
    return this.thread?.messages ?? [];
  }

  get activities(): readonly ThreadActivity[] {
    return this.thread?.activities ?? [];
  }
}

function messageItem(message: ThreadMessage): TranscriptItem {
  return {
    type: "message",
    id: message.id,
    runId: message.turnId,
    role: message.role === "unknown" ? "system" : message.role,
    text: message.text,
    streaming: message.streaming,
    createdAt: message.createdAt,
    updatedAt: message.updatedAt,
  };
}

/** Pending requests, failures, capacity warnings and subagents, as the activities (in order) tell them. */
function activityFactsOf(activities: readonly ThreadActivity[], activeTurnId: string | null, observedDecisions: readonly ApprovalOption[]): ActivityFacts {
  const pending = new Map<string, PendingRequest>();
  const ends: Record<string, RequestEnd> = {};
  const subagents = new Map<string, SubagentFacts>();
  let lastErrorText: string | null = null;
  let lastErrorAt = "";
  let startFailure: { detail: string; at: string } | null = null;
  let capacityWarning: string | null = null;
  for (const activity of activities) {
    const payload = record(activity.payload);
    const requestId = text(payload.requestId);
    if (activity.kind === "approval.requested" && requestId) {
      pending.set(requestId, {
        requestId,
        kind: "approval",
        detail: text(payload.detail) ?? activity.summary,
        requestKind: text(payload.requestKind),
        decisions: decisionsOf(payload.options) ?? [...observedDecisions],
        createdAt: activity.createdAt,
      });
    } else if (activity.kind === "user-input.requested" && requestId) {
      const questions = Array.isArray(payload.questions) ? payload.questions.map(record) : [];
      pending.set(requestId, {
        requestId,
        kind: "input",
        detail:
          questions
            .map((q) => text(q.question) ?? "")
            .filter(Boolean)
            .join(" ") || activity.summary,
        questions: questions.map(questionOf),
        createdAt: activity.createdAt,
      });
    } else if (requestId && RESOLUTIONS[activity.kind]) {
      pending.delete(requestId);
      // The first record is what became of the request; a later failure is an answer sent after it closed.
      ends[requestId] ??=
        RESOLUTIONS[activity.kind] === "resolved"
          ? { how: "resolved", decision: text(payload.decision) }
          : { how: "failed", reason: text(payload.detail) ?? text(payload.message) ?? activity.summary };
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
      const status: SubagentStatus = finished
        ? ["failed", "stopped"].includes(String(payload.status))
          ? (payload.status as "failed" | "stopped")
          : "completed"
        : "running";
      const shown = previous && previous.status !== "running" && !finished ? previous.status : status;
      // The task keeps the name it started with (0.0.42: `title`, the Agent call's description); a
      // failed one's `summary` is why it failed (recorded with Claude Code 2.1.328, docs/t3-protocols.md).
      subagents.set(taskId, {
        id: taskId,
        status: shown,
        title: text(payload.title) ?? previous?.title ?? text(payload.summary) ?? text(payload.detail) ?? null,
        kind: text(payload.taskType) ?? previous?.kind ?? null,
        model: null,
        childThreadId: null,
        reason: shown === "failed" || shown === "stopped" ? (text(payload.error) ?? text(payload.summary) ?? previous?.reason ?? null) : null,
        updatedAt: activity.createdAt,
      });
    }
  }
  return { pending, ends, subagents: [...subagents.values()], lastErrorText, startFailure, capacityWarning };
}

function byActivityOrder(a: ThreadActivity, b: ThreadActivity): number {
  if (a.sequence !== undefined && b.sequence !== undefined && a.sequence !== b.sequence) return a.sequence - b.sequence;
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0;
}

function questionOf(raw: Record<string, unknown>, index: number): Question {
  const options = Array.isArray(raw.options) ? raw.options.map(record) : [];
  return {
    id: text(raw.id) ?? `q${index + 1}`,
    header: text(raw.header),
    question: text(raw.question) ?? text(raw.header) ?? "",
    options: options.flatMap((option) => {
      const label = text(option.label);
      return label ? [{ label, description: text(option.description), value: label }] : [];
    }),
    multiSelect: raw.multiSelect === true,
    allowsFreeText: options.length === 0 || raw.allowCustomAnswer === true || raw.isOther === true,
    required: raw.required !== false,
  };
}

/** An exit status as T3 passes it on: an exact integer (a signal's may be negative), else not reported. */
function exitCodeOrNull(value: unknown): number | null {
  return Number.isSafeInteger(value) ? (value as number) : null;
}

/** Tool activities name what they ran in `payload.itemType`; commands and file changes get their own items. */
function activityItem(activity: ThreadActivity): TranscriptItem {
  const payload = record(activity.payload);
  // Tool payloads carry the provider's item under `data.item` (0.0.42) or directly in `data`.
  const data = { ...record(payload.data), ...record(record(payload.data).item) };
  const base = { id: activity.id, runId: activity.turnId, createdAt: activity.createdAt, updatedAt: activity.createdAt };
  const itemType = text(payload.itemType);
  const status =
    activity.kind === "tool.completed" ? (payload.status === "failed" ? "failed" : "completed") : activity.kind.startsWith("tool.") ? "running" : "unknown";
  if (itemType === "command_execution" || itemType === "commandExecution") {
    return {
      ...base,
      type: "command",
      command: text(data.command) ?? text(payload.detail) ?? activity.summary,
      exitCode: exitCodeOrNull(data.exitCode),
      status,
    };
  }
  if (itemType === "file_change" || itemType === "fileChange") {
    return {
      ...base,
      type: "file-change",
      path: text(data.path) ?? text(payload.detail) ?? activity.summary,
      additions: countOrNull(data.additions),
      deletions: countOrNull(data.deletions),
      status,
    };
  }
  if (activity.tone === "error") return { ...base, type: "error", message: text(payload.message) ?? text(payload.detail) ?? activity.summary };
  return {
    ...base,
    type: "activity",
    kind: activity.kind,
    summary: questionSummary(activity.kind, payload) ?? activity.summary,
    tone: activity.tone === "unknown" ? "info" : activity.tone,
  };
}

/** A question and its answer read in the transcript: what was asked, and what was answered. */
function questionSummary(kind: string, payload: Record<string, unknown>): string | null {
  if (kind === "user-input.requested" && Array.isArray(payload.questions)) {
    const asked = payload.questions.map((q) => text(record(q).question)).filter(Boolean);
    return asked.length ? `Asked: ${asked.join(" · ")}` : null;
  }
  if (kind === "user-input.resolved") {
    const answers = Object.values(record(record(payload).answers)).flatMap((answer) => {
      const value = record(answer).answers ?? answer;
      return Array.isArray(value) ? [value.map(String).join(", ")] : typeof value === "string" ? [value] : [];
    });
    return answers.length ? `Answered: ${answers.join(" · ")}` : null;
  }
  return null;
}

/**
 * What T3 0.0.42 reports after a turn is in (see ThreadDetailFacts.lastTurnReported): a token report
 * made since the turn started (its `turnId` may be null, as recorded in
 * ../shared/fixtures/t3-0.0.42/thread-completed.json) and the turn's checkpoint, at the same
 * millisecond in fixtures/t3-0.0.42-changes/thread-with-checkpoint.json. A workspace that is not a
 * git repository gets no checkpoint (as recorded): a thread whose earlier turns got none waits only
 * for the token report. A harness that reports no tokens waits for the settling window.
 */
function lastTurnReported(thread: OrchestrationThread, usage: UsageFacts | null): boolean {
  const turn = thread.latestTurn;
  if (!turn) return true;
  if (turn.state === "running" || (thread.session?.activeTurnId ?? null) !== null) return false;
  if (!usage || usage.reportedAt < (turn.startedAt ?? turn.requestedAt)) return false;
  if (thread.checkpoints.length > 0) return thread.checkpoints.findLast((checkpoint) => checkpoint.turnId === turn.turnId) !== undefined;
  return thread.messages.findLast((message) => message.role === "assistant" && message.turnId !== null && message.turnId !== turn.turnId) !== undefined;
}

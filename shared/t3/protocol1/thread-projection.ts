// Protocol 1: folds one thread's stream (snapshot + events) into its messages and activities, and
// into the neutral facts the fleet needs from it (shared/fleet/facts.ts): pending requests, failures
// the shell row never shows, native subagents, transcript items. Reducer rules follow T3's projector;
// the mapping is in docs/t3-protocols.md ("Protocol 1: thread stream → detail facts").
// An event costs O(change), not O(history): transcript items are kept in order and only the item an
// event touched is rebuilt (unchanged items keep their identity, so consumers compare by reference),
// and the facts derived from activities are recomputed only when an activity or the active turn changes.
// It holds a bounded tail of the transcript (shared/fleet/transcript-tail.ts): what leaves it is
// folded into compact facts (./activity-facts.ts, ./usage-reports.ts) and message anchors, so the
// facts cover the whole history without keeping it (issue 43).
import { noThreadFacts, type PendingRequest, type ThreadDetailFacts, type TranscriptItem, type TurnChanges, type UsageFacts } from "../../fleet/facts";
import { countOrNull } from "../../fleet/counts";
import { MessageAnchors, OPEN_VIEW_TAIL, type TailLimits, type TranscriptBounds, trimPoint } from "../../fleet/transcript-tail";
import type { LatestTurn, OrchestrationEvent, OrchestrationThread, ThreadActivity, ThreadDetailSnapshot, ThreadMessage, ThreadSession } from "./schemas";
import { runStateOfRow, sessionLost, type StreamRun } from "./facts";
import { revertCheckpoints, turnChangesOf, upsertCheckpoint, usageOfActivities } from "./changes";
import { observedHarness } from "./harnesses";
import { type ActivityFold, boundFold, copyFold, emptyFold, foldActivities, pendingOfFold, record, text } from "./activity-facts";
import { compactUsageReports, isUsageReport } from "./usage-reports";

/** What the activities say (the carried fold, then the activities held), recomputed only when they (or the active turn) change. */
interface ActivityFacts {
  fold: ActivityFold;
  pending: PendingRequest[];
}

export class ThreadProjection {
  thread: OrchestrationThread | undefined;
  /** How much of the history it holds (`retain`). */
  private limits: TailLimits = OPEN_VIEW_TAIL;
  /** Something an open view shows was let go under lower limits since the snapshot (a fresh one brings it back). */
  heldShort = false;
  lastSequence = -1;
  private readonly messageIndex = new Map<string, number>();
  /** Requests answered through this client, resolved at once as T3's projection does. */
  private readonly answered = new Set<string>();
  private lastEventAt: string | null = null;
  /** When the latest user message (by arrival) was sent, for start failures and the run state. */
  private latestUserAt: string | null = null;
  /** What the activities that left the tail said (folded once, in order), and the messages that left it. */
  private carried: ActivityFold = emptyFold();
  private readonly anchors = new MessageAnchors();
  /** The last two turns that had a reply among the messages that left the tail (for lastTurnReported). */
  private goneReplyTurns: string[] = [];
  private earlier = false;
  private withAnchors: { items: TranscriptItem[]; tail: TranscriptItem[]; anchors: TranscriptItem[] } | undefined;
  /** The transcript in order (undefined: rebuild on the next read) and each item's position in it. */
  private orderedItems: TranscriptItem[] | undefined;
  private readonly itemPosition = new Map<string, number>();
  private activityFacts: { facts: ActivityFacts; driver: string | null } | undefined;
  /** Changes and usage as facts, rebuilt only after a checkpoint or activity changed (undefined: rebuild). */
  private changes: TurnChanges[] | undefined;
  private usage: UsageFacts | null | undefined;

  /** The run as this stream knows it, to set beside the thread's shell row (./facts.ts `withNewerRun`); null before a snapshot. */
  streamRun(): StreamRun | null {
    const thread = this.thread;
    if (!thread) return null;
    const turn = thread.latestTurn;
    const turnSettled = turn !== null && turn.state !== "running" && thread.checkpoints.some((checkpoint) => checkpoint.turnId === turn.turnId);
    return { session: thread.session, latestTurn: turn, latestUserMessageAt: this.latestUserAt, turnSettled };
  }

  applySnapshot(snapshot: ThreadDetailSnapshot): void {
    this.thread = structuredClone(snapshot.thread);
    this.lastSequence = snapshot.snapshotSequence;
    this.messageIndex.clear();
    this.thread.messages.forEach((message, index) => this.messageIndex.set(message.id, index));
    this.latestUserAt = this.thread.messages.findLast((message) => message.role === "user")?.createdAt ?? null;
    this.thread.activities.sort(byActivityOrder);
    this.heldShort = false;
    this.thread.checkpoints = this.cutCheckpoints(this.thread.checkpoints);
    this.carried = emptyFold();
    this.anchors.clear();
    this.goneReplyTurns = [];
    this.earlier = false;
    this.orderedItems = undefined;
    this.activityFacts = undefined;
    this.changes = undefined;
    this.usage = undefined;
    // Cut to the tail at once: a thread holds no more after it was (re)followed than after its next trim.
    this.trimWhenLong(true);
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
        this.trimWhenLong();
        return true;
      case "thread.session-set":
        this.applySession(thread, event.payload.session);
        return true;
      case "thread.activity-appended":
        this.applyActivity(thread, event.payload.activity);
        this.trimWhenLong();
        return true;
      case "thread.turn-diff-completed": {
        const state = event.payload.status === "error" ? "error" : event.payload.status === "missing" ? "interrupted" : "completed";
        if (thread.latestTurn?.turnId === event.payload.turnId) thread.latestTurn = { ...thread.latestTurn, state, completedAt: event.payload.completedAt };
        const { threadId: _threadId, ...checkpoint } = event.payload;
        thread.checkpoints = this.cutCheckpoints(upsertCheckpoint(thread.checkpoints, checkpoint));
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

  /**
   * Holds this much of the history from now on; lower limits let go at once. Higher ones cannot bring
   * back what was let go: whether anything was is `transcript().earlier`.
   */
  retain(limits: TailLimits): void {
    if (limits === this.limits) return;
    this.limits = limits;
    if (this.anchors.size > limits.anchors) this.noteCut();
    this.anchors.limit = limits.anchors;
    this.anchors.bound();
    boundFold(this.carried, limits);
    const thread = this.thread;
    if (thread && thread.checkpoints.length > limits.checkpoints) {
      thread.checkpoints = this.cutCheckpoints(thread.checkpoints);
      this.changes = undefined;
    }
    this.activityFacts = undefined;
    if (thread && thread.messages.length + thread.activities.length > limits.items) this.trim();
  }

  /** The newest checkpoints within the limits. */
  private cutCheckpoints(checkpoints: LatestCheckpoints): LatestCheckpoints {
    if (checkpoints.length <= this.limits.checkpoints) return checkpoints;
    this.noteCut();
    return checkpoints.slice(-this.limits.checkpoints);
  }

  /** Something was let go: under an open view's limits that is the tail working; under lower ones the view would miss it. */
  private noteCut(): void {
    if (this.limits !== OPEN_VIEW_TAIL) this.heldShort = true;
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
      if (message.role === "user") this.latestUserAt = message.createdAt;
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
    if (this.activityFacts?.driver !== driver) {
      const fold = foldActivities(copyFold(this.carried), thread.activities);
      this.activityFacts = { facts: { fold, pending: pendingOfFold(fold, observedHarness(driver).decisions) }, driver };
    }
    const { fold, pending: pendingAll } = this.activityFacts.facts;
    const { lastErrorText, startFailure } = fold;
    // The active turn's latest capacity warning is the one that counts.
    const capacityWarning = activeTurnId !== null ? (fold.warnings.get(activeTurnId) ?? null) : null;
    // A session in error with no turn can take no answer (blockedByOf in ./facts.ts): nothing is pending.
    // An answer counts while its request is pending; once T3 ends the request it is let go, so the set stays small.
    for (const requestId of this.answered) if (!pendingAll.some((request) => request.requestId === requestId)) this.answered.delete(requestId);
    const pending = sessionLost(thread.session) ? [] : pendingAll.filter((request) => !this.answered.has(request.requestId));
    // A start failure counts only if no session has run a turn since it.
    const latestUserAt = this.latestUserAt;
    const startFailureText =
      startFailure && (latestUserAt === null || startFailure.at >= latestUserAt) && (thread.session === null || thread.session.activeTurnId === null)
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
      requestEnds: Object.fromEntries(fold.ends),
      lastErrorText,
      hiddenFailure,
      subagents: [...fold.subagents.values()],
      activeRunId: activeTurnId,
      run: runStateOfRow({ ...thread, latestUserMessageAt: latestUserAt, hasPendingApprovals: false, hasPendingUserInput: false }, null),
      lastEventAt: this.lastEventAt,
      changes: (this.changes ??= turnChangesOf(thread.checkpoints)),
      usage: this.usage === undefined ? (this.usage = usageOfActivities(thread.activities)) : this.usage,
      lastTurnReported: lastTurnReported(thread, this.usage, this.goneReplyTurns),
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

  /**
   * What a followed thread's detail carries: the anchors of messages that left the tail, then the
   * tail (the same array until either changes), and how many of its items are anchors.
   */
  transcript(): { items: TranscriptItem[] } & TranscriptBounds {
    const tail = this.items();
    const anchors = this.anchors.items();
    if (anchors.length === 0) return { items: tail, anchored: 0, earlier: this.earlier };
    if (this.withAnchors?.tail !== tail || this.withAnchors.anchors !== anchors) this.withAnchors = { items: [...anchors, ...tail], tail, anchors };
    return { items: this.withAnchors.items, anchored: anchors.length, earlier: this.earlier };
  }

  get messages(): readonly ThreadMessage[] {
    return this.thread?.messages ?? [];
  }

  get activities(): readonly ThreadActivity[] {
    return this.thread?.activities ?? [];
  }

  /** Held items and token reports past the tail's trim point (`exact`: past its bound): let the oldest go. */
  private trimWhenLong(exact = false): void {
    const thread = this.thread;
    const bound = exact ? this.limits.items : trimPoint(this.limits.items, this.limits);
    if (thread && thread.messages.length + thread.activities.length > bound) this.trim();
  }

  /**
   * Keeps the newest `limits.items` items. The activities that leave are folded (in T3's
   * order) into the carried facts, the messages into anchors; token reports are compacted to what
   * usage reads (./usage-reports.ts). Every fact reads as it would from the whole history.
   */
  private trim(): void {
    const thread = this.thread;
    if (!thread) return;
    const items = this.items();
    const drop = Math.max(0, items.length - this.limits.items);
    const gone = new Set<string>();
    for (const item of items.slice(0, drop)) {
      gone.add(item.id);
      if (item.type !== "message") continue;
      this.anchors.add(item);
      if (item.role === "assistant" && item.runId !== null && this.goneReplyTurns.at(-1) !== item.runId)
        this.goneReplyTurns = [...this.goneReplyTurns.filter((turnId) => turnId !== item.runId), item.runId].slice(-2);
    }
    if (drop > 0) {
      this.noteCut();
      thread.messages = thread.messages.filter((message) => !gone.has(message.id));
      this.messageIndex.clear();
      thread.messages.forEach((message, index) => this.messageIndex.set(message.id, index));
      foldActivities(
        this.carried,
        thread.activities.filter((activity) => !isUsageReport(activity) && gone.has(activity.id)),
      );
      boundFold(this.carried, this.limits);
      this.earlier = true;
    }
    const reports = thread.activities.filter(isUsageReport);
    const compacted = compactUsageReports(reports);
    if (drop === 0 && compacted.length === reports.length) return;
    const keptReports = new Set(compacted);
    // A report that goes may still have said something besides usage (an error tone): folded like the rest.
    foldActivities(
      this.carried,
      reports.filter((report) => !keptReports.has(report)),
    );
    thread.activities = [
      ...compacted.filter((report) => !reports.includes(report)),
      ...thread.activities.filter((activity) => (isUsageReport(activity) ? keptReports.has(activity) : !gone.has(activity.id))),
    ].sort(byActivityOrder);
    this.orderedItems = items.slice(drop);
    this.itemPosition.clear();
    this.orderedItems.forEach((item, position) => this.itemPosition.set(item.id, position));
    this.activityFacts = undefined;
    this.usage = undefined;
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

function byActivityOrder(a: ThreadActivity, b: ThreadActivity): number {
  if (a.sequence !== undefined && b.sequence !== undefined && a.sequence !== b.sequence) return a.sequence - b.sequence;
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0;
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

type LatestCheckpoints = OrchestrationThread["checkpoints"];

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
function lastTurnReported(thread: OrchestrationThread, usage: UsageFacts | null, goneReplyTurns: readonly string[]): boolean {
  const turn = thread.latestTurn;
  if (!turn) return true;
  if (turn.state === "running" || (thread.session?.activeTurnId ?? null) !== null) return false;
  if (!usage || usage.reportedAt < (turn.startedAt ?? turn.requestedAt)) return false;
  if (thread.checkpoints.length > 0) return thread.checkpoints.findLast((checkpoint) => checkpoint.turnId === turn.turnId) !== undefined;
  return (
    thread.messages.findLast((message) => message.role === "assistant" && message.turnId !== null && message.turnId !== turn.turnId) !== undefined ||
    goneReplyTurns.some((turnId) => turnId !== turn.turnId)
  );
}

// Protocol 1: what a thread's activities say (pending requests, how requests ended, failures,
// capacity warnings, native subagents), folded in T3's activity order. The fold's state is compact:
// the projection folds the activities that left its transcript tail into it once (a carried fold)
// and goes on from there with the ones it holds, so these facts cover the whole history without
// keeping it (issue 43; shared/fleet/transcript-tail.ts).
import type { ApprovalOption, PendingRequest, Question, RequestEnd, SubagentFacts, SubagentStatus } from "../../fleet/facts";
import { keepNewest, type TailLimits } from "../../fleet/transcript-tail";
import type { ThreadActivity } from "./schemas";
import { cleanText, TEXT_LIMITS } from "../text";

export function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/** A string from an activity's free-form payload: server text, so cleaned like every decoded field. */
export function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? cleanText(value, { max: TEXT_LIMITS.reason }) : null;
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

/** Activities that close a pending request: the agent took an answer, or T3 could not pass one on. */
const RESOLUTIONS: Record<string, RequestEnd["how"]> = {
  "approval.resolved": "resolved",
  "provider.approval.respond.failed": "failed",
  "user-input.resolved": "resolved",
  "provider.user-input.respond.failed": "failed",
};

/** The state of the fold: what the activities so far say. */
export interface ActivityFold {
  pending: Map<string, PendingRequest>;
  /** Pending approvals that list no decisions: they offer what the harness was observed to take (read when shown). */
  observedDecisions: Set<string>;
  ends: Map<string, RequestEnd>;
  subagents: Map<string, SubagentFacts>;
  lastErrorText: string | null;
  lastErrorAt: string;
  startFailure: { detail: string; at: string } | null;
  /** Each turn's latest capacity warning: the active turn's counts (see ThreadProjection.facts). */
  warnings: Map<string, string>;
}

export function emptyFold(): ActivityFold {
  return {
    pending: new Map(),
    observedDecisions: new Set(),
    ends: new Map(),
    subagents: new Map(),
    lastErrorText: null,
    lastErrorAt: "",
    startFailure: null,
    warnings: new Map(),
  };
}

export function copyFold(fold: ActivityFold): ActivityFold {
  return {
    ...fold,
    pending: new Map(fold.pending),
    observedDecisions: new Set(fold.observedDecisions),
    ends: new Map(fold.ends),
    subagents: new Map(fold.subagents),
    warnings: new Map(fold.warnings),
  };
}

/** Turns whose capacity warnings a carried fold keeps: the active turn is one of the newest. */
const WARNING_TURNS_KEPT = 16;

/** A carried fold stays compact: request ends and finished subagents of the history, newest kept. */
export function boundFold(fold: ActivityFold, limits: TailLimits): void {
  keepNewest(fold.ends, limits.historyFacts);
  keepNewest(fold.subagents, limits.finishedSubagents, (subagent) => subagent.status === "running");
  keepNewest(fold.warnings, WARNING_TURNS_KEPT);
}

/** Folds activities (in T3's order) into `fold`, in place. */
export function foldActivities(fold: ActivityFold, activities: Iterable<ThreadActivity>): ActivityFold {
  for (const activity of activities) {
    const payload = record(activity.payload);
    const requestId = text(payload.requestId);
    if (activity.kind === "approval.requested" && requestId) {
      const listed = decisionsOf(payload.options);
      if (listed) fold.observedDecisions.delete(requestId);
      else fold.observedDecisions.add(requestId);
      fold.pending.set(requestId, {
        requestId,
        kind: "approval",
        detail: text(payload.detail) ?? activity.summary,
        requestKind: text(payload.requestKind),
        decisions: listed ?? [],
        createdAt: activity.createdAt,
      });
    } else if (activity.kind === "user-input.requested" && requestId) {
      const questions = Array.isArray(payload.questions) ? payload.questions.map(record) : [];
      fold.observedDecisions.delete(requestId);
      fold.pending.set(requestId, {
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
      fold.pending.delete(requestId);
      fold.observedDecisions.delete(requestId);
      // The first record is what became of the request; a later failure is an answer sent after it closed.
      if (!fold.ends.has(requestId))
        fold.ends.set(
          requestId,
          RESOLUTIONS[activity.kind] === "resolved"
            ? { how: "resolved", decision: text(payload.decision) }
            : { how: "failed", reason: text(payload.detail) ?? text(payload.message) ?? activity.summary },
        );
    }
    if (activity.tone === "error" && activity.kind !== "runtime.warning") {
      const detail = text(payload.message) ?? text(payload.detail) ?? activity.summary;
      if (activity.createdAt >= fold.lastErrorAt) {
        fold.lastErrorText = detail;
        fold.lastErrorAt = activity.createdAt;
      }
      if (activity.kind === "provider.turn.start.failed") fold.startFailure = { detail, at: activity.createdAt };
    }
    if (activity.kind === "runtime.warning" && activity.turnId !== null) {
      fold.warnings.delete(activity.turnId);
      fold.warnings.set(activity.turnId, text(payload.message) ?? activity.summary);
    }
    if (activity.kind.startsWith("task.")) {
      const taskId = text(payload.taskId);
      if (!taskId) continue;
      const previous = fold.subagents.get(taskId);
      const finished = activity.kind === "task.completed";
      const status: SubagentStatus = finished
        ? ["failed", "stopped"].includes(String(payload.status))
          ? (payload.status as "failed" | "stopped")
          : "completed"
        : "running";
      const shown = previous && previous.status !== "running" && !finished ? previous.status : status;
      // The task keeps the name it started with (0.0.42: `title`, the Agent call's description); a
      // failed one's `summary` is why it failed (recorded with Claude Code 2.1.328, docs/t3-protocols.md).
      fold.subagents.set(taskId, {
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
  return fold;
}

/** The pending requests of a fold; approvals that list no decisions offer what the harness was observed to take. */
export function pendingOfFold(fold: ActivityFold, observedDecisions: readonly ApprovalOption[]): PendingRequest[] {
  return [...fold.pending.values()].map((request) =>
    request.kind === "approval" && fold.observedDecisions.has(request.requestId) ? { ...request, decisions: [...observedDecisions] } : request,
  );
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

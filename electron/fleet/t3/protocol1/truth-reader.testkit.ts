// What a protocol-1 server stored of one thread, for the truth oracle (electron/fleet/truth-oracle.testkit.ts):
// its row and its detail (T3 0.0.42's `/api/orchestration/threads/:id`, the simulator's the same shape)
// read by T3's own rules (docs/t3-protocols.md, protocol 1's `run` rules and "What closes a request or a
// delivery"). Pure; the readers fetch (integration/realt3/truth-reader.testkit.ts, the fleet scenarios' machine).
import type { SubagentStatus } from "../../../../shared/fleet/facts";
import type { StoredRequest, StoredState, StoredThreadTruth } from "../../truth-oracle.testkit";

/** Model Router's child-id convention: a child's parent is in its id. */
export const CHILD_THREAD_ID = /^sub\.(.+)\.([^.]+)$/;

export interface Protocol1Row {
  id: string;
  archivedAt: string | null;
  deletedAt?: string | null;
  latestTurn: { turnId: string; state: string; requestedAt?: string; completedAt?: string | null } | null;
  session: { status: string; activeTurnId: string | null; lastError: string | null } | null;
  latestUserMessageAt?: string | null;
  hasPendingApprovals?: boolean;
  hasPendingUserInput?: boolean;
  backgroundLiveness?: string | null;
}

export interface Protocol1Activity {
  kind: string;
  createdAt: string;
  payload?: Record<string, unknown>;
}

const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : null);

/** The thread's state by T3's rules for its row, first match wins. */
function stateOf(row: Protocol1Row, pending: { kind: "approval" | "input" }[]): StoredState {
  if (row.deletedAt) return "deleted";
  if (row.archivedAt) return "archived";
  const session = row.session;
  if (session?.status === "error") return "failed";
  if (row.hasPendingApprovals ?? pending.some((request) => request.kind === "approval")) return "pending-approval";
  if (row.hasPendingUserInput ?? pending.some((request) => request.kind === "input")) return "pending-input";
  if (session?.status === "running" && session.activeTurnId) return "running";
  const turn = row.latestTurn;
  if (turn?.state === "error") return "failed";
  if (session?.status === "starting") return "starting";
  // A message T3 holds that no turn took yet: newer than the latest turn's end (a message sent while
  // that turn ran either joined it or waits for the next, which is then requested).
  const userAt = row.latestUserMessageAt ?? null;
  if (userAt && (!turn || userAt > (turn.completedAt ?? turn.requestedAt ?? ""))) return "starting";
  if (row.backgroundLiveness === "working") return "running";
  if (session?.status === "stopped") return "stopped";
  if (turn?.state === "interrupted" || session?.status === "interrupted") return "interrupted";
  return "idle";
}

const ENDS: Record<string, StoredRequest["end"]> = {
  "approval.resolved": "resolved",
  "user-input.resolved": "resolved",
  "provider.approval.respond.failed": "refused",
  "provider.user-input.respond.failed": "refused",
};

/** Each request T3 recorded and how it closed: the first record after it asked is what became of it. */
function requestsOf(activities: Protocol1Activity[], row: Protocol1Row): StoredRequest[] {
  const requests = new Map<string, StoredRequest>();
  for (const activity of [...activities].sort((a, b) => a.createdAt.localeCompare(b.createdAt))) {
    const requestId = text(activity.payload?.["requestId"]);
    if (!requestId) continue;
    if (activity.kind === "approval.requested" || activity.kind === "user-input.requested") {
      if (!requests.has(requestId)) requests.set(requestId, { requestId, end: "pending", decision: null, words: null });
    } else if (ENDS[activity.kind]) {
      const request = requests.get(requestId) ?? { requestId, end: "pending", decision: null, words: null };
      if (request.end === "pending")
        requests.set(requestId, {
          requestId,
          end: ENDS[activity.kind]!,
          decision: text(activity.payload?.["decision"]),
          words: ENDS[activity.kind] === "refused" ? text(activity.payload?.["detail"]) : null,
        });
    }
  }
  // Still listed under a session in error with no turn: no answer can reach the agent.
  const unanswerable = row.session?.status === "error" && !row.session.activeTurnId;
  return [...requests.values()].map((request) =>
    request.end === "pending" && unanswerable ? { ...request, end: "unanswerable", words: row.session?.lastError ?? null } : request,
  );
}

/** Native subagents from T3's task activities: each task's last record says where it is. */
function subagentsOf(activities: Protocol1Activity[]): StoredThreadTruth["subagents"] {
  const tasks = new Map<string, SubagentStatus>();
  for (const activity of [...activities].sort((a, b) => a.createdAt.localeCompare(b.createdAt))) {
    if (!activity.kind.startsWith("task.")) continue;
    const taskId = text(activity.payload?.["taskId"]);
    if (!taskId) continue;
    if (activity.kind === "task.completed") {
      const status = String(activity.payload?.["status"]);
      tasks.set(taskId, status === "failed" || status === "stopped" ? status : "completed");
    } else if (!tasks.has(taskId) || tasks.get(taskId) === "running") tasks.set(taskId, "running");
  }
  return [...tasks].map(([id, status]) => ({ id, status }));
}

/** One thread as T3 stored it: its row (the shell's, or the thread itself where no shell row is read) and its detail. */
export function protocol1ThreadTruth(
  row: Protocol1Row,
  detail: { messages: { role: string; text: string; createdAt?: string }[]; activities: Protocol1Activity[] },
): StoredThreadTruth {
  const requests = requestsOf(detail.activities, row);
  // Where no shell row says what is pending (the simulator's thread read): the requests no record closed.
  const pending = requests
    .filter((request) => request.end === "pending")
    .map((request) => ({
      kind: detail.activities.some((activity) => activity.kind === "user-input.requested" && activity.payload?.["requestId"] === request.requestId)
        ? ("input" as const)
        : ("approval" as const),
    }));
  // The simulator's thread read has no row fields: its latest user message says when one was sent.
  const latestUserMessageAt =
    row.latestUserMessageAt ??
    detail.messages
      .filter((message) => message.role === "user")
      .reduce<string | null>((latest, message) => (message.createdAt && message.createdAt > (latest ?? "") ? message.createdAt : latest), null);
  const state = stateOf({ ...row, latestUserMessageAt }, pending);
  return {
    threadId: row.id,
    parentThreadId: CHILD_THREAD_ID.exec(row.id)?.[1] ?? null,
    state,
    error: state === "failed" ? (row.session?.status === "error" ? row.session.lastError : null) : null,
    subagents: subagentsOf(detail.activities),
    userMessages: detail.messages.filter((message) => message.role === "user").map((message) => message.text),
    requests,
  };
}

type ThreadRead = Partial<Protocol1Row> & { messages: { role: string; text: string; createdAt?: string }[]; activities: Protocol1Activity[] };

/** A thread T3 no longer reads: deleted, with the parent its id names. */
export function deletedThreadTruth(threadId: string): StoredThreadTruth {
  return {
    threadId,
    parentThreadId: CHILD_THREAD_ID.exec(threadId)?.[1] ?? null,
    state: "deleted",
    error: null,
    subagents: [],
    userMessages: [],
    requests: [],
  };
}

/** A thread as the protocol-1 simulator's control API reads it (T3's thread shape, no row fields); none read: deleted. */
export function simulatedThreadTruth(threadId: string, detail: ThreadRead | null, archived: boolean): StoredThreadTruth {
  if (!detail) return deletedThreadTruth(threadId);
  const row: Protocol1Row = { latestTurn: null, session: null, ...detail, id: threadId, archivedAt: detail.archivedAt ?? (archived ? "archived" : null) };
  return protocol1ThreadTruth(row, detail);
}

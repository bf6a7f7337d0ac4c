// The truth oracle (issue 39): what a T3 server stored, read by a per-server reader into neutral
// terms, beside what the fleet says of the same threads (status and reason, roll-up, the inbox's
// needs, notifications, each receipt's last word). It returns every contradiction with both sides,
// so a test fails saying what T3 holds and what the fleet shows. Pure and protocol-neutral: the
// readers (electron/fleet/t3/protocol2/truth-reader.testkit.ts, integration/realt3/truth-reader.testkit.ts)
// apply T3's own rules, and the fleet side is read as the service publishes it (truth-watch.testkit.ts).
import { connectingReason, type Delivery } from "../../shared/fleet/delivery";
import type { SubagentStatus } from "../../shared/fleet/facts";
import type { NeedClass } from "../../shared/fleet/needs";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import type { AgentView, RollupStatus } from "../../shared/fleet/types";

/** A thread's state by T3's own rules for what it stored. */
export type StoredState =
  /** A turn asked for (or queued) and not yet running. */
  | "starting"
  /** A turn active (its answer may be final while background work drains). */
  | "running"
  | "pending-approval"
  | "pending-input"
  | "pending-auth"
  /** The latest turn failed, or its session is in error. */
  | "failed"
  | "interrupted"
  /** Completed, or never ran. */
  | "idle"
  /** The session stopped. */
  | "stopped"
  | "archived"
  | "deleted";

/** How a request T3 holds ended, in T3's records. */
export type StoredRequestEnd =
  | "pending"
  /** T3 recorded the agent taking it (protocol 1 `approval.resolved`, protocol 2 `resolved`). */
  | "resolved"
  /** T3 refused an answer (`provider.approval.respond.failed`), or expired or cancelled it. */
  | "refused"
  /** Still listed under a session in error with no turn: no answer can reach the agent. */
  | "unanswerable";

export interface StoredRequest {
  requestId: string;
  end: StoredRequestEnd;
  /** The decision T3 recorded, where it names one. */
  decision: string | null;
  /** T3's own words for a refusal, where it gave any. */
  words: string | null;
}

export interface StoredSubagent {
  id: string;
  /** As the server named it, in the fleet's terms (shared/fleet/facts.ts). */
  status: SubagentStatus;
}

export interface StoredThreadTruth {
  threadId: string;
  parentThreadId: string | null;
  state: StoredState;
  /** T3's words for a failure, where it stored any. */
  error: string | null;
  subagents: StoredSubagent[];
  /** Each user message's text as T3 stored it. */
  userMessages: string[];
  requests: StoredRequest[];
  /**
   * Imported by an in-place upgrade to protocol 2: T3 carried its messages, not its approvals and
   * questions (docs/t3-protocols.md, "Protocol 2"), so an answer from before cannot be judged.
   */
  imported?: boolean;
}

/** What one server stored, as a reader found it. */
export interface ServerTruth {
  environmentId: string;
  threads: StoredThreadTruth[];
}

/** What the fleet says of one environment. */
export interface FleetTruth {
  agents: AgentView[];
  /** The fleet's roll-up per agent key (service.model.rollup). */
  rollups: Map<string, RollupStatus | null>;
  /** The inbox's needs (shared/fleet/needs.ts, snoozes aside): agent key → class. */
  needs: Map<string, NeedClass>;
  /** Every notification the service emitted, in order. */
  notifications: NotificationIntent[];
  /** Each delivery's last state. */
  deliveries: Delivery[];
  /** Agent keys the fleet had seen needing nothing at an earlier check while online: a need now is news. */
  seenCalm?: Set<string>;
  /** Per request id, T3's words about it at earlier checks (T3 0.0.42 clears a session's error once the session is ready again). */
  wordsSeen?: Map<string, Set<string>>;
}

export type ContradictionKind = "missing" | "invented" | "status" | "reason" | "subagent" | "rollup" | "needs" | "notification" | "receipt";

export interface Contradiction {
  kind: ContradictionKind;
  threadId: string;
  /** What the server stored. */
  server: string;
  /** What the fleet says. */
  fleet: string;
}

/** The fleet statuses each stored state allows. A stall or a held-up run is "running" with a flag; stuck is a start that took long. */
const ALLOWED: Record<StoredState, readonly string[]> = {
  starting: ["starting", "stuck", "queued", "running"],
  running: ["running", "starting", "queued", "waiting"],
  "pending-approval": ["needs-approval"],
  "pending-input": ["needs-input"],
  "pending-auth": ["needs-auth"],
  failed: ["failed"],
  interrupted: ["interrupted"],
  idle: ["idle"],
  stopped: ["ended"],
  archived: ["ended"],
  // Protocol 2's shell only says a deleted thread left (thread.removed): shown ended, as a thread gone without saying how.
  deleted: ["deleted", "ended"],
};

const ACTIVE_SUBAGENT = new Set<SubagentStatus>(["pending", "running", "waiting"]);
const subagentClass = (status: SubagentStatus) =>
  ACTIVE_SUBAGENT.has(status) ? "active" : status === "failed" ? "failed" : status === "completed" || status === "stopped" ? "done" : "stopped";

const NEEDS_USER_ROLLUP = new Set<RollupStatus>(["needs-approval", "needs-input", "needs-auth", "failed", "stuck"]);
const ACTIVE_ROLLUP = new Set<RollupStatus>(["running", "starting", "queued", "waiting", "stalled", "held-up"]);

/** What the stored thread needs from the user by the fleet's one rule, judged on T3's side. */
function storedNeed(thread: StoredThreadTruth): NeedClass | null {
  if (thread.state === "pending-approval" || thread.state === "pending-input" || thread.state === "pending-auth") return "decision";
  if (thread.state === "failed") return "failure";
  const over = thread.state === "deleted" || thread.state === "stopped" || thread.state === "archived";
  if (!over && thread.subagents.some((subagent) => subagent.status === "failed")) return "failure";
  return null;
}

const NOTIFIED_AS: Partial<Record<NeedClass, readonly string[]>> = {
  decision: ["needs-approval", "needs-input"],
  failure: ["failed", "subagent-failed"],
  stall: ["stalled", "held-up"],
};

const shownAs = (view: AgentView | undefined) =>
  view ? `${view.status}${view.stalled ? " (stalled)" : ""}${view.reason ? ` · ${JSON.stringify(view.reason)}` : ""}` : "no row";
const storedWords = (thread: StoredThreadTruth) => `${thread.state}${thread.error ? ` · ${JSON.stringify(thread.error)}` : ""}`;

/** Every contradiction between what the server stored and what the fleet says of it. */
export function contradictions(server: ServerTruth, fleet: FleetTruth): Contradiction[] {
  const found: Contradiction[] = [];
  const add = (kind: ContradictionKind, threadId: string, serverSide: string, fleetSide: string) =>
    found.push({ kind, threadId, server: serverSide, fleet: fleetSide });
  const keyOf = (threadId: string) => `${server.environmentId}/${threadId}`;
  const views = new Map(fleet.agents.map((view) => [view.threadId, view]));
  const stored = new Map(server.threads.map((thread) => [thread.threadId, thread]));

  for (const view of fleet.agents)
    if (!stored.has(view.threadId) && view.status !== "deleted" && view.lifecycle !== "deleted")
      add("invented", view.threadId, "no such thread", shownAs(view));

  for (const thread of server.threads) {
    const view = views.get(thread.threadId);
    const key = keyOf(thread.threadId);
    if (!view) {
      // A row that left is kept a while, then goes: an archived or deleted thread may be absent.
      if (thread.state !== "deleted" && thread.state !== "archived") add("missing", thread.threadId, storedWords(thread), "no row");
      continue;
    }
    if (!ALLOWED[thread.state].includes(view.status)) add("status", thread.threadId, storedWords(thread), shownAs(view));
    else if (thread.state === "failed" && thread.error && !(view.reason ?? "").includes(thread.error))
      add("reason", thread.threadId, storedWords(thread), shownAs(view));

    for (const subagent of thread.subagents) {
      const shown = view.subagents.find((candidate) => candidate.id === subagent.id);
      if (!shown) add("subagent", thread.threadId, `subagent ${subagent.id} ${subagent.status}`, "not shown");
      else if (subagentClass(shown.status) !== subagentClass(subagent.status))
        add("subagent", thread.threadId, `subagent ${subagent.id} ${subagent.status}`, `subagent ${shown.status}`);
    }

    compareRollup(thread, server, fleet.rollups.get(key) ?? null, add);

    const need = storedNeed(thread);
    const shownNeed = fleet.needs.get(key) ?? null;
    const acknowledgedAway = need === "failure" && view.acknowledged;
    // A stall is the fleet's own clock on a running turn: T3 stores none.
    const stallAllowed = shownNeed === "stall" && (thread.state === "running" || thread.state === "starting");
    // A turn's changes awaiting the user's review are the fleet's own record of what the user marked (a setting).
    const reviewAllowed = (shownNeed as string | null) === "review" && need === null;
    if (!acknowledgedAway && !stallAllowed && !reviewAllowed && need !== shownNeed)
      add("needs", thread.threadId, `${storedWords(thread)} → needs ${need ?? "nothing"}`, `inbox: ${shownNeed ?? "nothing"} (${shownAs(view)})`);

    if (need && fleet.seenCalm?.has(key) && !acknowledgedAway) {
      const notified = fleet.notifications.some(
        (note) =>
          (note.agentKey === key && (NOTIFIED_AS[need] ?? []).includes(note.reason)) ||
          (note.reason === "summary" && note.environmentId === server.environmentId),
      );
      if (!notified) add("notification", thread.threadId, `${storedWords(thread)}: newly needs ${need}`, "no notification");
    }

    compareReceipts(thread, key, fleet.deliveries, fleet.wordsSeen, add);
  }

  const ids = new Map<string, number>();
  for (const note of fleet.notifications) ids.set(note.id, (ids.get(note.id) ?? 0) + 1);
  for (const [id, count] of ids) if (count > 1) add("notification", id, "one condition", `notified ${count} times`);
  for (const note of fleet.notifications) {
    if (note.environmentId !== server.environmentId || note.agentKey === null) continue;
    const threadId = note.agentKey.slice(server.environmentId.length + 1);
    if (!stored.has(threadId)) add("notification", threadId, "no such thread", `notified ${note.reason}: ${JSON.stringify(note.title)}`);
  }
  return found;
}

function compareRollup(
  thread: StoredThreadTruth,
  server: ServerTruth,
  rollup: RollupStatus | null,
  add: (...args: [ContradictionKind, string, string, string]) => void,
) {
  // What T3 stored under the thread: its child threads (all generations) and every native subagent.
  const below: string[] = thread.subagents.flatMap((subagent) => {
    const kind = subagentClass(subagent.status);
    return kind === "failed" ? ["failed"] : kind === "active" ? ["running"] : [];
  });
  const walk = (parentId: string, depth: number) => {
    if (depth > 32) return;
    for (const child of server.threads.filter((candidate) => candidate.parentThreadId === parentId)) {
      below.push(child.state);
      for (const subagent of child.subagents) if (subagentClass(subagent.status) !== "done") below.push(subagent.status === "failed" ? "failed" : "running");
      walk(child.threadId, depth + 1);
    }
  };
  walk(thread.threadId, 0);
  const needsUser = below.some((state) => state === "failed" || state.startsWith("pending-"));
  const active = below.some((state) => state === "running" || state === "starting");
  const what = `below it: ${below.length ? below.join(", ") : "nothing"}`;
  if (needsUser && (rollup === null || !NEEDS_USER_ROLLUP.has(rollup))) add("rollup", thread.threadId, what, `roll-up ${rollup ?? "none"}`);
  else if (!needsUser && rollup !== null && NEEDS_USER_ROLLUP.has(rollup) && rollup !== "stuck") add("rollup", thread.threadId, what, `roll-up ${rollup}`);
  else if (!needsUser && !active && rollup !== null && ACTIVE_ROLLUP.has(rollup)) add("rollup", thread.threadId, what, `roll-up ${rollup}`);
}

/** Whether this is the fleet's refusal of a send its machine was not online for (electron/fleet/deliveries.ts): "<label> is offline.", or still connecting. */
const notOnlineRefusal = (reason: string) => reason.endsWith(" is offline.") || reason.endsWith(connectingReason(""));

/** A receipt's last word against T3's record (docs/t3-protocols.md, "What closes a request or a delivery"). */
function compareReceipts(
  thread: StoredThreadTruth,
  key: string,
  deliveries: Delivery[],
  wordsSeen: Map<string, Set<string>> | undefined,
  add: (...args: [ContradictionKind, string, string, string]) => void,
) {
  // A deleted thread is no longer readable at T3: nothing is left to judge a receipt by.
  if (thread.state === "deleted") return;
  const mine = deliveries.filter((delivery) => delivery.agentKey === key);
  for (const delivery of mine) {
    const reached = delivery.state === "delivered" || delivery.state === "answered";
    if (delivery.kind === "approval" || delivery.kind === "input") {
      const request = thread.requests.find((candidate) => candidate.requestId === delivery.requestId);
      if (!request && thread.imported) continue;
      const record = request ? `request ${request.requestId} ${request.end}${request.words ? ` · ${JSON.stringify(request.words)}` : ""}` : "no such request";
      const receipt = `${delivery.kind} ${delivery.state}${delivery.reason ? ` · ${JSON.stringify(delivery.reason)}` : ""}`;
      if (reached && request?.end !== "resolved") add("receipt", thread.threadId, record, `${receipt} (reached the agent)`);
      if (delivery.state === "refused" && request?.end === "resolved" && delivery.reason === null) add("receipt", thread.threadId, record, receipt);
      // Refused before it left because its machine was not online (electron/fleet/deliveries.ts): T3 never had it, so what T3 later made of the request (a restart leaves it unanswerable) is no word the receipt owed.
      const notSentOffline = delivery.state === "refused" && notOnlineRefusal(delivery.reason ?? "");
      if (delivery.state === "refused" && !notSentOffline && request && (request.end === "refused" || request.end === "unanswerable") && request.words) {
        const shown = `${delivery.reason ?? ""} ${delivery.serverWords ?? ""}`;
        // T3's words for why it cannot be answered: its refusal, or the session error it stood under (an answer refused before it was sent).
        const t3Words = [request.words, thread.error, ...(wordsSeen?.get(request.requestId) ?? [])].filter((words): words is string => Boolean(words));
        if (!t3Words.some((words) => shown.includes(words))) add("receipt", thread.threadId, record, receipt);
      }
    } else if (delivery.kind === "message" && reached && delivery.text !== null) {
      const storedCount = thread.userMessages.filter((text) => text === delivery.text).length;
      const shownCount = mine.filter(
        (other) => other.kind === "message" && other.text === delivery.text && (other.state === "delivered" || other.state === "answered"),
      ).length;
      if (storedCount < shownCount)
        add("receipt", thread.threadId, `${storedCount} user message(s) ${JSON.stringify(delivery.text)}`, `${shownCount} shown delivered`);
    }
  }
}

/** The contradictions, each with both sides, one per line. */
export function sideBySide(found: Contradiction[]): string {
  return found.map((item) => `${item.kind} ${item.threadId}\n  T3 stored: ${item.server}\n  fleet says: ${item.fleet}`).join("\n");
}

/** Adds what T3 says now about each request (its refusal, the session error it stands under) to what it said at earlier checks. */
export function noteWords(server: ServerTruth, wordsSeen: Map<string, Set<string>>): void {
  for (const thread of server.threads)
    for (const request of thread.requests) {
      const words = [request.words, request.end !== "resolved" && thread.state === "failed" ? thread.error : null].filter((text): text is string =>
        Boolean(text),
      );
      if (words.length === 0) continue;
      const seen = wordsSeen.get(request.requestId) ?? new Set<string>();
      for (const text of words) seen.add(text);
      wordsSeen.set(request.requestId, seen);
    }
}

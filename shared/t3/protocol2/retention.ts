// Protocol 2: a followed thread's projection holds a bounded tail (issue 43;
// shared/fleet/transcript-tail.ts). Every list of a projection grows with the thread's age (turn
// items, runs, provider turns, requests, messages, checkpoints, subagents); past its bound, the
// oldest settled entries leave, and what the fleet reads from them is kept as compact facts
// (`Carried`): each message's outcome, each request's end, subagents, the last error, the tokens of
// the provider turns that left, and message anchors for the delivery rules. ./facts.ts reads a
// trimmed projection together with them, so the facts read as they would from the whole history.
import type { MessageOutcome, RequestEnd, SubagentFacts, TokenCounts, TranscriptItem } from "../../fleet/facts";
import { sumCounts } from "../../fleet/counts";
import { MessageAnchors, OPEN_VIEW_TAIL, keepNewest, type TailLimits, trimPoint } from "../../fleet/transcript-tail";
import { usageOfProjection } from "./changes";
import type { ProviderTurn, ThreadProjection, TurnItem } from "./schemas";

const SESSIONS_KEPT = 8;

/** What a trimmed projection no longer holds but the fleet reads (see messageOutcomesOf, requestEndsOf, subagentsOf, detailFactsOf in ./facts.ts). */
export interface Carried {
  anchors: MessageAnchors;
  /** Each message's outcome as it read when its item or run left: settled, so it wins over what is held. */
  outcomes: Map<string, MessageOutcome>;
  ends: Map<string, RequestEnd>;
  /** Subagents read from items, then from rows, that left (rows win, as in subagentsOf). */
  subagentItems: Map<string, SubagentFacts>;
  subagentRows: Map<string, SubagentFacts>;
  lastErrorText: string | null;
  /** The thread tokens of the provider turns that left; null when none of them reported any. */
  tokens: TokenCounts | null;
  /** Older turn items were let go. */
  earlier: boolean;
  /** How much of the history the projection holds (`retainLimits`). */
  limits: TailLimits;
  /** Something an open view shows was let go under lower limits (a fresh snapshot brings it back). */
  heldShort: boolean;
}

export function emptyCarried(): Carried {
  return {
    anchors: new MessageAnchors(),
    outcomes: new Map(),
    ends: new Map(),
    subagentItems: new Map(),
    subagentRows: new Map(),
    lastErrorText: null,
    tokens: null,
    earlier: false,
    limits: OPEN_VIEW_TAIL,
    heldShort: false,
  };
}

/** A snapshot starts afresh: nothing carried counts, the limits stay. */
export function freshCarried(previous: Carried): Carried {
  const carried = emptyCarried();
  retainLimits(carried, previous.limits);
  return carried;
}

/** Holds this much from now on: the carried facts at once, the projection at its next trim (`trimProjection`). */
export function retainLimits(carried: Carried, limits: TailLimits): void {
  carried.limits = limits;
  if (carried.anchors.size > limits.anchors) noteCut(carried);
  carried.anchors.limit = limits.anchors;
  carried.anchors.bound();
  boundCarried(carried);
}

/** Something was let go: under an open view's limits that is the tail working; under lower ones the view would miss it. */
function noteCut(carried: Carried): void {
  if (carried.limits !== OPEN_VIEW_TAIL) carried.heldShort = true;
}

function boundCarried(carried: Carried): void {
  const { historyFacts, finishedSubagents } = carried.limits;
  keepNewest(carried.outcomes, historyFacts);
  keepNewest(carried.ends, historyFacts);
  const running = (subagent: SubagentFacts) => subagent.status === "running" || subagent.status === "pending" || subagent.status === "waiting";
  keepNewest(carried.subagentItems, finishedSubagents, running);
  keepNewest(carried.subagentRows, finishedSubagents, running);
}

const ENDED_RUN = new Set(["completed", "failed", "interrupted", "cancelled", "rolled_back"]);
const ENDED_ITEM = new Set(["completed", "failed", "interrupted", "cancelled"]);

/** Two thread token counts together, as if summed over both sets of turns (shared/t3/protocol2/changes.ts threadCounts). */
export function addTokens(a: TokenCounts | null, b: TokenCounts | null): TokenCounts | null {
  if (!a || !b) return a ?? b;
  return {
    total: sumCounts([a.total, b.total]),
    input: sumCounts([a.input, b.input]),
    cachedInput: sumCounts([a.cachedInput, b.cachedInput]),
    output: sumCounts([a.output, b.output]),
    reasoning: sumCounts([a.reasoning, b.reasoning]),
  };
}

/** Whether a list is past its trim point (`exact`: past its limit, as a snapshot is cut at once). */
function over(projection: ThreadProjection, limits: TailLimits, exact: boolean): boolean {
  const past = (length: number, limit: number) => length > (exact ? limit : trimPoint(limit, limits));
  return (
    past(projection.turnItems.length, limits.items) ||
    past(projection.runs.length, limits.settledEntries) ||
    past(projection.providerTurns.length, limits.settledEntries) ||
    past(projection.runtimeRequests.length, limits.settledEntries) ||
    past(projection.messages.length, limits.settledEntries) ||
    past(projection.subagents.length, limits.settledEntries) ||
    past(projection.checkpoints.length, limits.checkpoints) ||
    past(projection.providerSessions.length, SESSIONS_KEPT)
  );
}

/** The newest `limit` entries (in `order`) and every one `keep` holds on to; the rest, in order. */
function split<T>(entries: readonly T[], limit: number, keep: (entry: T) => boolean, order?: (a: T, b: T) => number): { kept: T[]; gone: T[] } {
  const sorted = order ? [...entries].sort(order) : entries;
  const cut = sorted.length - limit;
  const kept: T[] = [];
  const gone: T[] = [];
  sorted.forEach((entry, index) => (index >= cut || keep(entry) ? kept : gone).push(entry));
  return { kept, gone };
}

/**
 * The projection with its oldest settled entries let go (the same object when nothing is over its
 * bound, trimmed in batches), `carried` updated with what they said. `read`: ./facts.ts's readings,
 * passed in (./facts.ts reads a trimmed projection with `Carried`, so it imports this file).
 */
export function trimProjection(projection: ThreadProjection, carried: Carried, read: Readings, exact = false): ThreadProjection {
  const limits = carried.limits;
  if (!over(projection, limits, exact)) return projection;
  noteCut(carried);
  const pendingRequests = new Set(projection.runtimeRequests.filter((request) => request.status === "pending").map((request) => request.id));
  const isPendingRequestItem = (item: TurnItem) =>
    (item.type === "approval_request" || item.type === "user_input_request") && (item.status === "pending" || pendingRequests.has(item.requestId));
  const items = split(projection.turnItems, limits.items, isPendingRequestItem, (a, b) => a.ordinal - b.ordinal);
  const runs = split(
    projection.runs,
    limits.settledEntries,
    (run) => !ENDED_RUN.has(run.status),
    (a, b) => a.ordinal - b.ordinal,
  );
  const providerTurns = split(projection.providerTurns, limits.settledEntries, (turn) => turn.status === "running" || turn.status === "pending", byTurnTime);
  const requests = split(projection.runtimeRequests, limits.settledEntries, (request) => request.status === "pending");
  const subagents = split(projection.subagents, limits.settledEntries, (subagent) => !ENDED_ITEM.has(subagent.status));
  const liveRuns = new Set(runs.kept.filter((run) => !ENDED_RUN.has(run.status)).map((run) => run.userMessageId));

  // What the entries that leave say, read from the projection that still holds them.
  const outcomes = read.outcomes(projection);
  // The first reading wins: a message read after its run left would read as joined to it.
  const keepOutcome = (messageId: string) => {
    if (outcomes[messageId] && !carried.outcomes.has(messageId)) carried.outcomes.set(messageId, outcomes[messageId]!);
  };
  const goneMessages = new Set<string>();
  for (const item of items.gone) {
    if (item.type === "user_message" || item.type === "assistant_message") {
      carried.anchors.add(read.transcriptItem(item));
      goneMessages.add(item.messageId);
    }
    if (item.type === "user_message") keepOutcome(item.messageId);
    if (item.type === "error") carried.lastErrorText = item.failure.message;
  }
  for (const run of runs.gone) keepOutcome(run.userMessageId);
  const ends = read.ends({ ...projection, runtimeRequests: requests.gone });
  for (const [id, end] of Object.entries(ends)) carried.ends.set(id, end);
  for (const subagent of read.subagents({ ...projection, turnItems: items.gone.filter((item) => item.type === "subagent"), subagents: [] }))
    carried.subagentItems.set(subagent.id, subagent);
  for (const subagent of read.subagents({ ...projection, turnItems: [], subagents: subagents.gone })) carried.subagentRows.set(subagent.id, subagent);
  carried.tokens = addTokens(carried.tokens, usageOfProjection({ providerTurns: providerTurns.gone })?.thread ?? null);
  if (items.gone.length > 0) carried.earlier = true;
  boundCarried(carried);

  // A message whose item left leaves with it (else it would read as one waiting for its run, ./facts.ts transcriptOf).
  const messages = split(
    projection.messages.filter((message) => !goneMessages.has(message.id)),
    limits.settledEntries,
    (message) => liveRuns.has(message.id),
  );
  return {
    ...projection,
    turnItems: items.kept,
    runs: runs.kept,
    providerTurns: providerTurns.kept,
    runtimeRequests: requests.kept,
    subagents: subagents.kept,
    messages: messages.kept,
    checkpoints: projection.checkpoints.slice(-limits.checkpoints),
    providerSessions: [...projection.providerSessions].sort((a, b) => a.updatedAt.localeCompare(b.updatedAt)).slice(-SESSIONS_KEPT),
  };
}

function byTurnTime(a: ProviderTurn, b: ProviderTurn): number {
  const atA = a.completedAt ?? a.startedAt ?? "";
  const atB = b.completedAt ?? b.startedAt ?? "";
  return atA < atB ? -1 : atA > atB ? 1 : 0;
}

/** The readings of ./facts.ts that trimming keeps the results of. */
export interface Readings {
  outcomes: (projection: ThreadProjection) => Record<string, MessageOutcome>;
  ends: (projection: ThreadProjection) => Record<string, RequestEnd>;
  subagents: (projection: ThreadProjection) => SubagentFacts[];
  transcriptItem: (item: TurnItem) => TranscriptItem;
}

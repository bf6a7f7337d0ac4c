// T3's own time for a thread's turn starting and ending, read from the shell rows T3 sends (each
// row carries its turn's state, its session's status and the server's updatedAt) and from the
// thread streams' `thread.session-set` events (status and occurredAt), whichever came first: "working" and
// "back to idle" as T3 timed them, the same for both pages whatever reached which first; and when
// the row first reached the fleet's service (T3's frame), as T3 sends it to every client at once.
interface ShellRow {
  id: string;
  updatedAt: string;
  latestTurn?: { state?: unknown } | null;
  session?: { status?: unknown } | null;
}

export interface RowChange {
  turn: string;
  session: string;
  /** The row's updatedAt (T3's event time), epoch ms. */
  at: number;
  /** When the fleet's service received it, epoch ms. */
  receivedAt: number;
}

function isShellRow(value: unknown): value is ShellRow {
  if (typeof value !== "object" || value === null) return false;
  const row = value as Partial<ShellRow>;
  return typeof row.id === "string" && typeof row.updatedAt === "string" && "session" in row && "latestTurn" in row;
}

function* rowsIn(value: unknown, depth = 0): Generator<ShellRow> {
  if (depth > 6 || typeof value !== "object" || value === null) return;
  if (isShellRow(value)) yield value;
  else for (const child of Array.isArray(value) ? value : Object.values(value)) yield* rowsIn(child, depth + 1);
}

interface SessionSet {
  type: "thread.session-set";
  aggregateId: string;
  occurredAt: string;
  payload: { session: { status: string } };
}

function isSessionSet(value: unknown): value is SessionSet {
  const event = value as Partial<SessionSet> | null;
  return (
    event?.type === "thread.session-set" &&
    typeof event.aggregateId === "string" &&
    typeof event.occurredAt === "string" &&
    typeof event.payload?.session?.status === "string"
  );
}

function* sessionSetsIn(value: unknown, depth = 0): Generator<SessionSet> {
  if (depth > 6 || typeof value !== "object" || value === null) return;
  if (isSessionSet(value)) yield value;
  else for (const child of Array.isArray(value) ? value : Object.values(value)) yield* sessionSetsIn(child, depth + 1);
}

const BUSY = ["starting", "running"];
const busy = (change: RowChange) => BUSY.includes(change.session) || change.turn === "running";

export function sessionTimes() {
  const seen = new Map<string, RowChange[]>();
  let since = Infinity;
  return {
    /** Keeps only rows received at or after `at` (epoch ms). */
    since(at: number) {
      since = at;
    },
    record(frame: unknown) {
      const receivedAt = Date.now();
      if (receivedAt < since) return;
      const add = (threadId: string, change: RowChange) => {
        const list = seen.get(threadId) ?? [];
        const previous = list.at(-1);
        if (!previous || previous.turn !== change.turn || previous.session !== change.session) list.push(change);
        seen.set(threadId, list);
      };
      for (const row of rowsIn(frame)) {
        add(row.id, {
          turn: String(row.latestTurn?.state ?? "none"),
          session: String(row.session?.status ?? "none"),
          at: Date.parse(row.updatedAt),
          receivedAt,
        });
      }
      for (const event of sessionSetsIn(frame)) {
        const status = event.payload.session.status;
        // An event says nothing of the turn: a session under way implies it, a settled one ends it.
        add(event.aggregateId, { turn: BUSY.includes(status) ? "running" : "ended", session: status, at: Date.parse(event.occurredAt), receivedAt });
      }
    },
    /** The first row that showed the thread's turn under way. */
    working: (threadId: string) => seen.get(threadId)?.find(busy),
    /** The first row received after `after` (epoch ms) that showed it no longer under way. */
    ended: (threadId: string, after: number) => seen.get(threadId)?.find((change) => change.receivedAt >= after && !busy(change)),
    changes: (threadId: string) => seen.get(threadId) ?? [],
  };
}

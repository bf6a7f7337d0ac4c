// T3's own time for a thread's session changes, read from the shell rows T3 sends (each row's
// session carries the status and the server's updatedAt): the start of "working" and "back to idle"
// as T3 timed them, the same for both pages whatever reached which first; and when the row first
// reached the fleet's service (T3's frame), as T3 sends it to every client at once.
interface SessionRow {
  id: string;
  session: { status: string; updatedAt: string };
}

function isSessionRow(value: unknown): value is SessionRow {
  if (typeof value !== "object" || value === null) return false;
  const row = value as { id?: unknown; session?: { status?: unknown; updatedAt?: unknown } | null };
  return typeof row.id === "string" && typeof row.session?.status === "string" && typeof row.session.updatedAt === "string";
}

function* rowsIn(value: unknown, depth = 0): Generator<SessionRow> {
  if (depth > 6 || typeof value !== "object" || value === null) return;
  if (isSessionRow(value)) yield value;
  for (const child of Array.isArray(value) ? value : Object.values(value)) yield* rowsIn(child, depth + 1);
}

export function sessionTimes() {
  const seen = new Map<string, { status: string; at: number; receivedAt: number }[]>();
  let since = Infinity;
  return {
    /** Counts only changes T3 timed at or after `at` (epoch ms). */
    since(at: number) {
      since = at;
    },
    record(frame: unknown) {
      for (const row of rowsIn(frame)) {
        const at = Date.parse(row.session.updatedAt);
        if (!(at >= since)) continue;
        const list = seen.get(row.id) ?? [];
        if (!list.some((entry) => entry.status === row.session.status && entry.at === at))
          list.push({ status: row.session.status, at, receivedAt: Date.now() });
        seen.set(row.id, list);
      }
    },
    /** When T3 first set the thread's session starting or running. */
    running: (threadId: string) => seen.get(threadId)?.find((entry) => entry.status === "running" || entry.status === "starting"),
    /** When T3 first set it to anything but running or starting after `after`. */
    ready: (threadId: string, after: number) =>
      seen.get(threadId)?.find((entry) => entry.status !== "running" && entry.status !== "starting" && entry.at >= after - 50),
  };
}

// Protocol 1: the token reports (`context-window.updated` activities) a thread holds, compacted to
// what usage reads (./changes.ts usageOfActivities): the newest report overall and each turn's
// newest, whose processed totals add up to the thread's. Older reports of a turn change nothing and
// go; past USAGE_TURNS_KEPT turns, the oldest turns' totals are summed into one report that stands
// for them, so a thread's usage reads the same without a report per turn of its history (issue 43).
import { countOrNull, sumCounts } from "../../fleet/counts";
import type { ThreadActivity } from "./schemas";

/** Turns whose newest report is held as it came; older turns are summed into one. */
export const USAGE_TURNS_KEPT = 32;
const FOLDED_TURN = "usage-of-earlier-turns";

export function isUsageReport(activity: ThreadActivity): boolean {
  return activity.kind === "context-window.updated";
}

/** The newer of two reports by usageOfActivities' order (time, then sequence, then id). */
function newer(a: ThreadActivity, b: ThreadActivity): ThreadActivity {
  if (a.createdAt !== b.createdAt) return a.createdAt > b.createdAt ? a : b;
  const sequenceA = a.sequence ?? -1;
  const sequenceB = b.sequence ?? -1;
  if (sequenceA !== sequenceB) return sequenceA > sequenceB ? a : b;
  return a.id >= b.id ? a : b;
}

function processedOf(report: ThreadActivity): number | null {
  const payload = report.payload;
  return typeof payload === "object" && payload !== null ? countOrNull((payload as Record<string, unknown>).totalProcessedTokens) : null;
}

/**
 * The reports usage needs, as the same objects where kept: each turn's newest; past USAGE_TURNS_KEPT
 * turns, the oldest (never the turnless one, nor the newest report) summed into one older report.
 */
export function compactUsageReports(reports: readonly ThreadActivity[]): ThreadActivity[] {
  const newestByTurn = new Map<string | null, ThreadActivity>();
  for (const report of reports) {
    const known = newestByTurn.get(report.turnId);
    newestByTurn.set(report.turnId, known ? newer(known, report) : report);
  }
  const kept = [...newestByTurn.values()];
  // Counted without the turnless report, which is never folded.
  const byAge = kept.filter((report) => report.turnId !== null);
  if (byAge.length <= USAGE_TURNS_KEPT) return kept;
  byAge.sort((a, b) => (newer(a, b) === a ? 1 : -1));
  const folded = byAge.slice(0, byAge.length - USAGE_TURNS_KEPT);
  const processed = folded.flatMap((report) => processedOf(report) ?? []);
  // A sum past the exact range stays past it: the thread's total then reads as not reported, as before.
  const sum = processed.length > 0 ? (sumCounts(processed) ?? Number.MAX_SAFE_INTEGER) : null;
  const oldest = folded[0]!;
  const standIn: ThreadActivity = {
    // A stand-in folded again keeps its id (else the id would grow by a prefix at every compaction).
    id: oldest.turnId === FOLDED_TURN ? oldest.id : `${FOLDED_TURN}:${oldest.id}`,
    tone: "info",
    kind: "context-window.updated",
    summary: "Token reports of earlier turns",
    payload: sum === null ? {} : { totalProcessedTokens: sum },
    turnId: FOLDED_TURN,
    createdAt: oldest.createdAt,
  };
  const gone = new Set(folded);
  return [standIn, ...kept.filter((report) => !gone.has(report))];
}

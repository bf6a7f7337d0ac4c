// Token reports compacted to what usage reads: a turnless report is held beside the turns' newest and
// never folded, so 32 turns and one turnless report are held as they came (this threw before).
import { describe, expect, it } from "vitest";
import type { ThreadActivity } from "./schemas";
import { compactUsageReports, USAGE_TURNS_KEPT } from "./usage-reports";

function report(turnId: string | null, index: number, processed: number): ThreadActivity {
  return {
    id: `report-${turnId ?? "none"}-${index}`,
    tone: "info",
    kind: "context-window.updated",
    summary: "Context window updated",
    payload: { totalProcessedTokens: processed },
    turnId,
    createdAt: new Date(Date.UTC(2026, 11, 5, 10, 0, index)).toISOString(),
  };
}

const turns = (count: number) => Array.from({ length: count }, (_, index) => report(`turn-${index}`, index + 1, 10));

describe("compactUsageReports", () => {
  it("holds every turn's newest and the turnless report as they came while the turns fit", () => {
    const reports = [report(null, 0, 5), ...turns(USAGE_TURNS_KEPT)];
    expect(compactUsageReports(reports)).toEqual(reports);
  });

  it("sums the oldest turns past the kept number into one report, the turnless one untouched", () => {
    const reports = [report(null, 0, 5), ...turns(USAGE_TURNS_KEPT + 3)];
    const compacted = compactUsageReports(reports);
    expect(compacted).toHaveLength(USAGE_TURNS_KEPT + 2);
    expect(compacted[0]).toMatchObject({ turnId: "usage-of-earlier-turns", payload: { totalProcessedTokens: 30 } });
    expect(compacted).toContain(reports[0]);
    expect(compacted.at(-1)).toBe(reports.at(-1));
  });

  it("a stand-in folded again keeps its id and adds up, however many times the reports are compacted", () => {
    let held: ThreadActivity[] = [report(null, 0, 5)];
    for (let index = 0; index < 500; index++) held = compactUsageReports([...held, report(`turn-${index}`, index + 1, 10)]);
    const standIn = held.find((activity) => activity.turnId === "usage-of-earlier-turns")!;
    expect(standIn.id).toBe("usage-of-earlier-turns:report-turn-0-1");
    expect(standIn.payload).toEqual({ totalProcessedTokens: (500 - USAGE_TURNS_KEPT) * 10 });
  });
});

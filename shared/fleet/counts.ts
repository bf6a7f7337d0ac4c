// Counts a server reports (lines changed, tokens) are facts only while they are exact: a safe
// non-negative integer. A sum that leaves the safe range is no longer exact, so it is not reported
// rather than shown rounded (issue 43: two token counts of 2^53 − 1 were summed to "18014398509M").

/** A count a server reported: a safe non-negative integer. */
export function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** The count, or null (not reported) when it is anything else. */
export function countOrNull(value: unknown): number | null {
  return isCount(value) ? value : null;
}

/** The exact sum of counts, or null when one is not reported or the sum is no longer exact. */
export function sumCounts(values: Iterable<number | null>): number | null {
  let total = 0;
  for (const value of values) {
    if (value === null) return null;
    total += value;
    if (!Number.isSafeInteger(total)) return null;
  }
  return total;
}

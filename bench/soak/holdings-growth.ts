// What the service holds that grew (electron/serve/holdings.ts, in each sample's resource report):
// the paths whose objects and entries, or characters, rose most from the first steady sample to the
// last, so a run whose heap rises also says which store rose, without a heap snapshot (which would
// spoil the figures it explains).
import type { Holding } from "../../electron/serve/holdings";

/** Paths held in large numbers, for the log's line per sample: enough to follow a store across the run. */
export function heldLine(holdings: readonly Holding[], walkMs: number, minCount = 300, minChars = 30_000): string {
  const large = holdings.filter((holding) => holding.objects + holding.entries >= minCount || holding.chars >= minChars);
  large.sort((a, b) => b.objects + b.entries - (a.objects + a.entries));
  return `held (walked in ${walkMs} ms): ${large.map((holding) => `${holding.path} ${holding.objects}/${holding.entries}/${holding.chars}`).join("; ") || "nothing watched"}`;
}

export interface HoldingChange {
  path: string;
  /** Objects plus entries, at the start and at the end. */
  count: [number, number];
  chars: [number, number];
}

/**
 * The `top` paths whose count rose most and the `top` whose characters rose most (a path the report
 * left out as small reads as 0 there). Paths under a path already listed for the same rise are kept:
 * `rows` and `rows[*]` say whether the store grew in entries or its entries in size.
 */
export function holdingsGrowth(start: readonly Holding[], end: readonly Holding[], top = 8): { byCount: HoldingChange[]; byChars: HoldingChange[] } {
  const paths = new Set([...start, ...end].map((holding) => holding.path));
  const at = (holdings: readonly Holding[]) => new Map(holdings.map((holding) => [holding.path, holding]));
  const first = at(start);
  const last = at(end);
  const changes = [...paths].map((path): HoldingChange => {
    const a = first.get(path);
    const b = last.get(path);
    return { path, count: [a ? a.objects + a.entries : 0, b ? b.objects + b.entries : 0], chars: [a?.chars ?? 0, b?.chars ?? 0] };
  });
  const rise = (pair: [number, number]) => pair[1] - pair[0];
  return {
    byCount: changes
      .filter((change) => rise(change.count) > 0)
      .sort((a, b) => rise(b.count) - rise(a.count))
      .slice(0, top),
    byChars: changes
      .filter((change) => rise(change.chars) > 0)
      .sort((a, b) => rise(b.chars) - rise(a.chars))
      .slice(0, top),
  };
}

export function holdingsGrowthText(start: readonly Holding[], end: readonly Holding[]): string {
  if (start.length === 0 && end.length === 0) return "what the service holds: not reported";
  const { byCount, byChars } = holdingsGrowth(start, end);
  const list = (changes: HoldingChange[], read: (change: HoldingChange) => [number, number]) =>
    changes.map((change) => `${change.path} ${read(change)[0]} → ${read(change)[1]}`).join(", ") || "none";
  return `what the service holds that grew after warm-up: objects and entries ${list(byCount, (change) => change.count)}; characters ${list(byChars, (change) => change.chars)}`;
}

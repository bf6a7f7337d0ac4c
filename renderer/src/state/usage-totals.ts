// The fleet's token totals as the window shows them (components/UsageTotals.tsx): summed again only
// when something they read changed (facts.ts usageVersion), not on every fleet change: a running
// agent's activity times are patched every few seconds, and summing 10,000 agents' usage then took
// about 10 ms of the frame that showed the patch (issue 44).
import { type UsageTotal, usageTotals } from "../../../shared/fleet/changes-usage";
import { memoized } from "./derived";

/** Usage figures keep as the bridge reported them while it is lost (selectors.ts displayAgent changes status only). */
export const selectUsageTotals = memoized(
  (s) => [s.agents, s.environments, s.usageVersion] as const,
  // usageVersion is read only to know when to sum again.
  (agents, environments, _usageVersion): { fleet: UsageTotal; machines: UsageTotal[]; projects: UsageTotal[] } =>
    usageTotals(agents.values(), (id) => environments.get(id)?.label ?? id),
);

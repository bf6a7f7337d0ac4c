// Token totals over the agents the fleet has seen (issue 24): for the fleet, per machine and per
// project (across machines, as "By project" groups them), with the span of the reports they sum.
// Only the thread figures T3 reported are summed, saying for how many of the agents it knows one;
// the context fill is summed apart and never counted as use (issue 39).
import { contextTotalWords, totalWords, type UsageTotal } from "../../../shared/fleet/changes-usage";
import { useFleet } from "../state/store";
import { selectUsageTotals } from "../state/usage-totals";

function span(total: UsageTotal): string {
  if (!total.from || !total.to) return "";
  const when = (iso: string) => new Date(iso).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  return total.from === total.to ? ` · reported ${when(total.to)}` : ` · reports from ${when(total.from)} to ${when(total.to)}`;
}

function TotalLine({ total }: { total: UsageTotal }) {
  return (
    <li data-testid="usage-total" data-id={total.id}>
      <strong>{total.label}</strong>: {totalWords(total)}
      {span(total)} · <span data-testid="context-total">{contextTotalWords(total)}</span>
    </li>
  );
}

export function UsageTotals() {
  // Renders again only when the totals do (state/usage-totals.ts), not on every fleet change.
  const totals = useFleet(selectUsageTotals);
  if (totals.fleet.agents === 0) return null;
  return (
    // A region of its own, its headings under the window's (axe's region and heading-order rules).
    <section className="usage-totals" aria-label="Token totals">
      <details data-testid="usage-totals">
        <summary>
          Tokens: <span data-testid="fleet-tokens">{totalWords(totals.fleet)}</span>
          {span(totals.fleet)} · <span data-testid="fleet-context">{contextTotalWords(totals.fleet)}</span>
        </summary>
        <div className="usage-columns">
          <section>
            <h2>Per machine</h2>
            <ul>
              {totals.machines.map((total) => (
                <TotalLine key={total.id} total={total} />
              ))}
            </ul>
          </section>
          <section>
            <h2>Per project</h2>
            <ul>
              {totals.projects.map((total) => (
                <TotalLine key={total.id} total={total} />
              ))}
            </ul>
          </section>
        </div>
        <p className="hint">
          Over the threads this window has seen, as T3 reported them, never more: a thread the fleet never followed has no figures, the context a thread holds
          now is not use, and T3 records no cache writes for Claude, so its figures can be well below what the provider counted.
        </p>
      </details>
    </section>
  );
}

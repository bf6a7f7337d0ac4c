// Where a search looks (issue 40 point 5): one query serves both panes, so each says plainly what it
// searches. In the inbox, only what needs the user, with a way to widen the same query to the whole
// fleet; in the fleet, every agent, so a query typed in the inbox is never silently still applied.
import { dispatch } from "../state/dispatch";
import type { PaneView } from "../state/slices/ui";
import { useFleet } from "../state/store";

const agents = (count: number) => `${count} ${count === 1 ? "agent matches" : "agents match"}`;

export function SearchScope({ pane, inboxMatches, fleetMatches }: { pane: PaneView; inboxMatches: number; fleetMatches: number }) {
  const search = useFleet((s) => s.search);
  if (!search) return null;
  return (
    // A landmark (axe: all content in one); its name avoids the word "search", which names the search box alone.
    <section className="search-scope" aria-label="Where the query looks" data-testid="search-scope" data-pane={pane}>
      <span data-testid="search-scope-words">
        {pane === "inbox"
          ? `Searching only what needs you for “${search}”: ${inboxMatches} of them ${inboxMatches === 1 ? "matches" : "match"}.`
          : `Searching the whole fleet for “${search}”: ${agents(fleetMatches)}.`}
      </span>
      {pane === "inbox" ? (
        <button type="button" data-testid="search-fleet" onClick={() => dispatch("view.set", "button", { view: "fleet" })}>
          Search the whole fleet ({agents(fleetMatches)})
        </button>
      ) : null}
      <button type="button" data-testid="search-clear" onClick={() => dispatch("fleet.search-text", "button", { text: "" })}>
        Clear the search
      </button>
    </section>
  );
}

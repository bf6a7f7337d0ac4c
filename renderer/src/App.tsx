import { type MouseEvent, useEffect, useRef, useState } from "react";
import { actionSpec, keyHint } from "../../shared/fleet/action-registry";
import { ActionConfirmation } from "./components/ActionConfirmation";
import { KeyHints } from "./components/KeyHints";
import { driverName } from "../../shared/fleet/provider-name";
import { AgentPanel } from "./components/AgentPanel";
import { ActionButton } from "./components/ActionButton";
import { CommandPalette } from "./components/CommandPalette";
import { FindMachines } from "./components/FindMachines";
import { FleetTree } from "./components/FleetTree";
import { HandledToday } from "./components/HandledToday";
import { InboxList } from "./components/Inbox";
import { SearchScope } from "./components/SearchScope";
import { Notices } from "./components/Notices";
import { PairingDialog } from "./components/PairingDialog";
import { NewAgentDialog } from "./components/NewAgentDialog";
import { CreationReceipts } from "./components/CreationReceipts";
import { useNewAgent } from "./state/new-agent";
import { SettingsDialog } from "./components/SettingsDialog";
import { SnoozedList } from "./components/SnoozedList";
import { DiffView } from "./components/DiffView";
import { UsageTotals } from "./components/UsageTotals";
import { useFleetFacts } from "./state/fleet-facts";
import { dispatch } from "./state/dispatch";
import { focusTargets, focusWhenStill } from "./state/focus";
import { selectGlance, selectInbox, selectMatchingRows, selectPane, selectProviders, selectRows, selectSelectable } from "./state/derived";
import { filtersActive } from "./state/selectors";
import { useDiscovery } from "./state/discovery";
import { useFleet } from "./state/store";

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** A small window's menus close once one of their buttons was used. */
function closeOnButton(close: () => void) {
  return (event: MouseEvent<HTMLElement>) => {
    if ((event.target as HTMLElement).closest("button")) close();
  };
}

export function App() {
  const { environments } = useFleetFacts();
  const bridgeLostAt = useFleet((s) => s.bridgeLostAt);
  const filters = useFleet((s) => s.filters);
  const search = useFleet((s) => s.search);
  const grouping = useFleet((s) => s.grouping);
  const openKey = useFleet((s) => s.openKey);
  const pairingOpen = useFleet((s) => s.pairing.open);
  const newAgentOpen = useNewAgent((s) => s.open);
  const settingsOpen = useFleet((s) => s.settingsOpen);
  const paletteOpen = useFleet((s) => s.paletteOpen);
  const loaded = useFleet((s) => s.loaded);
  const inFlight = useFleet((s) => s.inFlight);
  const findMachinesOpen = useDiscovery((s) => s.open);
  const listOpen = useFleet((s) => s.listOpen);
  // Small windows fold the window's actions and the filters into two menus (styles/layout.css and styles/panes.css, max-width 600px).
  const [actionsOpen, setActionsOpen] = useState(false);
  const [filtersOpen, setFiltersOpen] = useState(false);
  const searchRef = useRef<HTMLInputElement>(null);
  const paneRef = useRef<HTMLDivElement>(null);
  // The views are the store's derived selectors (state/derived.ts), shared with the dispatcher.
  const rows = useFleet(selectRows);
  // One "needs you" count (shared/fleet/needs.ts) for the top bar, the Inbox badge and the tab (state/tab.ts).
  const { counts, needYou } = useFleet(selectGlance);
  const providerList = useFleet(selectProviders);
  const inboxNow = useFleet(selectInbox);
  const pane = useFleet(selectPane);
  // Every agent of the fleet the search and filters match, whichever pane shows (components/SearchScope.tsx).
  const fleetMatches = useFleet(selectMatchingRows).length;
  // What ↑/↓ move through and what search chooses from: the inbox's items, or the tree's matching agents.
  const selectable = useFleet(selectSelectable);

  useEffect(() => {
    focusTargets.search = () => searchRef.current?.focus();
    focusTargets.pane = () => paneRef.current?.focus();
  }, []);
  // A search selects its first match (never a parent kept for context), so ↓ or Enter reach a match.
  useEffect(() => {
    if (!search) return;
    const { selectedKey } = useFleet.getState();
    if (!selectable.includes(selectedKey ?? "") && selectable[0]) dispatch("agent.select", "keys", { key: selectable[0] });
  }, [search, selectable]);

  // Esc closes what is on top; every other key is a registry command (state/keys.ts).
  useEffect(() => {
    const onEscape = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      const state = useFleet.getState();
      if (state.paletteOpen) dispatch("palette.close", "keys");
      else if (state.diff) dispatch("diff.close", "keys");
      else if (state.settingsOpen) dispatch("settings.close", "keys");
      // A list (Handled today, Snoozed) closes on Esc wherever focus went while it was open.
      else if (state.listOpen) {
        dispatch("list.close", "keys");
        requestAnimationFrame(focusWhenStill("pane"));
      } else if (state.pairing.open) dispatch("pairing.close", "keys");
      else if (useNewAgent.getState().open) dispatch("new-agent.close", "keys");
      else if (document.activeElement === searchRef.current) searchRef.current?.blur();
      else if (state.openKey) {
        // Back to the list, on the agent just left.
        dispatch("agent.close", "keys");
        requestAnimationFrame(focusWhenStill("pane"));
      }
    };
    window.addEventListener("keydown", onEscape);
    return () => window.removeEventListener("keydown", onEscape);
  }, []);

  return (
    <div className={`app ${openKey ? "agent-open" : ""}`}>
      <header className="topbar">
        <h1>T3 Fleet</h1>
        <span className="summary" data-testid="fleet-summary">
          <span className="summary-fleet">
            {plural(counts.environments, "machine")} · {plural(counts.agents, "agent")} ·{" "}
          </span>
          <button
            type="button"
            className={`needs-you-count ${counts.needsYou ? "needs-you" : ""}`}
            data-testid="needs-you-count"
            title={[
              `${actionSpec("fleet.next-needs-you").label} (${keyHint(actionSpec("fleet.next-needs-you"))})`,
              counts.snoozed ? `${counts.snoozed} snoozed, not counted` : null,
              counts.acknowledged ? `${counts.acknowledged} acknowledged, not counted` : null,
            ]
              .filter(Boolean)
              .join(" · ")}
            disabled={needYou.length === 0}
            onClick={() => dispatch("fleet.next-needs-you", "button")}
          >
            {counts.needsYou} {counts.needsYou === 1 ? "needs" : "need"} you
          </button>
          <span className={`hosts-down ${counts.hostsDown ? "" : "none"}`} data-testid="hosts-down" aria-hidden={counts.hostsDown === 0}>
            {" "}
            · {counts.hostsDown || 1} not online
          </span>
        </span>
        {bridgeLostAt && loaded ? (
          <span className="error" role="status" data-testid="bridge-lost">
            T3 Fleet's service is not reachable: everything shows as unknown until it returns. Reconnecting…
          </span>
        ) : null}
        <span className="busy" data-testid="busy" data-pending={inFlight} aria-hidden={inFlight === 0}>
          {inFlight > 0 ? "working…" : ""}
        </span>
        <div className="topbar-actions">
          <input
            ref={searchRef}
            className="search"
            type="search"
            placeholder="Search  ( / )"
            aria-label="Search"
            value={search}
            onChange={(event) => dispatch("fleet.search-text", "keys", { text: event.target.value })}
            onKeyDown={(event) => {
              const selected = selectable.find((key) => key === useFleet.getState().selectedKey) ?? selectable[0];
              if (event.key === "Escape") {
                // Leaves the search but keeps the query (the browser would clear a search field);
                // the open agent stays open until the next Esc.
                event.preventDefault();
                event.stopPropagation();
                event.currentTarget.blur();
              } else if (event.key === "ArrowDown" && selected) {
                // Into the list, on the first match (already selected); the next ↓ moves on from there.
                event.preventDefault();
                dispatch("agent.select", "keys", { key: selected });
                paneRef.current?.focus();
              } else if (event.key === "Enter" && selected) {
                event.preventDefault();
                // Out of the search at once: keys pressed while the agent opens are commands, not search text.
                event.currentTarget.blur();
                dispatch("agent.open", "keys", { key: selected, focus: true });
              }
            }}
          />
          <button
            type="button"
            className="small-menu-toggle"
            aria-expanded={actionsOpen}
            aria-controls="topbar-menu"
            data-testid="topbar-menu-toggle"
            onClick={() => setActionsOpen(!actionsOpen)}
          >
            Menu
          </button>
          <div id="topbar-menu" className={`small-menu ${actionsOpen ? "open" : ""}`} onClick={closeOnButton(() => setActionsOpen(false))}>
            <span className="segmented" role="group" aria-label="Group by">
              <button
                type="button"
                aria-pressed={grouping === "machine"}
                data-testid="group-machine"
                onClick={() => dispatch("fleet.group", "button", { grouping: "machine" })}
              >
                By machine
              </button>
              <button
                type="button"
                aria-pressed={grouping === "project"}
                data-testid="group-project"
                onClick={() => dispatch("fleet.group", "button", { grouping: "project" })}
              >
                By project
              </button>
            </span>
            <ActionButton id="palette.open" testId="open-palette" label="Commands" />
            <ActionButton id="settings.open" testId="open-settings" label="Settings" />
            <button type="button" data-testid="open-find-machines" onClick={() => dispatch("machines.find", "button")}>
              Find machines
            </button>
            <ActionButton id="agent.new" testId="open-new-agent" label="New agent" />
            <ActionButton id="pairing.open" testId="open-pairing" label="Pair machine" className="primary" />
          </div>
        </div>
      </header>
      <nav className="filters" aria-label="Filters">
        <span className="segmented" role="group" aria-label="Show">
          <button
            type="button"
            aria-pressed={pane === "inbox"}
            data-testid="view-inbox"
            title="Only what needs you, most urgent first (v)"
            onClick={() => dispatch("view.set", "button", { view: "inbox" })}
          >
            Inbox{" "}
            <span className="view-count" data-testid="inbox-count">
              {counts.needsYou}
            </span>
          </button>
          <button
            type="button"
            aria-pressed={pane === "fleet"}
            data-testid="view-fleet"
            title="Every machine and agent (v)"
            onClick={() => dispatch("view.set", "button", { view: "fleet" })}
          >
            Fleet
          </button>
        </span>
        <button
          type="button"
          className="small-menu-toggle"
          aria-expanded={filtersOpen}
          aria-controls="filters-menu"
          data-testid="filters-menu-toggle"
          onClick={() => setFiltersOpen(!filtersOpen)}
        >
          Filters{filtersActive(filters, "") ? " (on)" : ""}
        </button>
        <div id="filters-menu" className={`small-menu ${filtersOpen ? "open" : ""}`}>
          {pane === "fleet" &&
            (
              [
                ["needsMe", "Needs me"],
                ["failed", "Failed"],
                ["running", "Running"],
                ["offline", "Offline"],
              ] as const
            ).map(([key, label]) => (
              <button
                key={key}
                type="button"
                aria-pressed={filters[key]}
                className={filters[key] ? "on" : ""}
                data-testid={`filter-${key}`}
                onClick={() => dispatch("fleet.filter", "button", { patch: { [key]: !filters[key] } })}
              >
                {label}
              </button>
            ))}
          <select
            aria-label="Machine"
            value={filters.environmentId ?? ""}
            onChange={(event) => dispatch("fleet.filter", "button", { patch: { environmentId: event.target.value || null } })}
          >
            <option value="">All machines</option>
            {[...environments.values()].map((env) => (
              <option key={env.environmentId} value={env.environmentId}>
                {env.label}
              </option>
            ))}
          </select>
          <select
            aria-label="Provider"
            value={filters.provider ?? ""}
            onChange={(event) => dispatch("fleet.filter", "button", { patch: { provider: event.target.value || null } })}
          >
            <option value="">All providers</option>
            {providerList.map((provider) => (
              <option key={provider} value={provider}>
                {driverName(provider)}
              </option>
            ))}
          </select>
        </div>
        {filtersActive(filters, search) ? (
          <button type="button" onClick={() => dispatch("fleet.clear-filters", "button")}>
            Clear
          </button>
        ) : null}
      </nav>
      <Notices />
      <CreationReceipts />
      <SearchScope pane={pane} inboxMatches={inboxNow.items.length} fleetMatches={fleetMatches} />
      {pane === "fleet" ? <UsageTotals /> : null}
      <main className={openKey ? "split" : ""}>
        {!loaded ? (
          <p className="empty">Connecting to T3 Fleet…</p>
        ) : environments.size === 0 ? (
          <div className="empty" data-testid="empty-fleet">
            <p>No T3 environment is paired yet.</p>
            <button type="button" className="primary" onClick={() => dispatch("pairing.open", "button")}>
              Pair your first machine
            </button>
          </div>
        ) : pane === "inbox" ? (
          <InboxList items={inboxNow.items} snoozed={inboxNow.snoozed} hidden={inboxNow.total - inboxNow.items.length} paneRef={paneRef} />
        ) : rows.length === 0 && filtersActive(filters, search) ? (
          <div className="empty" data-testid="empty-filter">
            <p>{search ? `No agent matches “${search}”${filtersActive(filters, "") ? " with these filters" : ""}.` : "No agent matches these filters."}</p>
            <button type="button" onClick={() => dispatch("fleet.clear-filters", "button")}>
              Clear the search and filters
            </button>
          </div>
        ) : (
          <FleetTree rows={rows} treeRef={paneRef} />
        )}
        {openKey ? <AgentPanel agentKey={openKey} /> : null}
      </main>
      <KeyHints pane={pane} />
      {pairingOpen ? <PairingDialog /> : null}
      {settingsOpen ? <SettingsDialog /> : null}
      {newAgentOpen ? <NewAgentDialog /> : null}
      {paletteOpen ? <CommandPalette /> : null}
      <DiffView />
      {findMachinesOpen ? <FindMachines /> : null}
      {listOpen === "handled" ? <HandledToday /> : null}
      {listOpen === "snoozed" ? <SnoozedList /> : null}
      {/* With an agent open, the agent view shows it above its composer (AgentPanel.tsx). */}
      {openKey ? null : <ActionConfirmation />}
    </div>
  );
}

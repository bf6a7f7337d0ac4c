import { useEffect, useMemo, useRef } from "react";
import { command, commandForKey, keyHint } from "../../shared/fleet/command-registry";
import { AgentPanel } from "./components/AgentPanel";
import { CommandButton } from "./components/CommandButton";
import { CommandPalette } from "./components/CommandPalette";
import { FindMachines } from "./components/FindMachines";
import { FleetTree } from "./components/FleetTree";
import { Notices } from "./components/Notices";
import { PairingDialog } from "./components/PairingDialog";
import { SettingsDialog } from "./components/SettingsDialog";
import { useNow } from "./components/common";
import { commandContext, commands, focusTargets, runCommand } from "./state/effects";
import { buildRows, displayFacts, filtersActive, glance, providers, type Row } from "./state/selectors";
import { useDiscovery } from "./state/discovery";
import { useFleet } from "./state/store";

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** Rows that are agents, for moving the selection. */
function agentRows(rows: Row[]): Extract<Row, { kind: "agent" }>[] {
  return rows.filter((row): row is Extract<Row, { kind: "agent" }> => row.kind === "agent");
}

/** The clock that folds old idle agents moves by the minute; the tree need not rebuild faster. */
const FOLD_CLOCK_MS = 60_000;

export function App() {
  const version = useFleet((s) => s.version);
  const rawAgents = useFleet((s) => s.agents);
  const bridgeLostAt = useFleet((s) => s.bridgeLostAt);
  const environments = useFleet((s) => s.environments);
  const filters = useFleet((s) => s.filters);
  const search = useFleet((s) => s.search);
  const collapsed = useFleet((s) => s.collapsed);
  const grouping = useFleet((s) => s.grouping);
  const olderThanMs = useFleet((s) => s.olderThanMs);
  const olderShown = useFleet((s) => s.olderShown);
  const openKey = useFleet((s) => s.openKey);
  const pairingOpen = useFleet((s) => s.pairing.open);
  const settingsOpen = useFleet((s) => s.settingsOpen);
  const paletteOpen = useFleet((s) => s.paletteOpen);
  const loaded = useFleet((s) => s.loaded);
  const inFlight = useFleet((s) => s.inFlight);
  const findMachinesOpen = useDiscovery((s) => s.open);
  const searchRef = useRef<HTMLInputElement>(null);
  const foldClock = Math.floor(useNow(FOLD_CLOCK_MS) / FOLD_CLOCK_MS) * FOLD_CLOCK_MS;

  // The maps are mutated in place; `version` marks each change. Every view below is computed once per change.
  const agents = useMemo(() => displayFacts(rawAgents, bridgeLostAt), [version, rawAgents, bridgeLostAt]);
  const rows = useMemo(
    () => buildRows({ agents, environments, filters, search, collapsed, grouping, olderThanMs, olderShown, now: foldClock, bridgeLost: bridgeLostAt !== null }),
    [version, agents, environments, filters, search, collapsed, grouping, olderThanMs, olderShown, foldClock, bridgeLostAt],
  );
  const { counts, needYou } = useMemo(() => glance(agents, environments), [version, agents, environments]);
  const providerList = useMemo(() => providers(agents), [version, agents]);

  useEffect(() => {
    focusTargets.search = () => searchRef.current?.focus();
  }, []);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const state = useFleet.getState();
      if (event.key === "Escape") {
        if (state.paletteOpen) state.showPalette(false);
        else if (state.settingsOpen) state.showSettings(false);
        else if (state.pairing.open) commands.closePairing();
        else if (document.activeElement === searchRef.current) searchRef.current?.blur();
        else if (state.openKey) commands.closeAgent();
        return;
      }
      const spec = commandForKey(event);
      if (spec?.id === "palette.open") {
        event.preventDefault();
        if (!state.pairing.open && !state.settingsOpen) state.showPalette(!state.paletteOpen);
        return;
      }
      if (isTyping(event.target) || state.pairing.open || state.settingsOpen || state.paletteOpen || !spec) return;
      const list = agentRows(rows);
      const index = list.findIndex((row) => row.id === state.selectedKey);
      event.preventDefault();
      switch (spec.id) {
        case "fleet.down":
          commands.select(list[Math.min(index + 1, list.length - 1)]?.id ?? null);
          return;
        case "fleet.up":
          commands.select(list[Math.max(index - 1, 0)]?.id ?? null);
          return;
        case "fleet.expand":
        case "fleet.collapse": {
          const row = list[index];
          if (row && row.childCount > 0 && (spec.id === "fleet.expand") === row.collapsed) state.toggleCollapsed(row.id);
          return;
        }
        default:
          if (spec.enabled(commandContext())) runCommand(spec.id);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [rows]);

  const state = useFleet.getState();
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
            title={`${command("fleet.next-needs-you").label} (${keyHint(command("fleet.next-needs-you"))})`}
            disabled={needYou.length === 0}
            onClick={() => runCommand("fleet.next-needs-you")}
          >
            {counts.needsYou} need you
          </button>
          {counts.hostsDown ? <span className="hosts-down"> · {counts.hostsDown} not online</span> : null}
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
            onChange={(event) => state.setSearch(event.target.value)}
            onKeyDown={(event) => {
              const first = agentRows(rows)[0];
              if (event.key === "Escape") {
                // Leaves the search but keeps the query (the browser would clear a search field);
                // the open agent stays open until the next Esc.
                event.preventDefault();
                event.stopPropagation();
                event.currentTarget.blur();
              } else if (event.key === "ArrowDown" && first) {
                event.preventDefault();
                commands.select(first.id);
                event.currentTarget.blur();
              } else if (event.key === "Enter" && first) {
                event.preventDefault();
                const selected = agentRows(rows).find((row) => row.id === useFleet.getState().selectedKey);
                void commands.openAgent((selected ?? first).id);
                event.currentTarget.blur();
              }
            }}
          />
          <span className="segmented" role="group" aria-label="Group by">
            <button type="button" aria-pressed={grouping === "machine"} data-testid="group-machine" onClick={() => state.setGrouping("machine")}>
              By machine
            </button>
            <button type="button" aria-pressed={grouping === "project"} data-testid="group-project" onClick={() => state.setGrouping("project")}>
              By project
            </button>
          </span>
          <CommandButton id="palette.open" testId="open-palette" label="Commands" />
          <CommandButton id="settings.open" testId="open-settings" label="Settings" />
          <button type="button" data-testid="open-find-machines" onClick={() => useDiscovery.getState().show(true)}>
            Find machines
          </button>
          <CommandButton id="pairing.open" testId="open-pairing" label="Pair machine" className="primary" />
        </div>
      </header>
      <nav className="filters" aria-label="Filters">
        {(
          [
            ["needsMe", "Needs me"],
            ["failed", "Failed"],
            ["running", "Running"],
            ["offline", "Offline"],
          ] as const
        ).map(([key, label]) => (
          <button key={key} type="button" aria-pressed={filters[key]} className={filters[key] ? "on" : ""} data-testid={`filter-${key}`} onClick={() => state.setFilters({ [key]: !filters[key] })}>
            {label}
          </button>
        ))}
        <select aria-label="Machine" value={filters.environmentId ?? ""} onChange={(event) => state.setFilters({ environmentId: event.target.value || null })}>
          <option value="">All machines</option>
          {[...environments.values()].map((env) => (
            <option key={env.environmentId} value={env.environmentId}>
              {env.label}
            </option>
          ))}
        </select>
        <select aria-label="Provider" value={filters.provider ?? ""} onChange={(event) => state.setFilters({ provider: event.target.value || null })}>
          <option value="">All providers</option>
          {providerList.map((provider) => (
            <option key={provider}>{provider}</option>
          ))}
        </select>
        {filtersActive(filters, search) ? (
          <button type="button" onClick={() => state.clearFilters()}>
            Clear
          </button>
        ) : null}
        <span className="shortcuts">↑↓ move · Enter open · n next that needs you · / search · Ctrl+K commands · Esc back</span>
      </nav>
      <Notices />
      <main className={openKey ? "split" : ""}>
        {!loaded ? (
          <p className="empty">Connecting to T3 Fleet…</p>
        ) : environments.size === 0 ? (
          <div className="empty" data-testid="empty-fleet">
            <p>No T3 environment is paired yet.</p>
            <button type="button" className="primary" onClick={() => commands.openPairing()}>
              Pair your first machine
            </button>
          </div>
        ) : (
          <FleetTree rows={rows} />
        )}
        {openKey ? <AgentPanel agentKey={openKey} /> : null}
      </main>
      {pairingOpen ? <PairingDialog /> : null}
      {settingsOpen ? <SettingsDialog /> : null}
      {paletteOpen ? <CommandPalette /> : null}
      {findMachinesOpen ? <FindMachines /> : null}
    </div>
  );
}

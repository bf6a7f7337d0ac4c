import { useEffect, useMemo, useRef } from "react";
import { needsYouNow } from "../../shared/fleet/types";
import { AgentPanel } from "./components/AgentPanel";
import { FleetTree } from "./components/FleetTree";
import { PairingDialog } from "./components/PairingDialog";
import { SettingsDialog } from "./components/SettingsDialog";
import { commands } from "./state/effects";
import { buildRows, filtersActive, nextNeedingYou, providers } from "./state/selectors";
import { NO_FILTERS, useFleet } from "./state/store";

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

export function App() {
  const version = useFleet((s) => s.version);
  const agents = useFleet((s) => s.agents);
  const environments = useFleet((s) => s.environments);
  const filters = useFleet((s) => s.filters);
  const search = useFleet((s) => s.search);
  const collapsed = useFleet((s) => s.collapsed);
  const openKey = useFleet((s) => s.openKey);
  const pairingOpen = useFleet((s) => s.pairing.open);
  const settingsOpen = useFleet((s) => s.settingsOpen);
  const connected = useFleet((s) => s.connected);
  const loaded = useFleet((s) => s.loaded);
  const notices = useFleet((s) => s.notices);
  const toasts = useFleet((s) => s.toasts);
  const searchRef = useRef<HTMLInputElement>(null);

  // The maps are mutated in place; `version` marks each change.
  const rows = useMemo(() => buildRows(agents, environments, filters, search, collapsed), [version, agents, environments, filters, search, collapsed]);
  const counts = useMemo(() => {
    let needsYou = 0;
    let hostsDown = 0;
    for (const agent of agents.values()) if (needsYouNow(agent)) needsYou++;
    for (const env of environments.values()) if (env.connection.phase !== "online") hostsDown++;
    return { needsYou, hostsDown, agents: agents.size, environments: environments.size };
  }, [version, agents, environments]);
  const providerList = useMemo(() => providers(agents), [version, agents]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const state = useFleet.getState();
      if (event.key === "Escape") {
        if (state.settingsOpen) state.set({ settingsOpen: false });
        else if (state.pairing.open) commands.closePairing();
        else if (state.openKey) commands.closeAgent();
        else if (document.activeElement === searchRef.current) searchRef.current?.blur();
        return;
      }
      if (isTyping(event.target) || state.pairing.open || state.settingsOpen || event.metaKey || event.ctrlKey || event.altKey) return;
      const agentRows = rows.filter((row) => row.kind === "agent");
      const index = agentRows.findIndex((row) => row.id === state.selectedKey);
      if (event.key === "ArrowDown" || event.key === "j") {
        event.preventDefault();
        commands.select(agentRows[Math.min(index + 1, agentRows.length - 1)]?.id ?? null);
      } else if (event.key === "ArrowUp" || event.key === "k") {
        event.preventDefault();
        commands.select(agentRows[Math.max(index - 1, 0)]?.id ?? null);
      } else if (event.key === "Enter" && state.selectedKey) {
        event.preventDefault();
        void commands.openAgent(state.selectedKey);
      } else if (event.key === "/") {
        event.preventDefault();
        searchRef.current?.focus();
      } else if (event.key === "n") {
        event.preventDefault();
        const next = nextNeedingYou(rows, state.selectedKey);
        if (next) void commands.openAgent(next);
      } else if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
        const row = agentRows[index];
        if (row?.kind === "agent" && row.childCount > 0 && (event.key === "ArrowRight") === row.collapsed) state.toggleCollapsed(row.id);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [rows]);

  const setFilters = useFleet((s) => s.setFilters);
  return (
    <div className="app">
      <header className="topbar">
        <h1>T3 Fleet</h1>
        <span className="summary" data-testid="fleet-summary">
          {counts.environments} machines · {counts.agents} agents ·{" "}
          <span className={counts.needsYou ? "needs-you" : ""} data-testid="needs-you-count">
            {counts.needsYou} need you
          </span>
          {counts.hostsDown ? <span className="hosts-down"> · {counts.hostsDown} not online</span> : null}
        </span>
        {!connected && loaded ? <span className="error">Reconnecting to T3 Fleet…</span> : null}
        <input ref={searchRef} className="search" type="search" placeholder="Search title or id  ( / )" aria-label="Search" value={search} onChange={(event) => useFleet.getState().set({ search: event.target.value })} />
        <button type="button" data-testid="open-settings" onClick={() => useFleet.getState().set({ settingsOpen: true })}>
          Settings
        </button>
        <button type="button" className="primary" data-testid="open-pairing" onClick={() => commands.openPairing()}>
          Pair machine
        </button>
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
          <button key={key} type="button" aria-pressed={filters[key]} className={filters[key] ? "on" : ""} data-testid={`filter-${key}`} onClick={() => setFilters({ [key]: !filters[key] })}>
            {label}
          </button>
        ))}
        <select aria-label="Machine" value={filters.environmentId ?? ""} onChange={(event) => setFilters({ environmentId: event.target.value || null })}>
          <option value="">All machines</option>
          {[...environments.values()].map((env) => (
            <option key={env.environmentId} value={env.environmentId}>
              {env.label}
            </option>
          ))}
        </select>
        <select aria-label="Provider" value={filters.provider ?? ""} onChange={(event) => setFilters({ provider: event.target.value || null })}>
          <option value="">All providers</option>
          {providerList.map((provider) => (
            <option key={provider}>{provider}</option>
          ))}
        </select>
        {filtersActive(filters, search) ? (
          <button type="button" onClick={() => useFleet.getState().set({ filters: NO_FILTERS, search: "" })}>
            Clear
          </button>
        ) : null}
        <span className="shortcuts">↑↓/jk move · Enter open · n next that needs you · / search · Esc back</span>
      </nav>
      {notices.map((notice) => (
        <p key={notice} className="notice" role="status">
          {notice}
        </p>
      ))}
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
      <div className="toasts" aria-live="polite">
        {toasts.map((toast) => (
          <div key={toast.id} className={`toast toast-${toast.reason}`} data-testid="toast">
            <button
              type="button"
              className="toast-body"
              onClick={() => {
                if (toast.agentKey) void commands.openAgent(toast.agentKey);
                useFleet.getState().dismissToast(toast.id);
              }}
            >
              <strong>{toast.title}</strong>
              <span>{toast.body}</span>
            </button>
            <button type="button" aria-label="Dismiss" onClick={() => useFleet.getState().dismissToast(toast.id)}>
              ×
            </button>
          </div>
        ))}
      </div>
    </div>
  );
}

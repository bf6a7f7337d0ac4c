import { useEffect, useMemo, useRef, useState } from "react";
import { type ActionSpec, keyHint, paletteActions } from "../../../shared/fleet/action-registry";
import { agentAsOfWords, STATUS_WORDS } from "../../../shared/fleet/words";
import { actionContext } from "../state/action-context";
import { dispatch } from "../state/dispatch";
import { clockTime } from "../state/format";
import { displayAgent } from "../state/selectors";
import { useFleet } from "../state/store";

/** Agents and machines the palette offers at most, so a large fleet never floods it. */
const MAX_FOUND = 8;

type Entry =
  | { kind: "command"; id: string; label: string; hint: string; spec: ActionSpec }
  | { kind: "agent"; id: string; label: string; hint: string; key: string }
  | { kind: "machine"; id: string; label: string; hint: string; environmentId: string };

/**
 * Ctrl+K: every enabled command by name, and the agents and machines whose names match. ↑/↓ choose,
 * Enter runs, Esc closes. A listbox whose options are plain items (no buttons inside).
 */
export function CommandPalette() {
  const [query, setQuery] = useState("");
  const [index, setIndex] = useState(0);
  const inputRef = useRef<HTMLInputElement>(null);
  const context = useMemo(() => actionContext(), []);
  const agents = useFleet((s) => s.agents);
  const environments = useFleet((s) => s.environments);
  const bridgeLostAt = useFleet((s) => s.bridgeLostAt);
  const list = useMemo<Entry[]>(() => {
    const entries: Entry[] = paletteActions(context, query).map((spec) => ({
      kind: "command",
      id: `command:${spec.id}`,
      label: spec.label,
      hint: keyHint(spec),
      spec,
    }));
    const needle = query.trim().toLowerCase();
    if (!needle) return entries;
    const found: Entry[] = [];
    for (const env of environments.values()) {
      if (found.length >= MAX_FOUND) break;
      if (env.label.toLowerCase().includes(needle))
        found.push({
          kind: "machine",
          id: `machine:${env.environmentId}`,
          label: `Show machine ${env.label}`,
          hint: "machine",
          environmentId: env.environmentId,
        });
    }
    for (const raw of agents.values()) {
      if (found.length >= MAX_FOUND * 2) break;
      if (!raw.title.toLowerCase().includes(needle) && !raw.threadId.toLowerCase().includes(needle)) continue;
      const agent = displayAgent(raw, bridgeLostAt);
      const machine = environments.get(agent.environmentId)?.label ?? agent.environmentId;
      // Away: what it was doing, with what is away named as of when (never a bare "unknown").
      const hint =
        agent.status === "unknown"
          ? agentAsOfWords(agent, bridgeLostAt ? "T3 Fleet's service not reachable" : `${machine} offline`, clockTime)
          : STATUS_WORDS[agent.status];
      found.push({ kind: "agent", id: `agent:${agent.key}`, label: `${agent.title} — ${machine}`, hint, key: agent.key });
    }
    return [...entries, ...found];
  }, [context, query, agents, environments, bridgeLostAt]);
  const chosen = list[Math.min(index, list.length - 1)];
  useEffect(() => inputRef.current?.focus(), []);
  const close = () => dispatch("palette.close", "palette");
  const run = (entry: Entry) => {
    close();
    if (entry.kind === "command") dispatch(entry.spec.id, "palette");
    else if (entry.kind === "agent") dispatch("agent.open", "palette", { key: entry.key });
    else dispatch("machine.show", "palette", { environmentId: entry.environmentId });
  };
  const optionId = (entry: Entry) => `palette-${encodeURIComponent(entry.id)}`;
  return (
    <div className="dialog-backdrop" onClick={close}>
      <div
        className="dialog palette"
        role="dialog"
        aria-modal="true"
        aria-label="Commands, agents and machines"
        data-testid="command-palette"
        onClick={(event) => event.stopPropagation()}
      >
        <input
          ref={inputRef}
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={chosen ? optionId(chosen) : undefined}
          aria-label="Command"
          placeholder="Type a command, an agent or a machine…"
          value={query}
          onChange={(event) => {
            setQuery(event.target.value);
            setIndex(0);
          }}
          onKeyDown={(event) => {
            if (event.key === "ArrowDown") setIndex((i) => Math.min(i + 1, list.length - 1));
            else if (event.key === "ArrowUp") setIndex((i) => Math.max(i - 1, 0));
            else if (event.key === "Enter" && chosen) run(chosen);
            else return;
            event.preventDefault();
          }}
        />
        <ul className="palette-list" role="listbox" id="palette-list" aria-label="Results">
          {list.map((entry) => (
            <li
              key={entry.id}
              id={optionId(entry)}
              role="option"
              aria-selected={entry === chosen}
              data-command={entry.kind === "command" ? entry.spec.id : undefined}
              data-kind={entry.kind}
              onClick={() => run(entry)}
            >
              <span className="palette-label">{entry.label}</span>
              {entry.kind === "command" ? entry.hint ? <kbd>{entry.hint}</kbd> : null : <span className="palette-kind">{entry.hint}</span>}
            </li>
          ))}
          {list.length === 0 ? (
            <li className="hint" role="option" aria-selected={false} aria-disabled="true">
              Nothing matches “{query}”: no command that applies here, no agent and no machine by that name.
            </li>
          ) : null}
        </ul>
      </div>
    </div>
  );
}

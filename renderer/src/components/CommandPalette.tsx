import { useEffect, useMemo, useRef, useState } from "react";
import { keyHint, paletteCommands } from "../../../shared/fleet/command-registry";
import { commandContext, runCommand } from "../state/effects";
import { useFleet } from "../state/store";

/** Every enabled command by name; ↑/↓ choose, Enter runs, Esc closes. */
export function CommandPalette() {
  const [query, setQuery] = useState("");
  const [index, setIndex] = useState(0);
  const inputRef = useRef<HTMLInputElement>(null);
  const context = useMemo(() => commandContext(), []);
  const list = paletteCommands(context, query);
  const chosen = list[Math.min(index, list.length - 1)];
  useEffect(() => inputRef.current?.focus(), []);
  const close = () => useFleet.getState().showPalette(false);
  return (
    <div className="dialog-backdrop" onClick={close}>
      <div className="dialog palette" role="dialog" aria-modal="true" aria-label="Commands" data-testid="command-palette" onClick={(event) => event.stopPropagation()}>
        <input
          ref={inputRef}
          aria-label="Command"
          placeholder="Type a command…"
          value={query}
          onChange={(event) => {
            setQuery(event.target.value);
            setIndex(0);
          }}
          onKeyDown={(event) => {
            if (event.key === "ArrowDown") setIndex((i) => Math.min(i + 1, list.length - 1));
            else if (event.key === "ArrowUp") setIndex((i) => Math.max(i - 1, 0));
            else if (event.key === "Enter" && chosen) {
              close();
              runCommand(chosen.id);
            } else return;
            event.preventDefault();
          }}
        />
        <ul className="palette-list" role="listbox">
          {list.map((spec) => (
            <li key={spec.id} role="option" aria-selected={spec === chosen} data-command={spec.id}>
              <button
                type="button"
                onClick={() => {
                  close();
                  runCommand(spec.id);
                }}
              >
                <span className="palette-label">{spec.label}</span>
                {keyHint(spec) ? <kbd>{keyHint(spec)}</kbd> : null}
              </button>
            </li>
          ))}
          {list.length === 0 ? <li className="hint">No command matches, or none applies here.</li> : null}
        </ul>
      </div>
    </div>
  );
}

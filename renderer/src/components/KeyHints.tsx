// The hint bar (issue 40 point 2): every key the current view answers, read from the registry
// (shared/fleet/command-registry.ts) with its `enabled` rule against the window's state now, so `c`
// shows where there is a diff and `r` where a question waits. Short words here; a command without
// one shows its registry label.
import { COMMANDS, type CommandId, type CommandSpec, keyHint } from "../../../shared/fleet/command-registry";
import { commandContext } from "../state/dispatch";
import { useFleetFacts } from "../state/fleet-facts";
import { useFleet } from "../state/store";

const SHORT: Partial<Record<CommandId, string>> = {
  "palette.open": "commands",
  "fleet.next-needs-you": "next",
  "fleet.search": "search",
  "view.toggle": "inbox/fleet",
  "fleet.group-toggle": "group",
  "agent.open": "open",
  "agent.accept": "allow",
  "agent.accept-session": "session",
  "agent.decline": "deny",
  "agent.answer": "answer",
  "agent.acknowledge": "acknowledge",
  "agent.mark-reviewed": "reviewed",
  "agent.snooze": "snooze",
  "agent.snooze-hour": "1 h",
  "action.undo": "undo",
  "inbox.handled": "handled",
  "inbox.snoozed": "snoozed",
  "agent.interrupt": "interrupt",
  "agent.diff": "diff",
  "agent.open-in-t3": "T3",
  "agent.message": "message",
  "agent.new": "new",
  "pairing.open": "pair",
  "settings.open": "settings",
};

/** Keys shown as one pair rather than one each. */
const PAIRED: Partial<Record<CommandId, { with: CommandId; keys: string; words: string }>> = {
  "fleet.down": { with: "fleet.up", keys: "↑↓", words: "move" },
  "fleet.expand": { with: "fleet.collapse", keys: "→←", words: "fold" },
};
const SECOND_OF_PAIR = new Set<CommandId>(["fleet.up", "fleet.collapse"]);

export interface KeyHint {
  id: string;
  keys: string;
  words: string;
}

/** What the hint bar lists for the pane shown, from the registry's rules now. */
export function keyHints(pane: "inbox" | "fleet"): KeyHint[] {
  const context = commandContext();
  const enabled = (spec: CommandSpec) => spec.surfaces.includes("keys") && spec.keys.length > 0 && spec.enabled(context);
  const hints: KeyHint[] = [];
  for (const spec of COMMANDS) {
    if (!enabled(spec) || SECOND_OF_PAIR.has(spec.id)) continue;
    // ← and → move through the tree only.
    if (spec.id === "fleet.expand" && (pane !== "fleet" || context.agentPanelOpen)) continue;
    const pair = PAIRED[spec.id];
    if (pair) hints.push({ id: spec.id, keys: pair.keys, words: pair.words });
    // A letter as typed ("A", not "Shift+A"): the bar stays one line.
    else hints.push({ id: spec.id, keys: spec.keys[0]!.length === 1 ? spec.keys[0]! : keyHint(spec), words: SHORT[spec.id] ?? spec.label.toLowerCase() });
  }
  if (context.agentPanelOpen) hints.push({ id: "escape", keys: "Esc", words: "back" });
  return hints;
}

export function KeyHints({ pane }: { pane: "inbox" | "fleet" }) {
  // Re-rendered with the facts, the selection, the open agent and the last action (what `enabled` reads).
  useFleetFacts();
  useFleet((s) => s.openKey);
  useFleet((s) => s.selectedKey);
  useFleet((s) => s.confirmation);
  useFleet((s) => s.snoozed);
  const hints = keyHints(pane);
  return (
    <footer className="shortcuts" data-testid="key-hints" aria-label="Keys">
      {hints.map((hint) => (
        <span key={hint.id} className="key-hint" data-testid="key-hint" data-command={hint.id}>
          <kbd>{hint.keys}</kbd> {hint.words}
        </span>
      ))}
    </footer>
  );
}

// The hint bar (issue 40 point 2): every key the current view answers, read from the registry
// (shared/fleet/action-registry.ts) with its `enabled` rule against the window's state now, so `c`
// shows where there is a diff and `r` where a question waits. Short words here; a command without
// one shows its registry label. The keys for the agent the user is on come first, then the list's,
// then the window's: in a narrow window the bar is one line that scrolls sideways (styles/base.css),
// and what its start shows is what the view is about.
import { type RefObject, useLayoutEffect, useRef, useState } from "react";
import { ACTIONS, type ActionId, type ActionSpec, keyHint } from "../../../shared/fleet/action-registry";
import { actionContext } from "../state/action-context";
import { useFleetFacts } from "../state/fleet-facts";
import { useFleet } from "../state/store";

const SHORT: Partial<Record<ActionId, string>> = {
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
const PAIRED: Partial<Record<ActionId, { with: ActionId; keys: string; words: string }>> = {
  "fleet.down": { with: "fleet.up", keys: "↑↓", words: "move" },
  "fleet.expand": { with: "fleet.collapse", keys: "→←", words: "fold" },
};
const SECOND_OF_PAIR = new Set<ActionId>(["fleet.up", "fleet.collapse"]);

/** The window's own keys (not about the agent or the list): listed last. */
const WINDOW_KEYS = new Set<string>(["palette.open", "agent.new", "pairing.open", "settings.open"]);
/** Keys that move through or switch the list rather than act on the agent the user is on. */
const LIST_KEYS = new Set<string>([
  "fleet.next-needs-you",
  "fleet.search",
  "fleet.down",
  "fleet.expand",
  "view.toggle",
  "fleet.group-toggle",
  "agent.open",
  "inbox.handled",
  "inbox.snoozed",
]);

/** 0: the agent the user is on (and Esc back, and the undo of what was just done); 1: the list; 2: the window. */
function rank(id: string): number {
  if (WINDOW_KEYS.has(id)) return 2;
  if (LIST_KEYS.has(id)) return 1;
  return 0;
}

export interface KeyHint {
  id: string;
  keys: string;
  words: string;
}

/** What the hint bar lists for the pane shown, from the registry's rules now. */
export function keyHints(pane: "inbox" | "fleet"): KeyHint[] {
  const context = actionContext();
  const enabled = (spec: ActionSpec) => spec.surfaces.includes("keys") && spec.keys.length > 0 && spec.enabled(context);
  const hints: KeyHint[] = [];
  for (const spec of ACTIONS) {
    if (!enabled(spec) || SECOND_OF_PAIR.has(spec.id)) continue;
    // ← and → move through the tree only.
    if (spec.id === "fleet.expand" && (pane !== "fleet" || context.agentPanelOpen)) continue;
    const pair = PAIRED[spec.id];
    if (pair) hints.push({ id: spec.id, keys: pair.keys, words: pair.words });
    // A letter as typed ("A", not "Shift+A"): the bar stays one line.
    else hints.push({ id: spec.id, keys: spec.keys[0]!.length === 1 ? spec.keys[0]! : keyHint(spec), words: SHORT[spec.id] ?? spec.label.toLowerCase() });
  }
  if (context.agentPanelOpen) hints.push({ id: "escape", keys: "Esc", words: "back" });
  // A stable sort: within a rank, the registry's order.
  return hints.sort((a, b) => rank(a.id) - rank(b.id));
}

export function KeyHints({ pane }: { pane: "inbox" | "fleet" }) {
  // Re-rendered with the facts, the selection, the open agent and the last action (what `enabled` reads).
  useFleetFacts();
  useFleet((s) => s.openKey);
  useFleet((s) => s.selectedKey);
  useFleet((s) => s.confirmation);
  useFleet((s) => s.snoozed);
  const hints = keyHints(pane);
  const bar = useRef<HTMLElement>(null);
  const scrolls = useScrollsSideways(bar, hints.map((hint) => hint.id).join(" "));
  return (
    // A bar that scrolls sideways takes focus, so the keys past its end can be reached without a mouse.
    <footer className="shortcuts" data-testid="key-hints" aria-label="Keys" ref={bar} tabIndex={scrolls ? 0 : undefined}>
      {hints.map((hint) => (
        <span key={hint.id} className="key-hint" data-testid="key-hint" data-command={hint.id}>
          <kbd>{hint.keys}</kbd> {hint.words}
        </span>
      ))}
    </footer>
  );
}

/** Whether the bar is wider than the window shows (a narrow window): re-measured as the keys or the window change. */
function useScrollsSideways(bar: RefObject<HTMLElement | null>, content: string): boolean {
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const element = bar.current;
    if (!element) return;
    const measure = () => setScrolls(element.scrollWidth > element.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, [bar, content]);
  return scrolls;
}

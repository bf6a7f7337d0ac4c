// The window's view choices that outlive a reload: grouping and the "older" age in localStorage,
// the chosen pane for this window's session in sessionStorage.
import type { PaneView } from "./slices/ui";
import { useFleet } from "./store";

const VIEW_STORAGE_KEY = "t3fleet.view";
/** The pane the user chose lasts for this window's session (a new window starts on the inbox when anything needs you). */
const PANE_STORAGE_KEY = "t3fleet.pane";

/** Grouping and the "older" age: restored at start, saved when they change. */
export function keepViewChoices(): () => void {
  try {
    const saved = JSON.parse(localStorage.getItem(VIEW_STORAGE_KEY) ?? "{}") as { grouping?: unknown; olderThanMs?: unknown };
    if (saved.grouping === "machine" || saved.grouping === "project") useFleet.getState().setGrouping(saved.grouping);
    if (typeof saved.olderThanMs === "number" && Number.isFinite(saved.olderThanMs) && saved.olderThanMs >= 3_600_000)
      useFleet.getState().setOlderThan(saved.olderThanMs);
  } catch {
    // A corrupt or unavailable store keeps the defaults.
  }
  return useFleet.subscribe((state, previous) => {
    if (state.grouping === previous.grouping && state.olderThanMs === previous.olderThanMs) return;
    try {
      localStorage.setItem(VIEW_STORAGE_KEY, JSON.stringify({ grouping: state.grouping, olderThanMs: state.olderThanMs }));
    } catch {
      // Storage may be unavailable (private mode); the choice then lasts for this page.
    }
  });
}

export function savedPane(): PaneView | null {
  try {
    const saved = sessionStorage.getItem(PANE_STORAGE_KEY);
    return saved === "inbox" || saved === "fleet" ? saved : null;
  } catch {
    return null;
  }
}

export function savePane(view: PaneView): void {
  try {
    sessionStorage.setItem(PANE_STORAGE_KEY, view);
  } catch {
    // Storage may be unavailable; the choice then lasts for this page.
  }
}

// What the views register so commands can reach them: elements to focus, and what the left pane
// shows (for moving through it). Commands never reach into React; a view that unmounts leaves a
// stale entry that does nothing harmful (focusing a detached element is a no-op).
import type { Row } from "./selectors";

export const focusTargets: {
  search?: () => void;
  composer?: () => void;
  answer?: () => void;
  panel?: () => void;
  pane?: () => void;
  /** The open agent's interrupt asks first when messages are queued (true: it took over). */
  interrupt?: (key: string) => boolean;
} = {};

/** The left pane as shown now (App registers it): what ↑/↓ move through, and the tree's rows for →/←. */
export const paneShown: { current: () => { selectable: string[]; rows: Row[] } } = {
  current: () => ({ selectable: [], rows: [] }),
};

/**
 * A focus move made later (after a frame or a request): made only if the user has not moved focus
 * meanwhile, so a key pressed while an agent opens keeps where it went (e2e/axe.spec.ts types that fast).
 */
export function focusWhenStill(target: "panel" | "pane" | "answer"): () => void {
  const from = document.activeElement;
  return () => {
    const now = document.activeElement;
    if (now === from || now === null || now === document.body) focusTargets[target]?.();
  };
}

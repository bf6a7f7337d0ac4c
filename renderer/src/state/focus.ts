// What the views register so actions can reach them (elements to focus), and the one rule for where
// focus goes after an action. Actions never reach into React; a view that unmounts leaves a stale
// entry that does nothing harmful (focusing a detached element is a no-op). The pane's rows and
// selectable list are the store's derived views (derived.ts), never registered here.
import { useFleet } from "./store";

export const focusTargets: {
  search?: () => void;
  composer?: () => void;
  answer?: () => void;
  panel?: () => void;
  pane?: () => void;
} = {};

/** Where the focus rule last put focus by itself: a later move the user asked for may take it from there. */
let placedByRule: Element | null = null;

/**
 * A focus move made later (after a frame or a request): made only if the user has not moved focus
 * meanwhile, so a key pressed while an agent opens keeps where it went (e2e/axe.spec.ts types that fast).
 */
export function focusWhenStill(target: "panel" | "pane" | "answer"): () => void {
  const from = document.activeElement;
  return () => {
    const now = document.activeElement;
    if (now === from || now === null || now === document.body || now === placedByRule) focusTargets[target]?.();
  };
}

/** Focus sits nowhere a key can reach from: the page's body, or an element gone or disabled. */
function focusLost(): boolean {
  const active = document.activeElement;
  return active === null || active === document.body || !active.isConnected || active.matches(":disabled");
}

/**
 * The one focus rule (issue 40): after an action, focus goes to the next item (the agent open in
 * the agent view) or to the list (the inbox or the tree), never to the page's body. Whatever the
 * action (an item handled, a dialog, a diff or a list closed, a button that went away), focus that
 * fell to the body is put back here once the page has drawn, so ↑/↓ and Esc keep working.
 */
export function keepFocusOffBody(): () => void {
  let queued = false;
  // A click on nothing focusable (to select transcript text, say) is the user's choice: left alone.
  let clickedNowhere = false;
  const onPointerDown = (event: PointerEvent) => {
    clickedNowhere = !(event.target instanceof Element && event.target.closest("button, a, input, select, textarea, summary, [tabindex]"));
  };
  // Until the user has focused something, the page has done nothing to take focus back from.
  let focusedOnce = false;
  const onFocusIn = () => {
    clickedNowhere = false;
    focusedOnce = true;
  };
  const check = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      if (!focusedOnce || !focusLost() || clickedNowhere) return;
      // An open dialog keeps focus inside it: to its first control.
      const dialog = [...document.querySelectorAll<HTMLElement>('[role="dialog"]')].at(-1);
      if (dialog) dialog.querySelector<HTMLElement>("input, select, textarea, button:not(:disabled), [tabindex]")?.focus();
      else if (useFleet.getState().openKey) focusTargets.panel?.();
      if (focusLost()) focusTargets.pane?.();
      placedByRule = document.activeElement;
    });
  };
  const observer = new MutationObserver(check);
  observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ["disabled"] });
  document.addEventListener("focusout", check);
  document.addEventListener("focusin", onFocusIn);
  document.addEventListener("pointerdown", onPointerDown, true);
  return () => {
    observer.disconnect();
    document.removeEventListener("focusout", check);
    document.removeEventListener("focusin", onFocusIn);
    document.removeEventListener("pointerdown", onPointerDown, true);
  };
}

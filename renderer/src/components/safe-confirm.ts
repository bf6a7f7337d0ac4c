// Focus for a question before a destructive command (stop the session, deny and stop, interrupt):
// it opens on its safe answer, so Enter or Space keeps things as they are, and answering it safely
// (the button or Esc) puts focus back where it was when the question opened.
import { useEffect, useRef, useState } from "react";
import { flushSync } from "react-dom";

/** How to find the element again if the question replaced it (the button that asked, re-rendered after). */
function finderOf(element: Element | null): (() => HTMLElement | null) | null {
  if (!(element instanceof HTMLElement) || element === document.body) return null;
  const testId = element.dataset.testid;
  const decision = element.dataset.decision;
  const selector = testId ? `[data-testid="${CSS.escape(testId)}"]` : decision ? `[data-decision="${CSS.escape(decision)}"]` : null;
  return () => (element.isConnected ? element : selector ? document.querySelector<HTMLElement>(selector) : null);
}

/**
 * Call in the question's component, which mounts as the question opens. Returns the ref for its
 * safe button and `keep(close)`: closes the question (now, so the button that asked is back) and
 * puts focus where it was.
 */
export function useSafeConfirm(): { safeRef: React.RefObject<HTMLButtonElement | null>; keep: (close: () => void) => void } {
  // Read while the question first renders: by the time it is on screen the button that asked is gone.
  const [origin] = useState(() => finderOf(document.activeElement));
  const safeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    safeRef.current?.focus();
  }, []);
  const keep = (close: () => void) => {
    flushSync(close);
    origin?.()?.focus();
  };
  return { safeRef, keep };
}

// The UI clock for relative times ("12s ago"): one timer for the whole window, running only while
// something shows a relative time. Labels subscribe to it themselves, so a tick re-renders the
// labels and nothing around them (a transcript of 1,000 messages is not rendered again every 5 s).
import { useSyncExternalStore } from "react";
import { FOLD_CLOCK_MS } from "./derived";
import { useFleet } from "./store";

/** How often relative times move; a UI clock, not a poll of any server. */
export const CLOCK_MS = 5_000;

let now = Date.now();
let timer: ReturnType<typeof setInterval> | undefined;
const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const each of listeners) each();
    }, CLOCK_MS);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

// React compares the snapshot after subscribing, so a label rendered before the first tick
// picks up the time set when the clock started.
const snapshot = () => now;

/** The clock's current time (ms); components using it render again on each tick. */
export function useClock(): number {
  return useSyncExternalStore(subscribe, snapshot);
}

/** Moves the store's minute clock (slices/ui.ts `clock`), which the derived views read (derived.ts). */
export function startFoldClock(): () => void {
  const timer = setInterval(() => useFleet.getState().tickClock(Date.now()), FOLD_CLOCK_MS);
  return () => clearInterval(timer);
}

// System wake in the Electron shell: the operating system says the computer woke (`powerMonitor`'s
// "resume"), and the fleet re-checks every connection before trusting it (electron/fleet/supervisor.ts,
// `recheck`). Takes the power monitor as a plain event source, so it is tested without Electron.

/** What this needs of Electron's `powerMonitor`. */
export interface PowerEvents {
  on(event: "resume", listener: () => void): unknown;
  off(event: "resume", listener: () => void): unknown;
}

/** Calls `recheck` on every system wake; returns how to stop. */
export function watchSystemWake(power: PowerEvents, recheck: () => void): () => void {
  const listener = () => recheck();
  power.on("resume", listener);
  return () => void power.off("resume", listener);
}

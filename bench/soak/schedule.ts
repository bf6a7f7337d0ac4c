// The soak's seeded schedule: which fault happens when, to which machine, for how long. The same
// seed and length give the same schedule (printed at the start), so a failing run can be replayed.

export type Rng = () => number;

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
export const between = (rng: Rng, low: number, high: number): number => Math.round(low + rng() * (high - low));

/** At most this many of a machine's churned threads are alive at once (churn deletes the rest). */
export const CHURN_KEPT_MAX = 6;

export type MachineFault = "kill" | "freeze" | "blackhole" | "restart" | "upgrade";
export type SoakAction =
  | { kind: MachineFault; machine: string; forMs: number }
  | { kind: "churn"; machine: string; create: number; archive: number; remove: number }
  | { kind: "service-kill" }
  /** The laptop sleeps: the service stands still `forMs`, and wakes to wall clocks `clockJumpS` on. */
  | { kind: "service-stall"; forMs: number; clockJumpS: number }
  | { kind: "reload" };

export interface ScheduledAction {
  atMs: number;
  action: SoakAction;
}

export interface SoakPlan {
  actions: ScheduledAction[];
  /** From here on nothing restarts or stalls the service: memory and latency growth are measured from `steadyFromMs`. */
  steadyFromMs: number;
  /** Faults end here; the rest of the run lets every machine come back and every delivery settle. */
  quietFromMs: number;
}

export interface PlanInput {
  seed: number;
  durationMs: number;
  machines: { label: string; protocol: 1 | 2 }[];
}

export function planSoak({ seed, durationMs, machines }: PlanInput): SoakPlan {
  const rng = seededRng(seed);
  const actions: ScheduledAction[] = [];
  const quietFromMs = durationMs - Math.min(60_000, Math.max(30_000, durationMs * 0.15));
  // The service: killed a few times with messages in flight, and stalled once past the wake watch's
  // 30 s (electron/fleet/wake-watch.ts: a laptop waking), one at a time, all in the first part.
  const serviceKills = Math.max(2, Math.min(6, Math.round(durationMs / 600_000) + 1));
  const serviceEvents: SoakAction[] = [
    { kind: "service-stall", forMs: 35_000, clockJumpS: 3_600 },
    ...Array.from({ length: serviceKills }, () => ({ kind: "service-kill" }) as const),
  ];
  const lengthOf = (action: SoakAction) => (action.kind === "service-stall" ? action.forMs + 8_000 : 12_000);
  for (let i = serviceEvents.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [serviceEvents[i], serviceEvents[j]] = [serviceEvents[j]!, serviceEvents[i]!];
  }
  const needed = serviceEvents.reduce((sum, action) => sum + lengthOf(action), 0);
  // Runs of an hour or more end the service's faults in their first eighth: the heap's bound is read
  // across the hours a service process lives, not across its first one (issue 43).
  const serviceShare = durationMs >= 3_600_000 ? 0.125 : 0.45;
  const serviceEndMs = Math.max(Math.round(durationMs * serviceShare), 15_000 + needed);
  const slack = (serviceEndMs - 15_000 - needed) / serviceEvents.length;
  let cursor = 15_000;
  for (const action of serviceEvents) {
    const at = cursor + between(rng, 0, slack);
    actions.push({ atMs: at, action });
    cursor = at + lengthOf(action);
  }
  // Warm-up after the last restart and upgrade: V8 tiers up the service's hot paths, and what the
  // fleet holds within bounds fills to them at the soak's pace, some fifty times a desk's: each
  // followed thread's tail (its last 40 items, two turns of changes), the departures (1,000), the
  // handled log (500), the timestamp pools (1,024 each). Heap snapshots of a two-hour run showed them
  // filling for about 50 minutes after the last upgrade, then holding: measured from earlier, the
  // fill reads as a rising line (docs/architecture.md; issue 43). A minute in short runs; in runs of
  // an hour or more, 45 minutes of two hours, then an hour to measure.
  const warmUpMs = durationMs >= 3_600_000 ? Math.round(durationMs * 0.375) : Math.min(60_000, Math.round(durationMs * 0.1));
  const steadyFromMs = serviceEndMs + warmUpMs;

  // Page reloads throughout.
  for (let at = 30_000; at < quietFromMs; at += between(rng, 40_000, 120_000)) actions.push({ atMs: at, action: { kind: "reload" } });

  // In-place upgrades 1 → 2: one per protocol-1 machine in long runs, one in short ones. A protocol-2
  // row costs the service more than a protocol-1 one, so an upgrade steps the heap: runs of an hour or
  // more upgrade before the warm-up, so their heap bound compares the same fleet at both ends (issue 43).
  const upgradable = machines.filter((machine) => machine.protocol === 1).map((machine) => machine.label);
  const upgrades = durationMs >= 600_000 ? upgradable.length : Math.min(1, upgradable.length);
  const [upgradeFrom, upgradeTo] = durationMs >= 3_600_000 ? [durationMs * 0.05, serviceEndMs] : [durationMs * 0.2, durationMs * 0.6];
  const upgradeAt = new Map<string, number>();
  for (const label of upgradable.slice(0, upgrades)) upgradeAt.set(label, between(rng, upgradeFrom, upgradeTo));

  // Machine faults: one at a time per machine, each machine busy until its fault ends.
  const busyUntil = new Map(machines.map((machine) => [machine.label, 0]));
  for (const [label, at] of upgradeAt) {
    actions.push({ atMs: at, action: { kind: "upgrade", machine: label, forMs: 0 } });
    busyUntil.set(label, 0);
  }
  const faults: MachineFault[] = ["kill", "freeze", "blackhole", "restart"];
  for (let at = 10_000; at < quietFromMs - 5_000; at += between(rng, 8_000, 25_000)) {
    const label = pick(rng, machines).label;
    const kind = pick(rng, faults);
    const forMs = kind === "restart" ? 0 : between(rng, 3_000, 30_000);
    const upgrading = upgradeAt.get(label);
    if ((busyUntil.get(label) ?? 0) > at || at + forMs > quietFromMs) continue;
    if (upgrading !== undefined && at <= upgrading + 2_000 && at + forMs + 2_000 >= upgrading) continue;
    busyUntil.set(label, at + forMs + 2_000);
    actions.push({ atMs: at, action: { kind, machine: label, forMs } });
  }

  // Thread churn on every machine, about every 10 s. Per machine it deletes what it created, give or
  // take a few threads kept at a time, so the fleet keeps its size (growth is measured on the same fleet).
  const kept = new Map(machines.map((machine) => [machine.label, 0]));
  for (let at = 5_000; at < quietFromMs; at += between(rng, 6_000, 14_000)) {
    const machine = pick(rng, machines).label;
    const create = between(rng, 6, 20);
    const remove = Math.min(kept.get(machine)! + create, Math.max(0, kept.get(machine)! + create - CHURN_KEPT_MAX, create + between(rng, -3, 3)));
    kept.set(machine, kept.get(machine)! + create - remove);
    actions.push({ atMs: at, action: { kind: "churn", machine, create, archive: between(rng, 1, 4), remove } });
  }

  actions.sort((a, b) => a.atMs - b.atMs);
  return { actions, steadyFromMs, quietFromMs };
}

export function describeAction(action: SoakAction): string {
  switch (action.kind) {
    case "churn":
      return `churn on ${action.machine}: create ${action.create}, archive ${action.archive}, delete ${action.remove}`;
    case "service-kill":
      return "fleet service SIGKILLed with messages in flight, then restarted";
    case "service-stall":
      return `fleet service stopped (SIGSTOP) for ${action.forMs / 1000} s and woken to wall clocks ${action.clockJumpS / 60} min on: a laptop waking after an hour`;
    case "reload":
      return "page reloaded";
    case "upgrade":
      return `${action.machine} upgraded in place from protocol 1 to 2`;
    case "restart":
      return `${action.machine} restarted`;
    default:
      return `${action.machine} ${action.kind === "kill" ? "killed" : action.kind === "freeze" ? "frozen (SIGSTOP)" : "blackholed"} for ${(action.forMs / 1000).toFixed(1)} s`;
  }
}

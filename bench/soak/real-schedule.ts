// The schedule with real machines (`--real`): planSoak's (schedule.ts) fitted to what each machine
// takes. A real server is not upgraded in place (the simulated machines cover that), so its upgrades
// are left out; and since planSoak picks machines at random, a short run could leave a real server
// without any fault or churn: each real machine that has none gets one, from a seeded generator of
// its own, so the simulated machines' schedule stays what the same seed gives without `--real`.
import { between, pick, type MachineFault, type ScheduledAction, type SoakPlan, seededRng } from "./schedule";

export interface PlannedMachine {
  label: string;
  real: boolean;
  faults: readonly MachineFault[];
}

export function fitPlan(plan: SoakPlan, machines: PlannedMachine[], seed: number): SoakPlan {
  const byLabel = new Map(machines.map((machine) => [machine.label, machine]));
  const actions = plan.actions.filter(
    ({ action }) => !("machine" in action) || action.kind === "churn" || (byLabel.get(action.machine)?.faults.includes(action.kind) ?? false),
  );
  const rng = seededRng(seed ^ 0x4ea1);
  for (const machine of machines.filter((candidate) => candidate.real)) {
    const own = actions.filter(({ action }) => "machine" in action && action.machine === machine.label);
    if (!own.some(({ action }) => action.kind !== "churn")) {
      const kind = pick(rng, machine.faults);
      const forMs = kind === "restart" ? 0 : between(rng, 3_000, 20_000);
      // One fault at a time per machine, as planSoak keeps it (none here yet), ending before the quiet part.
      actions.push({ atMs: between(rng, 10_000, Math.max(10_000, plan.quietFromMs - 5_000 - forMs)), action: { kind, machine: machine.label, forMs } });
    }
    if (!own.some(({ action }) => action.kind === "churn")) {
      const create = between(rng, 4, 10);
      const churn: ScheduledAction = {
        atMs: between(rng, 5_000, plan.quietFromMs - 5_000),
        action: { kind: "churn", machine: machine.label, create, archive: between(rng, 1, 2), remove: create },
      };
      actions.push(churn);
    }
  }
  actions.sort((a, b) => a.atMs - b.atMs);
  return { ...plan, actions };
}

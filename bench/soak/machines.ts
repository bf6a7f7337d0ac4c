// The simulated machines of the soak, one child process each (sim/cli.ts), driven through their
// control API: faults, thread churn, renames, and the read-only counts the soak checks against.
import type { ServerThreadList } from "../../sim/soak-hooks";
import { type Child, exited, startTsx } from "./processes";

export interface SoakMachine {
  label: string;
  generation: "fork" | "upstream" | "v2";
  protocol: 1 | 2;
  child: Child;
  controlUrl: string;
  baseUrl: string;
  environmentId: string;
  /** Why the machine is not answering now (a fault in progress), if it is not. */
  fault: string | null;
  /** Threads the soak created and has not deleted (churn deletes only its own). */
  created: string[];
}

export async function startMachine(label: string, generation: SoakMachine["generation"], threads: number, tickMs: number): Promise<SoakMachine> {
  const { child, match } = await startTsx(
    "sim/cli.ts",
    ["--envs", generation, "--labels", label, "--threads", String(threads), "--tick", String(tickMs)],
    /Control API: (http:\/\/127\.0\.0\.1:\d+)\/envs/,
  );
  const controlUrl = match[1]!;
  const [described] = (await control(controlUrl, "GET", "/envs")) as { environmentId: string; baseUrl: string }[];
  return {
    label,
    generation,
    protocol: generation === "v2" ? 2 : 1,
    child,
    controlUrl,
    baseUrl: described!.baseUrl,
    environmentId: described!.environmentId,
    fault: null,
    created: [],
  };
}

export async function control(controlUrl: string, method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${controlUrl}${path}`, {
    method,
    ...(body !== undefined && { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    signal: AbortSignal.timeout(30_000),
  });
  const value = (await response.json()) as unknown;
  if (!response.ok) throw new Error(`${method} ${path}: ${JSON.stringify(value)}`);
  return value;
}

export const machineControl = (machine: SoakMachine, method: "GET" | "POST", action: string, body?: unknown) =>
  control(machine.controlUrl, method, `/envs/${encodeURIComponent(machine.label)}/${action}`, body);

export async function pairingUrl(machine: SoakMachine): Promise<string> {
  return ((await machineControl(machine, "POST", "pairing", {})) as { pairingUrl: string }).pairingUrl;
}

export async function userMessages(machine: SoakMachine): Promise<Record<string, string[]>> {
  return (await machineControl(machine, "GET", "user-messages")) as Record<string, string[]>;
}

export async function threadList(machine: SoakMachine): Promise<ServerThreadList> {
  return (await machineControl(machine, "GET", "thread-list")) as ServerThreadList;
}

export async function stopMachine(machine: SoakMachine): Promise<void> {
  if (machine.fault === "frozen") machine.child.process.kill("SIGCONT");
  machine.child.process.kill("SIGTERM");
  await exited(machine.child);
}

// Shared set-up for the tests of starting agents from the fleet (issue 42): one simulated machine
// per protocol, each with a project and an agent to be a parent; the form's request; a creation's
// receipt steps; and the fault that loses a dispatch's answer on either protocol.
import { expect } from "vitest";
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { Creation } from "../../shared/fleet/creation";
import type { SimFleet } from "../../sim/fleet";
import type { FleetService } from "./service";
import { setup, until } from "./service.testkit";

export type Machine = { environmentId: string; projectId: string; parentId: string; threads: () => { id: string; userTexts: string[] }[] };

/** One machine per protocol (upstream protocol 1 and protocol 2), each with a project and one agent to be a parent. */
export async function twoProtocols() {
  const { sims, service, events, dataDir, secrets } = await setup(["upstream", "v2"]);
  const p1 = sims.servers[0]!;
  const parent1 = sims.createThread(p1, { title: "Parent one" });
  const p2 = sims.v2Servers[0]!;
  p2.engine.addProject({ id: "project-v2", title: "v2 repo", workspaceRoot: "/home/user/v2" });
  p2.engine.createThread({ threadId: "parent-v2", projectId: "project-v2", title: "Parent two" });
  for (const sim of [p1, p2]) await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(service, () => [p1, p2].every((sim) => service.model.environment(sim.environmentId)?.connection.phase === "online"), "both online");
  const machines: Machine[] = [
    {
      environmentId: p1.environmentId,
      projectId: [...p1.engine.projects.keys()][0]!,
      parentId: parent1,
      threads: () =>
        [...p1.engine.threads.values()].map((thread) => ({ id: thread.id, userTexts: thread.messages.filter((m) => m.role === "user").map((m) => m.text) })),
    },
    {
      environmentId: p2.environmentId,
      projectId: "project-v2",
      parentId: "parent-v2",
      threads: () =>
        [...p2.engine.threads.values()].map((state) => ({
          id: state.thread.id,
          userTexts: state.messages.filter((m) => m.role === "user").map((m) => m.text),
        })),
    },
  ];
  await until(service, () => machines.every((m) => service.model.agent(`${m.environmentId}/${m.parentId}`)), "parents listed");
  return { sims, service, events, machines, dataDir, secrets };
}

export function request(machine: Machine, creationId: string, extra: Record<string, unknown> = {}) {
  return {
    creationId,
    environmentId: machine.environmentId,
    projectId: machine.projectId,
    instanceId: "codex",
    model: "gpt-5.4",
    runtimeMode: "approval-required",
    parentThreadId: null,
    title: "",
    text: "Please list the files\nand say hello",
    ...extra,
  };
}

export const states = (events: BridgeEvent[], creationId: string) =>
  events
    .flatMap((event) => (event.type === "creation" && event.creation.creationId === creationId ? [event.creation.state] : []))
    .filter((s, i, all) => s !== all[i - 1]);

export async function replied(service: FleetService, creationId: string): Promise<Creation> {
  await until(service, () => ["replied", "failed", "not-created"].includes(service.creation(creationId)?.state ?? ""), `creation ${creationId} settled`);
  return service.creation(creationId)!;
}

/**
 * Settled, as a user would get it there: on a loaded machine a connection can drop before the create
 * left, and then T3 has no thread; the fleet says so and the user's "Try again" sends it once.
 */
export async function repliedOnce(service: FleetService, creationId: string): Promise<Creation> {
  const first = await replied(service, creationId);
  if (first.state !== "not-created") return first;
  await service.request("creation.retry", { creationId });
  return replied(service, creationId);
}

/** The receipt's steps end created → started → replied, whatever was checked on the way. */
export const endsReplied = (steps: string[]) => expect([steps[0], ...steps.slice(-3)]).toEqual(["creating", "created", "started", "replied"]);

/** The next dispatch (or `projects.mutate`) on a machine loses its answer, as sim/protocol1/server.ts and sim/protocol2/server.ts inject it. */
export function dropNextDispatch(sims: SimFleet, protocol: 1 | 2, drop: "before-apply" | "after-apply" | "unanswered"): void {
  if (protocol === 1) sims.servers[0]!.dropNextDispatch = drop;
  else sims.v2Servers[0]!.dropNextDispatch = drop;
}

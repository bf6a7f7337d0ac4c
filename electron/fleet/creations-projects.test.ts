// A new project from the "New agent" form (issue 42), against both protocols' simulators: created
// once on the machine with the fleet's own id and command id (protocol 1's dispatch API, protocol 2's
// `projects.mutate`), then the agent in it, followed to its first reply; a project's create whose
// answer was lost is checked against what T3 lists, never sent twice on its own; and what cannot be
// sent is refused in words before anything leaves (a read-only pairing, a relative folder, a folder
// another project has).
import type { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { CreateChoices, Creation } from "../../shared/fleet/creation";
import type { SimFleet } from "../../sim/fleet";
import { type Machine, dropNextDispatch, endsReplied, replied, repliedOnce, request, states, twoProtocols } from "./creations.testkit";
import { FleetService } from "./service";
import { FAST, cleanups, kill, setup, until } from "./service.testkit";

const NEW_PROJECT = { title: "api service", workspaceRoot: "/home/user/api-service", createIfMissing: true };

/** The projects T3 stores on a machine, as T3 holds them (not as the fleet says). */
function storedProjects(sims: SimFleet, protocol: 1 | 2): { id: string; title: string; workspaceRoot: string }[] {
  const projects = protocol === 1 ? sims.servers[0]!.engine.projects : sims.v2Servers[0]!.engine.projects;
  return [...projects.values()].map(({ id, title, workspaceRoot }) => ({ id, title, workspaceRoot }));
}

/** Resolves once T3 stores `count` projects: on the simulator's own events, never a sleep. */
function projectsStored(sims: SimFleet, protocol: 1 | 2, count: number): Promise<void> {
  const engine: EventEmitter = protocol === 1 ? sims.servers[0]!.engine : sims.v2Servers[0]!.engine;
  // Protocol 1's engine emits the project's event; protocol 2's a shell "enrichment" after projects.mutate.
  const emitted = protocol === 1 ? "event" : "enrichment";
  return new Promise((resolve) => {
    const check = () => {
      if (storedProjects(sims, protocol).length < count) return;
      engine.off(emitted, check);
      resolve();
    };
    engine.on(emitted, check);
    check();
  });
}

const withNewProject = (machine: Machine, creationId: string, project = NEW_PROJECT) => request(machine, creationId, { projectId: "", newProject: project });

describe("a new project from the New agent form", () => {
  for (const protocol of [1, 2] as const) {
    it(`protocol ${protocol}: the project is created once with the fleet's id, the agent in it replies, and the form lists it`, async () => {
      const { sims, service, events, machines } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const before = storedProjects(sims, protocol).length;
      const created = (await service.request("agent.create", withNewProject(machine, "fresh"))) as Creation;
      expect(created.project).toMatchObject({ title: "api service", workspaceRoot: "/home/user/api-service", createIfMissing: true });
      // Asked again with the same id (a double press): the same creation, nothing more on T3.
      expect(((await service.request("agent.create", withNewProject(machine, "fresh"))) as Creation).projectId).toBe(created.projectId);
      expect((await repliedOnce(service, "fresh")).state).toBe("replied");
      endsReplied(states(events, "fresh"));
      const projects = storedProjects(sims, protocol);
      expect(projects).toHaveLength(before + 1);
      expect(projects.filter((project) => project.id === created.projectId)).toEqual([
        { id: created.projectId, title: "api service", workspaceRoot: "/home/user/api-service" },
      ]);
      await until(service, () => service.model.agent(created.agentKey)?.projectId === created.projectId, "the agent listed in its new project");
      const choices = (await service.request("agent.createChoices", { environmentId: machine.environmentId })) as CreateChoices;
      expect(choices.options!.projects.map((project) => project.id)).toContain(created.projectId);
      // The same folder again is refused before anything is sent: T3 keeps one active project per folder.
      const again = await service.request("agent.create", withNewProject(machine, "same-folder")).then(
        () => "sent",
        (error: Error) => error.message,
      );
      expect(again).toBe("api service already uses that folder on this machine: choose it instead.");
      expect(storedProjects(sims, protocol)).toHaveLength(before + 1);
    });

    it(`protocol ${protocol}: a project's create T3 carried out whose answer was lost is found in T3's list, and the agent follows: one project, one thread`, async () => {
      const { sims, service, events, machines } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const projectsBefore = storedProjects(sims, protocol).length;
      const threadsBefore = machine.threads().length;
      dropNextDispatch(sims, protocol, "after-apply");
      const creation = (await service.request("agent.create", withNewProject(machine, "project-lost-after"))) as Creation;
      expect(creation.state).toBe("checking");
      expect((await replied(service, "project-lost-after")).state).toBe("replied");
      expect(states(events, "project-lost-after").slice(0, 2)).toEqual(["creating", "checking"]);
      expect(storedProjects(sims, protocol)).toHaveLength(projectsBefore + 1);
      expect(machine.threads()).toHaveLength(threadsBefore + 1);
    });

    it(`protocol ${protocol}: a project's create that never reached T3 says so and offers to try again, which creates project and agent once`, async () => {
      const { sims, service, machines } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const projectsBefore = storedProjects(sims, protocol).length;
      const threadsBefore = machine.threads().length;
      dropNextDispatch(sims, protocol, "before-apply");
      await service.request("agent.create", withNewProject(machine, "project-lost-before"));
      const notCreated = await replied(service, "project-lost-before");
      expect(notCreated).toMatchObject({ state: "not-created", retry: true });
      expect(notCreated.reason).toMatch(/T3 does not have the project: nothing was created/);
      expect(storedProjects(sims, protocol)).toHaveLength(projectsBefore);
      expect(machine.threads()).toHaveLength(threadsBefore);
      await service.request("creation.retry", { creationId: "project-lost-before" });
      expect((await replied(service, "project-lost-before")).state).toBe("replied");
      expect(storedProjects(sims, protocol)).toHaveLength(projectsBefore + 1);
      expect(machine.threads()).toHaveLength(threadsBefore + 1);
    });

    it(`protocol ${protocol}: a project's create in flight when the fleet is killed is finished after the restart, once`, async () => {
      const { sims, service, machines, dataDir, secrets } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const projectsBefore = storedProjects(sims, protocol).length;
      const threadsBefore = machine.threads().length;
      dropNextDispatch(sims, protocol, "unanswered");
      const pending = service.request("agent.create", withNewProject(machine, "project-killed")).catch(() => undefined);
      await projectsStored(sims, protocol, projectsBefore + 1);
      await kill(service);
      await pending;
      const reopened = await FleetService.start({ dataDir, secrets, ...FAST });
      cleanups.push(() => reopened.stop());
      // T3 took the project but its answer never came: after the restart the fleet finds it in T3's list.
      expect(reopened.creation("project-killed")).toMatchObject({ state: "checking", project: { confirmed: false } });
      expect((await replied(reopened, "project-killed")).state).toBe("replied");
      expect(storedProjects(sims, protocol)).toHaveLength(projectsBefore + 1);
      expect(machine.threads()).toHaveLength(threadsBefore + 1);
    });
  }

  it("refuses before anything is sent: a relative folder, no name; and on a read-only pairing, says T3 gave no permission", async () => {
    const { sims, service, machines } = await twoProtocols();
    const [p1] = machines as [Machine];
    const before = storedProjects(sims, 1).length;
    const refused = (creationId: string, project: typeof NEW_PROJECT) =>
      service.request("agent.create", withNewProject(p1, creationId, project)).then(
        () => "sent",
        (error: Error) => error.message,
      );
    expect(await refused("relative", { ...NEW_PROJECT, workspaceRoot: "src/api" })).toBe(
      'The folder must be an absolute path on that machine (starting with / or ~), not "src/api".',
    );
    expect(await refused("unnamed", { ...NEW_PROJECT, title: "  " })).toBe("Name the new project.");
    expect(storedProjects(sims, 1)).toHaveLength(before);

    // A pairing that may only read: the machine cannot be chosen, and a request for it is refused in those words.
    const readOnly = await setup(["v2"]);
    const sim = readOnly.sims.v2Servers[0]!;
    sim.engine.addProject({ id: "project-ro", title: "ro", workspaceRoot: "/home/user/ro" });
    // A bearer that may only read, pasted beside the host (a pairing link must grant operate: pairing.ts).
    const bearer = sim.auth.issueSession({ scopes: ["orchestration:read"], role: "client", label: "watcher" }).token;
    await readOnly.service.request("pair.confirm", { input: sim.baseUrl, token: bearer });
    await until(readOnly.service, () => readOnly.service.model.environment(sim.environmentId)?.connection.phase === "online", "read-only online");
    const choices = (await readOnly.service.request("agent.createChoices", { environmentId: sim.environmentId })) as CreateChoices;
    expect(choices.machines[0]!.unavailable).toMatch(/read-only: T3 gave no permission to operate/);
    const machine = { environmentId: sim.environmentId, projectId: "", parentId: "", threads: () => [] };
    const words = await readOnly.service.request("agent.create", withNewProject(machine, "read-only")).then(
      () => "sent",
      (error: Error) => error.message,
    );
    expect(words).toMatch(/read-only: T3 gave no permission to operate/);
    expect([...sim.engine.projects.keys()]).toEqual(["project-ro"]);
  });
});

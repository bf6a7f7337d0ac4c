// Starting an agent from the fleet (issue 42) against both protocols' simulators: the form's
// choices as each machine's T3 lists them, a new agent and a new child created once and followed to
// the first reply, bad input refused before anything is sent, and a create whose answer was lost
// (a dropped connection, the fleet's own kill) checked against T3, never made twice.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CreateChoices, Creation } from "../../shared/fleet/creation";
import { startDemoFleet } from "../../sim/demo-fleet";
import { type Machine, dropNextDispatch, endsReplied, replied, repliedOnce, request, states, twoProtocols } from "./creations.testkit";
import { MemorySecretStore } from "./secrets";
import { FleetService } from "./service";
import { FAST, cleanups, env, kill, until } from "./service.testkit";

describe("starting an agent from the fleet", () => {
  it("offers every machine's projects, harnesses and models as its T3 lists them, a missing harness shown as such, and says why an offline machine cannot be chosen", async () => {
    const { sims, service, machines } = await twoProtocols();
    const [p1, p2] = machines as [Machine, Machine];
    const first = (await service.request("agent.createChoices", { environmentId: p1.environmentId })) as CreateChoices;
    expect(first.machines.map((machine) => machine.unavailable)).toEqual([null, null]);
    expect(first.machines.find((m) => m.environmentId === p1.environmentId)!.parents).toEqual([{ threadId: p1.parentId, title: "Parent one" }]);
    expect(first.options!.projects).toEqual([{ id: p1.projectId, title: expect.any(String), workspaceRoot: expect.stringMatching(/^\/home\/user\//) }]);
    const grok = first.options!.providers.find((provider) => provider.instanceId === "grok")!;
    expect(grok.unavailable).toBe("Grok CLI (`grok`) is not installed or not on PATH.");
    expect(first.options!.providers.find((provider) => provider.instanceId === "codex")).toMatchObject({ unavailable: null, models: [{ slug: "gpt-5.4" }] });
    // T3 takes project.create from a client that may operate: the form offers "New project…".
    expect(first.options!.projectCreation).toBeNull();

    const second = (await service.request("agent.createChoices", { environmentId: p2.environmentId })) as CreateChoices;
    expect(second.options!.projects).toEqual([{ id: "project-v2", title: "v2 repo", workspaceRoot: "/home/user/v2" }]);
    expect(second.options!.providers.filter((provider) => provider.unavailable === null).map((provider) => provider.instanceId)).toContain("claudeAgent");

    await sims.servers[0]!.stop();
    await until(service, () => env(service, sims.servers[0]!)?.connection.phase === "offline", "offline");
    const offline = (await service.request("agent.createChoices", {})) as CreateChoices;
    expect(offline.machines.find((m) => m.environmentId === p1.environmentId)!.unavailable).toMatch(/is offline, last seen \d{4}-/);
    // The first machine that can be chosen is the one read.
    expect(offline.optionsFor).toBe(p2.environmentId);
  });

  for (const protocol of [1, 2] as const) {
    it(`protocol ${protocol}: a new agent and a new child are created once, followed created → started → replied, the child under its parent`, async () => {
      const { service, events, machines } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const before = machine.threads().length;
      const created = (await service.request("agent.create", request(machine, `new-${protocol}`))) as Creation;
      expect(created.title).toBe("Please list the files");
      // Asked again with the same id (a double click, a retry of a lost answer): the same creation.
      const again = (await service.request("agent.create", request(machine, `new-${protocol}`))) as Creation;
      expect(again.threadId).toBe(created.threadId);
      expect((await repliedOnce(service, `new-${protocol}`)).state).toBe("replied");
      endsReplied(states(events, `new-${protocol}`));
      await until(service, () => service.model.agent(created.agentKey) !== undefined, "listed");
      expect(service.model.agent(created.agentKey)).toMatchObject({
        title: "Please list the files",
        parentThreadId: null,
        projectId: machine.projectId,
        // The access asked for is the thread's in T3 (its first turn takes the thread's mode).
        runtimeMode: "approval-required",
      });

      const child = (await service.request(
        "agent.create",
        request(machine, `child-${protocol}`, { parentThreadId: machine.parentId, title: "Child task" }),
      )) as Creation;
      expect(child.threadId).toMatch(new RegExp(`^sub\\.${machine.parentId}\\.`));
      expect((await repliedOnce(service, `child-${protocol}`)).state).toBe("replied");
      await until(service, () => service.model.agent(child.agentKey)?.parentThreadId === machine.parentId, "child under its parent");
      const threads = machine.threads();
      expect(threads).toHaveLength(before + 2);
      for (const id of [created.threadId, child.threadId])
        expect(threads.find((thread) => thread.id === id)!.userTexts).toEqual(["Please list the files\nand say hello"]);
    });
  }

  it("refuses bad input before anything is sent: an empty message, a project or model gone since the form opened, a parent that ended, an offline machine", async () => {
    const { sims, service, machines } = await twoProtocols();
    const [p1] = machines as [Machine];
    const before = p1.threads().length;
    const refused = async (extra: Record<string, unknown>) =>
      service.request("agent.create", request(p1, `bad-${JSON.stringify(extra)}`, extra)).then(
        () => "sent",
        (error: Error) => error.message,
      );
    expect(await refused({ text: "  \n " })).toBe("Write the first message: the agent starts with it.");
    expect(await refused({ projectId: "project-gone" })).toBe("That project is no longer on this machine: choose another.");
    expect(await refused({ model: "gpt-0" })).toBe("Codex no longer lists the model gpt-0: choose another.");
    expect(await refused({ instanceId: "grok", model: "grok-4" })).toBe("Grok cannot be used: Grok CLI (`grok`) is not installed or not on PATH.");
    expect(await refused({ parentThreadId: "thread-ended" })).toBe("The parent agent has ended or left this machine: choose another parent, or none.");
    await sims.servers[0]!.stop();
    await until(service, () => env(service, sims.servers[0]!)?.connection.phase === "offline", "offline");
    expect(await refused({})).toMatch(/is offline/);
    await sims.servers[0]!.start();
    await until(service, () => env(service, sims.servers[0]!)?.connection.phase === "online", "online again");
    expect(p1.threads()).toHaveLength(before);
  });

  for (const protocol of [1, 2] as const) {
    it(`protocol ${protocol}: a project removed after the checks stops the creation where T3 refused it, in T3's words`, async () => {
      const { sims, service, events, machines } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const projects = protocol === 1 ? sims.servers[0]!.engine.projects : sims.v2Servers[0]!.engine.projects;
      // Removed in T3 the moment the create leaves, after the form's checks passed.
      service.on("event", (event) => {
        if (event.type === "creation" && event.creation.creationId === "gone" && event.creation.state === "creating") projects.delete(machine.projectId);
      });
      await service.request("agent.create", request(machine, "gone"));
      const stopped = await replied(service, "gone");
      expect(stopped.state).toBe("failed");
      // Protocol 1 refuses the thread; protocol 2 takes it and refuses its first message.
      expect(stopped.reason).toMatch(protocol === 1 ? /Project '.+' does not exist for command 'thread\.create'/ : /Project .+ was not found for thread/);
      expect(states(events, "gone")).toEqual(protocol === 1 ? ["creating", "failed"] : ["creating", "created", "failed"]);
    });
  }

  for (const protocol of [1, 2] as const) {
    it(`protocol ${protocol}: a create T3 carried out whose answer was lost is found on T3 once the machine is back, and carries on: one thread`, async () => {
      const { sims, service, events, machines } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const before = machine.threads().length;
      dropNextDispatch(sims, protocol, "after-apply");
      const creation = (await service.request("agent.create", request(machine, "lost-after"))) as Creation;
      expect(creation.state).toBe("checking");
      expect((await replied(service, "lost-after")).state).toBe("replied");
      expect(states(events, "lost-after").slice(0, 2)).toEqual(["creating", "checking"]);
      endsReplied(states(events, "lost-after"));
      expect(machine.threads()).toHaveLength(before + 1);
      expect(machine.threads().find((thread) => thread.id === creation.threadId)!.userTexts).toEqual(["Please list the files\nand say hello"]);
      // The fleet carries on: the machine takes the next creation as usual.
      await service.request("agent.create", request(machine, "after-the-loss"));
      expect((await repliedOnce(service, "after-the-loss")).state).toBe("replied");
      expect(machine.threads()).toHaveLength(before + 2);
    });

    it(`protocol ${protocol}: a create that never reached T3 says so and offers to try again, which creates it once`, async () => {
      const { sims, service, machines } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const before = machine.threads().length;
      dropNextDispatch(sims, protocol, "before-apply");
      await service.request("agent.create", request(machine, "lost-before"));
      const notCreated = await replied(service, "lost-before");
      expect(notCreated).toMatchObject({ state: "not-created", retry: true });
      expect(notCreated.reason).toMatch(/T3 does not have the thread/);
      expect(machine.threads()).toHaveLength(before);
      await service.request("creation.retry", { creationId: "lost-before" });
      expect((await replied(service, "lost-before")).state).toBe("replied");
      // A second "Try again" finds nothing to do.
      await service.request("creation.retry", { creationId: "lost-before" });
      expect(machine.threads()).toHaveLength(before + 1);
    });

    it(`protocol ${protocol}: a creation in flight when the fleet is killed is kept in the journal and finished after the restart, once`, async () => {
      const { sims, service, machines, dataDir, secrets } = await twoProtocols();
      const machine = machines[protocol - 1]!;
      const before = machine.threads().length;
      dropNextDispatch(sims, protocol, "unanswered");
      const pending = service.request("agent.create", request(machine, "killed")).catch(() => undefined);
      await until(service, () => machine.threads().length === before + 1, "T3 has the thread");
      await kill(service);
      await pending;
      const reopened = await FleetService.start({ dataDir, secrets, ...FAST });
      cleanups.push(() => reopened.stop());
      expect(reopened.creation("killed")?.state).toBe("checking");
      // T3 has the thread: after the restart the fleet finds it, never "not created".
      expect((await replied(reopened, "killed")).state).toBe("replied");
      expect(machine.threads()).toHaveLength(before + 1);
      expect(machine.threads().find((thread) => thread.id === reopened.creation("killed")!.threadId)!.userTexts).toHaveLength(1);
    });
  }

  it("the demo offers it on every machine: each lists a project and a usable harness, and an agent started there replies", async () => {
    const demo = await startDemoFleet({ tickMs: 5, outageEveryMs: 3_600_000 });
    cleanups.push(() => demo.stop());
    const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-demo-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), ...FAST });
    cleanups.push(() => service.stop());
    for (const url of demo.pairingUrls) await service.request("pair.confirm", { input: url });
    await until(service, () => service.model.environments().filter((view) => view.connection.phase === "online").length === 4, "the demo online");
    for (const machine of service.model.environments()) {
      const choices = (await service.request("agent.createChoices", { environmentId: machine.environmentId })) as CreateChoices;
      const provider = choices.options!.providers.find((entry) => entry.unavailable === null)!;
      const creationId = `demo-${machine.label}`;
      await service.request("agent.create", {
        creationId,
        environmentId: machine.environmentId,
        projectId: choices.options!.projects[0]!.id,
        instanceId: provider.instanceId,
        model: provider.models[0]!.slug,
        runtimeMode: "approval-required",
        parentThreadId: null,
        title: "",
        text: `Hello from the fleet to ${machine.label}`,
      });
      expect((await repliedOnce(service, creationId)).state, machine.label).toBe("replied");
    }
  });
});

// The fleet service end to end against simulators: environments of mixed auth generations merged
// into one fleet, status roll-ups and counts, notifications, the bridge edge, acknowledgements.
import { describe, expect, it } from "vitest";
import type { BridgeResults } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import { trayModel } from "../../shared/fleet/tray";
import { FleetService } from "./service";
import { FAST, agent, cleanups, pairAll, setup, until } from "./service.testkit";

describe("fleet service", () => {
  it("pairs three environments of mixed generations and merges their threads into one fleet", async () => {
    const { sims, service } = await setup();
    const threads = sims.servers.map((sim, i) =>
      sims.createThread(sim, { title: `Task on ${sim.label}`, provider: (["codex", "claudeAgent", "grok"] as const)[i] }),
    );
    await pairAll(service, sims);
    await until(service, () => sims.servers.every((sim, i) => agent(service, sim, threads[i]!) !== undefined), "agents merged");
    const agents = [...service.model.agents()];
    expect(agents).toHaveLength(3);
    expect(new Set(agents.map((a) => a.environmentId)).size).toBe(3);
    expect(
      service.model
        .environments()
        .map((e) => e.generation)
        .sort(),
    ).toEqual(["fork", "upstream", "upstream"]);
    expect(service.model.counts()).toMatchObject({ hostsDown: 0, agents: 3, byStatus: { idle: 3 } });
  });

  it("a child that fails flips its status, its parent's roll-up and the counts; an approval blocks and unblocks", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const parent = sims.createThread(sim, { title: "Planner" });
    await pairAll(service, sims);
    const failing = sims.spawnChild(sim, parent, "worker1", "build it #fail");
    const blocked = sims.spawnChild(sim, parent, "worker2", "deploy #approval");
    await until(service, () => agent(service, sim, failing)?.status === "failed", "child failed");
    expect(agent(service, sim, failing)).toMatchObject({ parentThreadId: parent, orphaned: false, reason: expect.stringContaining("turn failed") });
    await until(
      service,
      () => agent(service, sim, blocked)?.status === "needs-approval" && agent(service, sim, blocked)!.pending.length === 1,
      "child blocked",
    );
    expect(service.model.rollup(sim.environmentId, parent)).toBe("needs-approval");
    expect(service.model.counts().needsYou).toBe(2);

    const requestId = agent(service, sim, blocked)!.pending[0]!.requestId;
    const delivery = (await service.request("agent.respondApproval", { key: `${sim.environmentId}/${blocked}`, requestId, decision: "accept" })) as Delivery;
    expect(delivery.state).not.toBe("refused");
    await until(service, () => agent(service, sim, blocked)?.status === "idle", "approval answered, turn completed");
    await until(service, () => service.delivery(delivery.commandId)?.state === "delivered", "approval delivery confirmed");
    expect(service.model.rollup(sim.environmentId, parent)).toBe("failed");
  });

  it("notifies once per transition, not for what was already there at start-up", async () => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    sims.createThread(sim, { title: "Already broken", text: "#fail" });
    const later = sims.createThread(sim, { title: "Breaks later" });
    await new Promise<void>((resolve) => {
      const check = () =>
        sim.engine.threads.get([...sim.engine.threads.keys()][0]!)!.session?.status === "error" && (sim.engine.off("event", check), resolve());
      sim.engine.on("event", check);
    });
    await pairAll(service, sims);
    const notifications = () => events.flatMap((e) => (e.type === "notification" ? [e.notification] : [])) as NotificationIntent[];
    await until(service, () => notifications().some((n) => n.reason === "summary"), "summary");
    expect(notifications().filter((n) => n.reason === "failed")).toHaveLength(0);
    sims.sendMessage(sim, later, "#fail");
    await until(service, () => notifications().some((n) => n.reason === "failed"), "failure notified");
    expect(notifications().filter((n) => n.reason === "failed")).toEqual([expect.objectContaining({ agentKey: `${sim.environmentId}/${later}` })]);
  });

  it("rejects malformed bridge requests with a clear error", async () => {
    const { service } = await setup(["upstream"]);
    await expect(service.request("agent.send", { key: "x" })).rejects.toThrow(/Invalid agent.send request/);
    await expect(service.request("no.such", {})).rejects.toThrow(/Unknown request/);
    await expect(service.request("link.open", { url: "javascript:alert(1)" })).rejects.toThrow(/Only http and https/);
    await expect(service.request("pair.confirm", { input: "http://127.0.0.1:1/pair#token=ABCDEFGHJKLM" })).rejects.toThrow(/No server answered/);
  });

  it("acknowledging a failure takes it out of need-you until a new failure; it survives a restart", async () => {
    const { sims, service, dataDir, secrets } = await setup(["fork"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Flaky", text: "build #fail" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => agent(service, sim, threadId)?.status === "failed", "failed");
    expect(service.model.counts().needsYou).toBe(1);
    const idle = sims.createThread(sim, { title: "Fine" });
    await until(service, () => agent(service, sim, idle)?.status === "idle", "idle agent listed");
    await expect(service.request("agent.acknowledge", { key: `${sim.environmentId}/${idle}` })).rejects.toThrow(/Only a failed or stalled agent/);

    const result = (await service.request("agent.acknowledge", { key })) as BridgeResults["agent.acknowledge"];
    expect(result).toMatchObject({ key, onServer: "local" }); // 0.0.24 has no thread settlement
    expect(agent(service, sim, threadId)).toMatchObject({ status: "failed", acknowledged: true });
    expect(service.model.counts().needsYou).toBe(0);
    const tray = trayModel(service.model.environments(), service.model.agents(), false);
    expect(tray.items.filter((item) => item.kind === "agent")).toEqual([]);

    await service.stop();
    const reopened = await FleetService.start({ dataDir, secrets, ...FAST });
    cleanups.push(() => reopened.stop());
    await until(
      reopened,
      () => reopened.model.agent(key)?.lastKnownStatus === "failed" && reopened.model.environment(sim.environmentId)?.connection.phase === "online",
      "failed again after restart",
    );
    expect(reopened.model.agent(key)!.acknowledged).toBe(true);
    expect(reopened.model.counts().needsYou).toBe(0);

    sims.sendMessage(sim, threadId, "again #fail");
    await until(reopened, () => reopened.model.agent(key)?.status === "failed" && !reopened.model.agent(key)!.acknowledged, "a new failure counts again");
    expect(reopened.model.counts().needsYou).toBe(1);
  });

  it("on a server with T3's thread settlement, acknowledging also settles the thread in T3", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Flaky", text: "build #fail" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => agent(service, sim, threadId)?.status === "failed", "failed");
    expect(agent(service, sim, threadId)!.capabilities.settle).toBe(true); // the descriptor advertises threadSettlement
    const settled = new Promise<void>((resolve) => {
      const listener = (event: { type: string; aggregateId: string }) => {
        if (event.type !== "thread.settled" || event.aggregateId !== threadId) return;
        sim.engine.off("event", listener);
        resolve();
      };
      sim.engine.on("event", listener);
    });
    const result = (await service.request("agent.acknowledge", { key })) as BridgeResults["agent.acknowledge"];
    expect(result).toEqual({ key, onServer: "settled", note: null });
    await settled;
    expect(agent(service, sim, threadId)).toMatchObject({ status: "failed", acknowledged: true });
  });

  it("agents carry their T3 project, repository folder and branch", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    sims.createThread(sim, { title: "Planner" });
    const projectId = [...sim.engine.projects.keys()][0]!;
    sim.engine.dispatch({
      type: "thread.create",
      commandId: "create-branch-thread",
      threadId: "on-branch",
      projectId,
      title: "Login fix",
      modelSelection: { instanceId: "codex", model: "gpt-5.4" },
      runtimeMode: "full-access",
      interactionMode: "default",
      branch: "fix/login",
      worktreePath: "/home/user/worktrees/login",
      createdAt: new Date().toISOString(),
    });
    await pairAll(service, sims);
    await until(service, () => agent(service, sim, "on-branch") !== undefined, "listed");
    expect(agent(service, sim, "on-branch")).toMatchObject({
      projectTitle: `${sim.label} repo`,
      workspaceRoot: `/home/user/${sim.label}`,
      branch: "fix/login",
      worktreePath: "/home/user/worktrees/login",
    });
  });
});

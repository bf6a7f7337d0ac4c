// A message's thread that is archived or deleted while the message waits for its answer (issue 23,
// a day at the desk): the fleet stops following it and says why, and a machine that can no longer
// read the thread (T3 upgraded in place without it) stays online. Before, the follow kept failing
// the whole connection, so the machine reconnected for ever and its rows stayed unknown.
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import type { ConnectionPhase } from "../../shared/fleet/types";
import { createV2Thread } from "../../sim/protocol2/fleet-hooks";
import { changeThread } from "../../sim/soak-hooks";
import { THREAD_LEFT_AFTER_DELIVERY, THREAD_LEFT_UNCONFIRMED } from "./delivery-reasons";
import { FleetService } from "./service";
import { FAST, cleanups, followersOf, idleUpstreamThread, journalOf, kill, setup, supervisorOf, until } from "./service.testkit";

/** Sends a message whose turn never ends, and waits until the thread shows it: delivered, never answered. */
async function deliveredForever(service: FleetService, key: string, text: string): Promise<Delivery> {
  const sent = (await service.request("agent.send", { key, text, expectedIntent: "new-turn" })) as Delivery;
  await until(service, () => service.delivery(sent.commandId)?.state === "delivered", `${text}: delivered`);
  return sent;
}

describe("a message whose thread leaves its machine", () => {
  it.each([
    { generation: "upstream" as const, hang: "#hang" },
    { generation: "v2" as const, hang: "#hold" },
  ])("$generation: the delivery says the thread left before an answer, and its thread is no longer followed", async ({ generation, hang }) => {
    const { sims, service } = await setup([generation], { leftRowsKeptMs: 200 });
    const p1 = sims.servers[0];
    const v2 = sims.v2Servers[0];
    const sim = (v2 ?? p1)!;
    const threadId = v2 ? createV2Thread(v2, { title: "Worker" }) : sims.createThread(p1!, { title: "Worker" });
    const environmentId = sim.environmentId;
    const key = `${environmentId}/${threadId}`;
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    await until(service, () => service.model.agent(key)?.status === "idle", "idle");

    const sent = await deliveredForever(service, key, `work on it ${hang}`);
    expect(followersOf(service, environmentId).isFollowing(threadId, `delivery:${sent.commandId}`)).toBe(true);
    changeThread(sim, threadId, "delete");

    await until(service, () => service.model.agent(key) === undefined, "the row goes");
    // Deleting a thread on protocol 2 cancels its run (T3's V2 decider), which may settle the message first.
    const reasons = v2 ? [THREAD_LEFT_AFTER_DELIVERY, null] : [THREAD_LEFT_AFTER_DELIVERY];
    expect(service.delivery(sent.commandId)?.state).toBe("delivered");
    expect(reasons).toContain(service.delivery(sent.commandId)?.reason);
    expect(followersOf(service, environmentId).isFollowing(threadId)).toBe(false);
    expect(service.model.environment(environmentId)?.connection.phase).toBe("online");
  });

  it("a machine upgraded in place without the thread of a message in flight stays online, and the message says the thread left", async () => {
    const { sims, service, sim: p1, threadId, key } = await idleUpstreamThread();
    const sent = await deliveredForever(service, key, "work on it #hang");
    // Deleted: its row stays a while as ended, and the delivery still follows the thread meanwhile.
    changeThread(p1, threadId, "delete");
    await until(service, () => service.model.agent(key)?.status === "deleted", "shown deleted");
    expect(followersOf(service, p1.environmentId).isFollowing(threadId, `delivery:${sent.commandId}`)).toBe(true);

    const phases: ConnectionPhase["phase"][] = [];
    supervisorOf(service, p1.environmentId).on("phase", (phase) => phases.push(phase.phase));
    // The upgrade imports live threads only: protocol 2 does not know the deleted thread (the soak's soak-fork).
    const v2 = await sims.upgradeToV2(p1.environmentId);
    await until(service, () => service.model.environment(p1.environmentId)?.protocol === 2 && service.model.agent(key) === undefined, "upgraded");
    expect(service.delivery(sent.commandId)).toMatchObject({ state: "delivered", reason: THREAD_LEFT_AFTER_DELIVERY });
    // Work on the machine goes on: a new thread runs and answers on the same connection.
    const next = createV2Thread(v2, { title: "Next", text: "and now this" });
    await until(service, () => service.model.agent(`${p1.environmentId}/${next}`)?.status === "idle", "the next thread answered");
    expect(followersOf(service, p1.environmentId).isFollowing(threadId)).toBe(false);
    const sinceOnline = phases.slice(phases.indexOf("online"));
    expect(sinceOnline, `phases since the upgrade: ${phases.join(" → ")}`).toEqual(["online"]);
  });

  it("a message in flight when T3 Fleet was killed, whose thread was deleted before it restarted, says the thread left", async () => {
    const { sims, service, dataDir, secrets } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Worker" });
    const key = `${sim.environmentId}/${threadId}`;
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    await until(service, () => service.model.agent(key)?.status === "idle", "idle");
    // Killed once the message is on disk, before T3 has it.
    journalOf(service).on("written", (entries) => {
      if (entries.some((entry) => entry.delivery.text === "before the kill")) void kill(service);
    });
    const sent = (await service.request("agent.send", { key, text: "before the kill", expectedIntent: "new-turn" })) as Delivery;
    changeThread(sim, threadId, "delete");

    const reopened = await FleetService.start({ dataDir, secrets, ...FAST });
    cleanups.push(() => reopened.stop());
    await until(reopened, () => reopened.delivery(sent.commandId)?.reason === THREAD_LEFT_UNCONFIRMED, "the thread left");
    expect(reopened.delivery(sent.commandId)).toMatchObject({ state: "uncertain", sendAgain: false });
    expect(followersOf(reopened, sim.environmentId).isFollowing(threadId)).toBe(false);
    // Never resent: the server holds no copy.
    expect(sim.engine.threads.get(threadId)!.messages.filter((message) => message.text === "before the kill")).toEqual([]);
  });
});

// A message whose turn ends with no answer (it failed, or the user interrupted it) is settled as
// delivered: nothing more will happen to it, so its thread is no longer followed for it and it
// leaves the history with the settled ones (issue 23: before, each one kept its thread's transcript
// followed and growing for the thread's life, the soak's slow heap rise).
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import { createV2Thread } from "../../sim/protocol2/fleet-hooks";
import type { FleetService } from "./service";
import { followersOf, setup, until } from "./service.testkit";

async function idleAgent(generation: "upstream" | "v2") {
  const { sims, service } = await setup([generation]);
  const p1 = sims.servers[0];
  const v2 = sims.v2Servers[0];
  const sim = (v2 ?? p1)!;
  const threadId = v2 ? createV2Thread(v2, { title: "Worker" }) : sims.createThread(p1!, { title: "Worker" });
  const key = `${sim.environmentId}/${threadId}`;
  await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(service, () => service.model.agent(key)?.status === "idle", "idle");
  return { service, key, threadId, environmentId: sim.environmentId };
}

const followedFor = (service: FleetService, environmentId: string, threadId: string, delivery: Delivery) =>
  followersOf(service, environmentId).isFollowing(threadId, `delivery:${delivery.commandId}`);

describe("a message whose turn ends with no answer", () => {
  it.each([
    { generation: "upstream" as const, fail: "#fail" },
    { generation: "v2" as const, fail: "#fail" },
  ])("$generation: a failed turn settles it as delivered, no longer followed", async ({ generation, fail }) => {
    const { service, key, threadId, environmentId } = await idleAgent(generation);
    const sent = (await service.request("agent.send", { key, text: `try this ${fail}`, expectedIntent: "new-turn" })) as Delivery;
    await until(service, () => service.model.agent(key)?.status === "failed", "the turn failed");
    await until(service, () => !followedFor(service, environmentId, threadId, sent), "no longer followed for the message");
    expect(service.delivery(sent.commandId)?.state).toMatch(/^(delivered|answered)$/);
    expect(service.delivery(sent.commandId)?.observed).toMatchObject({ outcome: "new-turn" });
  });

  // Protocol 2 only: T3 0.0.42's thread reads "idle" after an interrupt, which a turn that is about to
  // be answered can also read for a moment; such a message stays followed until its thread goes.
  it("v2: an interrupted turn settles it as delivered, no longer followed", async () => {
    const hang = "#hold";
    const { service, key, threadId, environmentId } = await idleAgent("v2");
    const sent = (await service.request("agent.send", { key, text: `take your time ${hang}`, expectedIntent: "new-turn" })) as Delivery;
    await until(service, () => service.delivery(sent.commandId)?.state === "delivered" && service.model.agent(key)?.status === "running", "running");
    await service.request("agent.interrupt", { key });
    await until(service, () => !followedFor(service, environmentId, threadId, sent), "no longer followed for the message");
    expect(service.delivery(sent.commandId)).toMatchObject({ state: "delivered", observed: { outcome: "new-turn" } });
  });
});

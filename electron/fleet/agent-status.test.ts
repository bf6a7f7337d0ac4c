// Agent statuses the real T3 servers taught (issue 7), end to end: simulator → protocol-1 adapter →
// fleet model → what the service publishes.
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import type { DisplayStatus } from "../../shared/fleet/types";
import type { Generation } from "../../sim/protocol1/model";
import { createV2Thread } from "../../sim/protocol2/fleet-hooks";
import { agent as agentOf, pairAll, setup as setupFleet, until } from "./service.testkit";

async function setup(generation: Generation = "upstream") {
  const { sims, service } = await setupFleet([generation]);
  return { sims, sim: sims.servers[0]!, service };
}

describe("agent statuses from what real servers do", () => {
  it("a turn asked for stays starting until it runs (no idle in between, no second turn offered), then settles", async () => {
    // The 0.0.24 generation does not coalesce its shell, so every step between request and run is seen.
    const { sims, sim, service } = await setup("fork");
    const threadId = sims.createThread(sim, { title: "Fresh" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => agentOf(service, sim, threadId)?.status === "idle", "idle");
    const seen: DisplayStatus[] = ["idle"];
    const intents: string[] = ["new-turn"];
    service.on("event", (event) => {
      if (event.type !== "fleet.delta") return;
      const view = event.agents.find((agent) => agent.key === key);
      if (!view || seen.at(-1) === view.status) return;
      seen.push(view.status);
      intents.push(service.intent(key).kind);
    });
    const delivery = (await service.request("agent.send", { key, text: "take your time #slow", expectedIntent: "new-turn" })) as Delivery;
    await until(service, () => service.delivery(delivery.commandId)?.state === "answered", "answered");
    await until(service, () => agentOf(service, sim, threadId)?.status === "idle", "settled");
    const firstRunning = seen.indexOf("running");
    expect(firstRunning).toBeGreaterThan(1);
    expect(seen.slice(1, firstRunning).every((status) => status === "starting")).toBe(true);
    expect(intents.slice(1, firstRunning).every((kind) => kind === "refused")).toBe(true);
  });

  it("an interrupted turn is interrupted, a deleted thread deleted, an archived one ended · Archived", async () => {
    const { sims, sim, service } = await setup();
    const busy = sims.createThread(sim, { title: "Busy", text: "#hang" });
    const doomed = sims.createThread(sim, { title: "Doomed" });
    const shelved = sims.createThread(sim, { title: "Shelved" });
    await pairAll(service, sims);
    await until(service, () => agentOf(service, sim, busy)?.status === "running", "running");
    const interrupt = (await service.request("agent.interrupt", { key: `${sim.environmentId}/${busy}` })) as Delivery;
    await until(service, () => service.delivery(interrupt.commandId)?.state === "delivered", "interrupt delivered");
    await until(service, () => agentOf(service, sim, busy)?.status === "interrupted", "interrupted");
    expect(service.intent(`${sim.environmentId}/${busy}`)).toMatchObject({ kind: "new-turn" });

    sim.engine.dispatch({ type: "thread.delete", commandId: "delete-doomed", threadId: doomed });
    sim.engine.dispatch({ type: "thread.archive", commandId: "archive-shelved", threadId: shelved });
    await until(service, () => agentOf(service, sim, doomed)?.status === "deleted", "deleted");
    await until(service, () => agentOf(service, sim, shelved)?.reason === "Archived", "archived");
    expect(agentOf(service, sim, shelved)).toMatchObject({ status: "ended", lifecycle: "archived" });
    expect(service.intent(`${sim.environmentId}/${doomed}`)).toMatchObject({ kind: "refused", reason: "This thread was deleted." });
  });
});

describe("archived threads on protocol 2", () => {
  it("are not agents of the fleet; one archived while watched reads ended · Archived, then leaves as on protocol 1", async () => {
    const { sims, service } = await setupFleet(["v2"], { leftRowsKeptMs: 300 });
    const v2 = sims.v2Servers[0]!;
    const stored = createV2Thread(v2, { title: "Archived last month" });
    const shelved = createV2Thread(v2, { title: "Shelved" });
    const kept = createV2Thread(v2, { title: "Kept" });
    v2.engine.dispatch({ type: "thread.archive", commandId: "archive-stored", threadId: stored });
    await service.request("pair.confirm", { input: v2.pairingUrl() });
    const agent = (threadId: string) => service.model.agent(`${v2.environmentId}/${threadId}`);
    await until(service, () => agent(kept)?.status === "idle" && agent(shelved)?.status === "idle", "the active threads");
    // T3's snapshot lists its archive too: the fleet leaves it out, as T3's own list does.
    expect(agent(stored)).toBeUndefined();

    v2.engine.dispatch({ type: "thread.archive", commandId: "archive-shelved", threadId: shelved });
    await until(service, () => agent(shelved)?.reason === "Archived", "archived");
    expect(agent(shelved)).toMatchObject({ status: "ended", lifecycle: "archived" });
    await until(service, () => agent(shelved) === undefined, "its row gone after the rows' time");
    expect(agent(kept)?.status).toBe("idle");
  });
});

// A send whose answer the page lost (its socket to the service dropped) is sent again by the page
// with the same commandId (renderer/src/state/lost-sends.ts): the service answers with the delivery
// it already has, from memory or from its journal after a restart, and never dispatches a second
// message. An id it does not know is a new send (issue 43).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import { FleetService } from "./service";
import { FAST, agent, cleanups, kill, pairAll, setup, until } from "./service.testkit";
import type { SimServer } from "../../sim/protocol1/server";

/** Every command the simulated T3 was dispatched, by commandId, as it arrived (duplicates included). */
function dispatchesAt(sim: SimServer): string[] {
  const seen: string[] = [];
  const dispatch = sim.engine.dispatch.bind(sim.engine);
  sim.engine.dispatch = (command) => {
    seen.push(command.commandId);
    return dispatch(command);
  };
  return seen;
}

async function idleThread() {
  const { sims, service, dataDir, secrets } = await setup(["upstream"]);
  const sim = sims.servers[0]!;
  const threadId = sims.createThread(sim, { title: "Worker" });
  await pairAll(service, sims);
  await until(service, () => agent(service, sim, threadId)?.status === "idle", "idle");
  const atServer = (text: string) => sim.engine.threads.get(threadId)!.messages.filter((m) => m.role === "user" && m.text === text).length;
  return { sim, service, dataDir, secrets, key: `${sim.environmentId}/${threadId}`, atServer };
}

describe("a send with a commandId the service already has", () => {
  it("is the same send: the same delivery is returned and T3 is dispatched one message", async () => {
    const { sim, service, key, atServer } = await idleThread();
    const dispatched = dispatchesAt(sim);
    const commandId = randomUUID();
    const params = { key, text: "once, whatever the page does", expectedIntent: "new-turn" as const, commandId };
    // Twice at once (the page resent while the first was still being dispatched), then once more after.
    const [first, second] = (await Promise.all([service.request("agent.send", params), service.request("agent.send", params)])) as Delivery[];
    const third = (await service.request("agent.send", params)) as Delivery;
    for (const delivery of [first!, second!, third]) expect(delivery).toMatchObject({ commandId, messageId: first!.messageId, text: params.text });
    await until(service, () => service.delivery(commandId)?.state === "answered", "answered");
    expect(dispatched.filter((id) => id === commandId)).toHaveLength(1);
    expect(atServer(params.text)).toBe(1);
  });

  it("is the same send after a restart: the journaled delivery is returned and nothing is dispatched again", async () => {
    const { sim, service, dataDir, secrets, key, atServer } = await idleThread();
    const dispatched = dispatchesAt(sim);
    const commandId = randomUUID();
    const params = { key, text: "sent as the service was killed", expectedIntent: "new-turn" as const, commandId };
    // T3 takes the message and never answers: the service is killed with the dispatch in flight.
    sim.dropNextDispatch = "unanswered";
    const lost = service.request("agent.send", params).catch(() => undefined);
    await until(service, () => dispatched.includes(commandId), "dispatched");
    await kill(service);
    await lost;
    const reopened = await FleetService.start({ dataDir, secrets, ...FAST });
    cleanups.push(() => reopened.stop());
    const again = (await reopened.request("agent.send", params)) as Delivery;
    // As the journal restored it: still being checked, or already found in its thread.
    expect(again).toMatchObject({ commandId, text: params.text, state: expect.stringMatching(/^(uncertain|delivered|answered)$/) });
    // The restored message is found in its thread; the page's resend changed nothing.
    await until(reopened, () => reopened.delivery(commandId)?.state === "answered", "answered");
    expect((await reopened.request("agent.send", params)) as Delivery).toMatchObject({ commandId, state: "answered" });
    expect(dispatched.filter((id) => id === commandId)).toHaveLength(1);
    expect(atServer(params.text)).toBe(1);
  });

  it("is a new send when the id is unknown, and refused without a dispatch when the id belongs to another message", async () => {
    const { sim, service, key, atServer } = await idleThread();
    const dispatched = dispatchesAt(sim);
    const commandId = randomUUID();
    const first = (await service.request("agent.send", { key, text: "the first message", expectedIntent: "new-turn", commandId })) as Delivery;
    expect(first.commandId).toBe(commandId);
    await until(service, () => service.delivery(commandId)?.state === "answered", "answered");
    // The turn that answered has ended: the next message starts a new one.
    await until(service, () => service.intent(key).kind === "new-turn", "a new turn next");
    await expect(service.request("agent.send", { key, text: "a different message", expectedIntent: "new-turn", commandId })).rejects.toThrow(
      "This command id belongs to another message; nothing was sent.",
    );
    const other = randomUUID();
    const second = (await service.request("agent.send", { key, text: "a different message", expectedIntent: "new-turn", commandId: other })) as Delivery;
    expect(second).toMatchObject({ commandId: other, state: expect.not.stringMatching(/^refused$/) });
    await until(service, () => service.delivery(other)?.state === "answered", "second answered");
    expect(dispatched.filter((id) => id === commandId || id === other)).toEqual([commandId, other]);
    expect([atServer("the first message"), atServer("a different message")]).toEqual([1, 1]);
  });

  it("refuses a commandId that is not a UUID at the edge", async () => {
    const { service, key } = await idleThread();
    await expect(service.request("agent.send", { key, text: "hi", expectedIntent: "new-turn", commandId: "not-an-id" })).rejects.toThrow();
  });
});

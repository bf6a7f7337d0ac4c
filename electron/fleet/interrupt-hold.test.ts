// Interrupt and hold queued, against the protocol-2 simulator: the runs T3 queued behind the turn
// are cancelled before the interrupt (so none starts next), their messages are held in the fleet,
// and a held message is sent once when released, or never when discarded.
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import { createV2Thread, sendV2Message } from "../../sim/protocol2/fleet-hooks";
import type { Deliveries } from "./deliveries";
import type { FleetService } from "./service";
import { setup, until } from "./service.testkit";

/** The service's deliveries (its bridge shows the same through events; read directly here for brevity). */
const deliveriesOf = (service: FleetService) => (service as unknown as { deliveries: Deliveries }).deliveries;

async function runningWithTwoQueued() {
  // Relaxed liveness: these scenarios are about the queue, and the tests' fast pings can take a busy
  // machine's late pong for an outage (the interrupt is then refused as offline, truthfully).
  const { sims, service, events } = await setup(["v2"], { socket: { pingIntervalMs: 5_000, openTimeoutMs: 10_000 } });
  const v2 = sims.v2Servers[0]!;
  const threadId = createV2Thread(v2, { title: "Port the parser", provider: "claudeAgent", text: "Port it #hold" });
  sendV2Message(v2, threadId, "Then update the docs");
  sendV2Message(v2, threadId, "And cut a release");
  await service.request("pair.confirm", { input: v2.pairingUrl() });
  const key = `${v2.environmentId}/${threadId}`;
  const queuedItems = () => (deliveriesOf(service).threadDetail(key)?.items ?? []).filter((item) => item.type === "message" && item.queue?.state === "queued");
  await until(service, () => service.model.agent(key)?.status === "running" && queuedItems().length === 2, "running with two queued");
  const runs = () => v2.engine.threads.get(threadId)!.runs;
  const held = () =>
    deliveriesOf(service)
      .all()
      .filter((delivery) => delivery.agentKey === key && delivery.state === "held");
  return { v2, service, events, threadId, key, runs, held };
}

describe("interrupt and hold queued", () => {
  it("cancels the queued runs before interrupting, so none starts; their messages are held in order", async () => {
    const { service, key, runs, held, v2, threadId } = await runningWithTwoQueued();
    const interrupt = (await service.request("agent.interrupt", { key, holdQueued: true })) as Delivery;
    expect(interrupt.kind).toBe("interrupt");
    await until(service, () => service.model.agent(key)?.status === "interrupted", "interrupted").catch((error: Error) => {
      throw new Error(
        `${error.message}: status ${service.model.agent(key)?.status}, interrupt ${JSON.stringify(interrupt)}, runs ${JSON.stringify(runs().map((run) => [run.id, run.status]))}`,
      );
    });
    expect(runs().map((run) => run.status)).toEqual(["interrupted", "cancelled", "cancelled"]);
    expect(runs().filter((run) => run.startedAt !== null)).toHaveLength(1);
    expect(held().map((delivery) => delivery.text)).toEqual(["Then update the docs", "And cut a release"]);
    expect(held()[0]!.reason).toContain("taken out of T3's queue when you interrupted");
    // Each held message's receipt continues the queued message it was held from.
    const messages = v2.engine.threads.get(threadId)!.messages;
    const idOf = (text: string) => messages.find((message) => message.role === "user" && message.text === text)?.id;
    expect(held().map((delivery) => delivery.heldFrom)).toEqual([idOf("Then update the docs"), idOf("And cut a release")]);
  });

  it("a released message is sent once (a second release finds nothing); a discarded one is never sent", async () => {
    const { service, key, runs, held, v2, threadId } = await runningWithTwoQueued();
    const interrupt = (await service.request("agent.interrupt", { key, holdQueued: true })) as Delivery;
    const cancels = () =>
      JSON.stringify(
        deliveriesOf(service)
          .all()
          .filter((d) => d.kind !== "message")
          .map((d) => [d.kind, d.state, d.reason]),
      );
    await until(service, () => service.model.agent(key)?.status === "interrupted" && held().length === 2, `interrupted, two held (${interrupt.state})`).catch(
      (error: Error) => {
        throw new Error(`${error.message}: status ${service.model.agent(key)?.status}, ${held().length} held, ${cancels()}`);
      },
    );
    const [first, second] = held() as [Delivery, Delivery];

    const released = (await service.request("delivery.release", { commandId: first.commandId })) as Delivery;
    expect(released).toMatchObject({ commandId: first.commandId, kind: "message", text: "Then update the docs", intent: "new-turn", heldFrom: first.heldFrom });
    await expect(service.request("delivery.release", { commandId: first.commandId })).rejects.toThrow(/no longer held/);
    await until(service, () => service.delivery(first.commandId)?.state === "answered", "released message answered");
    const sentAgain = v2.engine.threads.get(threadId)!.messages.filter((message) => message.role === "user" && message.text === "Then update the docs");
    // The cancelled original stays in T3's thread; the release added exactly one.
    expect(sentAgain).toHaveLength(2);
    expect(runs().filter((run) => run.userMessageId === released.messageId)).toHaveLength(1);

    const discarded = (await service.request("delivery.discard", { commandId: second.commandId })) as Delivery;
    expect(discarded.state).toBe("discarded");
    expect(held()).toEqual([]);
    await expect(service.request("delivery.release", { commandId: second.commandId })).rejects.toThrow(/no longer held/);
    expect(v2.engine.threads.get(threadId)!.messages.filter((message) => message.role === "user" && message.text === "And cut a release")).toHaveLength(1);
  });

  it("without holding, the interrupt lets T3 start the next queued message", async () => {
    const { service, key, runs, held } = await runningWithTwoQueued();
    await service.request("agent.interrupt", { key });
    await until(service, () => runs()[1]?.startedAt !== null, "the next queued run started");
    expect(runs()[0]!.status).toBe("interrupted");
    expect(held()).toEqual([]);
  });
});

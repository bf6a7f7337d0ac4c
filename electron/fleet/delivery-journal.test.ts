// Messages across a restart of the fleet service, counted at the simulated server: a message the
// service was sending when it was killed arrives exactly once or is shown uncertain with "Send
// again" (once, same commandId), never sent twice and never sent again on its own; held messages
// come back held; a corrupt journal is kept aside and loses nothing else.
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import type { SimServer } from "../../sim/protocol1/server";
import type { Deliveries } from "./deliveries";
import { RESTART_BEFORE_SENDING, RESTART_NOT_FOUND } from "./delivery-reasons";
import { JOURNAL_FILE, JOURNAL_SETTLED_LIMIT, type JournalEntry, boundedEntries } from "./delivery-journal";
import { FleetService } from "./service";
import { FAST, agent, cleanups, env, journalOf, kill, pairAll, setup, until } from "./service.testkit";

const TEXT = "ship the release notes";

async function idleThread() {
  const context = await setup(["upstream"]);
  const sim = context.sims.servers[0]!;
  const threadId = context.sims.createThread(sim, { title: "Worker" });
  await pairAll(context.service, context.sims);
  await until(context.service, () => agent(context.service, sim, threadId)?.status === "idle", "idle");
  return { ...context, sim, threadId, key: `${sim.environmentId}/${threadId}` };
}

/** How many times the server received the message: the truth the receipts are checked against. */
const arrivals = (sim: SimServer, threadId: string, text = TEXT) =>
  sim.engine.threads.get(threadId)!.messages.filter((message) => message.role === "user" && message.text === text).length;

async function restart(dataDir: string, secrets: Parameters<typeof FleetService.start>[0]["secrets"]) {
  const service = await FleetService.start({ dataDir, secrets, ...FAST });
  cleanups.push(() => service.stop());
  const events: BridgeEvent[] = [];
  service.on("event", (event) => events.push(event));
  return { service, events };
}

/** Resolves when the service published a delivery of this text in this state. */
function published(service: FleetService, state: Delivery["state"]): Promise<Delivery> {
  return new Promise((resolve) => {
    const listener = (event: BridgeEvent) => {
      if (event.type !== "delivery" || event.delivery.text !== TEXT || event.delivery.state !== state) return;
      service.off("event", listener);
      resolve(event.delivery);
    };
    service.on("event", listener);
  });
}

/** After a restart the message is not in T3: "Send again" sends it once, a second press sends nothing. */
async function sendAgainOnce(service: FleetService, sim: SimServer, threadId: string, commandId: string, events: BridgeEvent[]) {
  await until(service, () => service.delivery(commandId)?.sendAgain === true, "Send again offered");
  expect(service.delivery(commandId)).toMatchObject({ state: "uncertain", reason: RESTART_NOT_FOUND });
  expect(arrivals(sim, threadId)).toBe(0); // never sent again on its own
  const again = (await service.request("delivery.recheck", { commandId })) as Delivery;
  expect(again.commandId).toBe(commandId);
  expect(again.sendAgain).not.toBe(true);
  expect(["sending", "accepted", "delivered", "answered"]).toContain(again.state);
  await expect(service.request("delivery.recheck", { commandId })).resolves.toMatchObject({ commandId });
  await until(service, () => service.delivery(commandId)?.state === "answered", "answered");
  expect(arrivals(sim, threadId)).toBe(1);
  expect(service.delivery(commandId)!.sendAgain).toBeUndefined();
  const offered = events.filter((event) => event.type === "delivery" && event.delivery.commandId === commandId && event.delivery.sendAgain === true);
  expect(offered).toHaveLength(1);
}

describe("deliveries across a restart of the fleet", () => {
  it("killed after the message was recorded, before it was dispatched: uncertain with Send again, which sends it once", async () => {
    const { sim, service, dataDir, secrets, threadId, key } = await idleThread();
    journalOf(service).on("written", (entries) => {
      if (entries.some((entry) => entry.delivery.text === TEXT)) void kill(service);
    });
    const sent = (await service.request("agent.send", { key, text: TEXT, expectedIntent: "new-turn" })) as Delivery;
    expect(arrivals(sim, threadId)).toBe(0);

    const { service: reopened, events } = await restart(dataDir, secrets);
    expect(reopened.snapshot().deliveries).toEqual([expect.objectContaining({ commandId: sent.commandId, state: "uncertain" })]);
    await sendAgainOnce(reopened, sim, threadId, sent.commandId, events);
  });

  it("killed while T3 had applied it but not yet answered: delivered after the restart, never offered again", async () => {
    const { sim, service, dataDir, secrets, threadId, key } = await idleThread();
    sim.dropNextDispatch = "unanswered";
    const applied = new Promise<void>((resolve) => {
      const check = () => arrivals(sim, threadId) === 1 && (sim.engine.off("event", check), resolve());
      sim.engine.on("event", check);
    });
    const sending = service.request("agent.send", { key, text: TEXT, expectedIntent: "new-turn" }) as Promise<Delivery>;
    await applied;
    await kill(service);
    const { commandId } = await sending;

    const { service: reopened, events } = await restart(dataDir, secrets);
    await until(reopened, () => reopened.delivery(commandId)?.state === "answered", "answered after the restart");
    expect(arrivals(sim, threadId)).toBe(1);
    const states = events.flatMap((event) => (event.type === "delivery" && event.delivery.commandId === commandId ? [event.delivery] : []));
    expect(states.some((delivery) => delivery.sendAgain === true)).toBe(false);
    expect(reopened.delivery(commandId)!.reason).toBeNull();
  });

  it("killed after the dispatch was lost on the way (T3 never applied it): uncertain with Send again, once", async () => {
    const { sim, service, dataDir, secrets, threadId, key } = await idleThread();
    sim.dropNextDispatch = "before-apply";
    const dropped = published(service, "uncertain").then(() => kill(service));
    const { commandId } = (await service.request("agent.send", { key, text: TEXT, expectedIntent: "new-turn" })) as Delivery;
    await dropped;
    expect(arrivals(sim, threadId)).toBe(0);

    const { service: reopened, events } = await restart(dataDir, secrets);
    await sendAgainOnce(reopened, sim, threadId, commandId, events);
  });

  it("a held message comes back held and is sent once when released", async () => {
    const { sim, service, dataDir, secrets, threadId, key } = await idleThread();
    const held = (service as unknown as { deliveries: Deliveries }).deliveries.hold(key, TEXT, "Held for the test.");
    await new Promise<void>((resolve) => journalOf(service).once("written", () => resolve()));
    await kill(service);

    const { service: reopened } = await restart(dataDir, secrets);
    expect(reopened.delivery(held.commandId)).toMatchObject({ state: "held", text: TEXT, reason: "Held for the test." });
    await until(reopened, () => env(reopened, sim)?.connection.phase === "online" && reopened.intent(key).kind === "new-turn", "online");
    const released = (await reopened.request("delivery.release", { commandId: held.commandId })) as Delivery;
    expect(released).toMatchObject({ commandId: held.commandId, text: TEXT });
    await expect(reopened.request("delivery.release", { commandId: held.commandId })).rejects.toThrow(/no longer held/);
    await until(reopened, () => reopened.delivery(held.commandId)?.state === "answered", "answered");
    expect(arrivals(sim, threadId)).toBe(1);
  });

  it("killed while the message waited for its machine to connect: it comes back held, never sent on its own, and Send now sends it once", async () => {
    const { sim, service, dataDir, secrets, threadId, key } = await idleThread();
    await kill(service);
    sim.setBlackhole(true); // the machine does not answer: after the restart it stays "connecting"
    const { service: waiting } = await restart(dataDir, secrets);
    expect(env(waiting, sim)?.connection.phase).toBe("connecting");
    const journaled = new Promise<void>((resolve) =>
      journalOf(waiting).on("written", (entries) => entries.some((entry) => entry.delivery.text === TEXT) && resolve()),
    );
    const sending = waiting.request("agent.send", { key, text: TEXT, expectedIntent: "new-turn" }).catch(() => undefined);
    await journaled;
    await kill(waiting);
    await sending;
    sim.setBlackhole(false);

    const { service: reopened } = await restart(dataDir, secrets);
    const [held] = reopened.snapshot().deliveries;
    expect(held).toMatchObject({ state: "held", text: TEXT, reason: RESTART_BEFORE_SENDING });
    await until(reopened, () => env(reopened, sim)?.connection.phase === "online" && reopened.intent(key).kind === "new-turn", "online");
    expect(arrivals(sim, threadId)).toBe(0);
    await reopened.request("delivery.release", { commandId: held!.commandId });
    await until(reopened, () => reopened.delivery(held!.commandId)?.state === "answered", "answered");
    await expect(reopened.request("delivery.release", { commandId: held!.commandId })).rejects.toThrow(/no longer held/);
    expect(arrivals(sim, threadId)).toBe(1);
  });

  it("a corrupt record is kept aside and reported; the machines, and sending, are unaffected", async () => {
    const { sim, service, dataDir, secrets, threadId, key } = await idleThread();
    await service.stop();
    await writeFile(join(dataDir, JOURNAL_FILE), '{"version":1,"entries":[{"delivery":', "utf8");

    const { service: reopened } = await restart(dataDir, secrets);
    expect(reopened.snapshot().notices).toEqual([expect.stringContaining("record of sent messages was not valid")]);
    const kept = (await readdir(dataDir)).filter((name) => name.startsWith(`${JOURNAL_FILE}.corrupt-`));
    expect(kept).toHaveLength(1);
    expect(await readFile(join(dataDir, kept[0]!), "utf8")).toBe('{"version":1,"entries":[{"delivery":');
    await until(reopened, () => env(reopened, sim)?.connection.phase === "online" && agent(reopened, sim, threadId)?.status === "idle", "paired machine back");
    const sent = (await reopened.request("agent.send", { key, text: TEXT, expectedIntent: "new-turn" })) as Delivery;
    await until(reopened, () => reopened.delivery(sent.commandId)?.state === "answered", "answered");
    const file = JSON.parse(await readFile(join(dataDir, JOURNAL_FILE), "utf8")) as { entries: JournalEntry[] };
    expect(file.entries.map((entry) => entry.delivery.commandId)).toContain(sent.commandId);
  });

  it("a record with one unreadable entry keeps the others", async () => {
    const { service, dataDir, secrets, key, sim, threadId } = await idleThread();
    journalOf(service).on("written", (entries) => {
      if (entries.some((entry) => entry.delivery.text === TEXT)) void kill(service);
    });
    const sent = (await service.request("agent.send", { key, text: TEXT, expectedIntent: "new-turn" })) as Delivery;
    const path = join(dataDir, JOURNAL_FILE);
    const file = JSON.parse(await readFile(path, "utf8")) as { version: 1; entries: unknown[] };
    await writeFile(path, JSON.stringify({ ...file, entries: [...file.entries, { delivery: { state: "nonsense" } }] }), "utf8");

    const { service: reopened, events } = await restart(dataDir, secrets);
    expect(reopened.snapshot().notices).toEqual([expect.stringContaining("1 message record(s)")]);
    await sendAgainOnce(reopened, sim, threadId, sent.commandId, events);
  });
});

describe("the journal's bounds", () => {
  const entry = (commandId: string, state: Delivery["state"], updatedAt: string): JournalEntry => ({
    delivery: {
      commandId,
      agentKey: "env/thread",
      kind: "message",
      state,
      text: "t",
      messageId: `msg-${commandId}`,
      requestId: null,
      intent: "new-turn",
      observed: null,
      reason: null,
      createdAt: updatedAt,
      updatedAt,
    },
    environmentId: "env",
    threadId: "thread",
    command: null,
    turnBefore: null,
    expectSteer: false,
  });

  it("keeps every unconfirmed and held message, and only the newest recent settled ones", () => {
    const now = Date.parse("2026-01-02T00:00:00Z");
    const old = "2025-12-30T00:00:00Z";
    const recent = "2026-01-01T23:00:00Z";
    const settled = Array.from({ length: JOURNAL_SETTLED_LIMIT + 5 }, (_, i) => entry(`answered-${i}`, "answered", recent));
    const kept = boundedEntries(
      [
        entry("old-sending", "sending", old),
        entry("old-held", "held", old),
        entry("old-answered", "answered", old),
        entry("old-uncertain", "uncertain", old),
        ...settled,
      ],
      now,
    ).map((e) => e.delivery.commandId);
    expect(kept.slice(0, 3)).toEqual(["old-sending", "old-held", "old-uncertain"]);
    expect(kept).not.toContain("old-answered");
    expect(kept).toHaveLength(3 + JOURNAL_SETTLED_LIMIT);
    expect(kept).not.toContain("answered-0");
    expect(kept.at(-1)).toBe(`answered-${JOURNAL_SETTLED_LIMIT + 4}`);
  });
});

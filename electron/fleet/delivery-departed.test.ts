// A send to an agent that left its machine (deleted or archived in T3) is refused in the fleet's
// words, naming how, where and when, whether it went before the fleet learned of it (T3 refused
// it) or after (never sent); T3's own words stay in the receipt's details (issue 43).
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import type { SimServer } from "../../sim/protocol1/server";
import { agent, env, pairAll, setup, until } from "./service.testkit";

async function idleThread(tuning: { leftRowsKeptMs?: number } = {}) {
  const { sims, service, events } = await setup(["upstream"], tuning);
  const sim = sims.servers[0]!;
  const threadId = sims.createThread(sim, { title: "Worker" });
  await pairAll(service, sims);
  await until(service, () => agent(service, sim, threadId)?.status === "idle", "idle");
  return { sim, service, events, threadId, key: `${sim.environmentId}/${threadId}`, machine: env(service, sim)!.label };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const words = (machine: string, how: string, rest = "") =>
  new RegExp(`^This agent was ${how} on ${escape(machine)} at \\d{2}:\\d{2}; the message was not sent\\.${escape(rest)}$`);

function messagesOf(sim: SimServer, threadId: string, text: string) {
  return sim.engine.threads.get(threadId)!.messages.filter((message) => message.text === text);
}

describe("a send to an agent that left its machine", () => {
  // Found in churn: the receipt read "orchestration.dispatchCommand: Thread 'thread-…' does not exist."
  it("sent before the fleet learned it was deleted: refused in the fleet's words, then says deleted, where and when; T3's words in the details", async () => {
    const { sim, service, events, threadId, key, machine } = await idleThread();
    // Deleted in T3; the fleet has not heard yet when the message goes.
    sim.engine.dispatch({ type: "thread.delete", commandId: "gone", threadId });
    const sent = (await service.request("agent.send", { key, text: "still there?", expectedIntent: "new-turn" })) as Delivery;
    const receipt = () => service.delivery(sent.commandId);
    // Each step on its own wait: on a loaded machine T3's answer and its word on the removal each take a while.
    await until(service, () => receipt()?.state === "refused", "T3 refused it").catch((error: Error) => {
      throw new Error(`${error.message}; the receipt is ${JSON.stringify(receipt())}`);
    });
    await until(service, () => agent(service, sim, threadId)?.status === "deleted", "the fleet shows it deleted");
    await until(service, () => words(machine, "deleted").test(receipt()?.reason ?? ""), "the receipt says deleted").catch((error: Error) => {
      throw new Error(`${error.message}; it reads ${JSON.stringify(receipt()?.reason)}`);
    });
    expect(service.delivery(sent.commandId)).toMatchObject({
      state: "refused",
      serverWords: expect.stringContaining(`Thread '${threadId}' does not exist`),
    });
    const refusals = events.flatMap((event) =>
      event.type === "delivery" && event.delivery.commandId === sent.commandId && event.delivery.state === "refused" ? [event.delivery.reason ?? ""] : [],
    );
    expect(refusals.length).toBeGreaterThan(0);
    for (const reason of refusals) expect(reason).toMatch(new RegExp(`^This agent (was deleted|is no longer) on ${escape(machine)}`));
    expect(messagesOf(sim, threadId, "still there?")).toEqual([]);
  }, 60_000);

  it("sent after the fleet learned it was deleted: refused before anything is sent, in the same words, also once its row has gone", async () => {
    const { sim, service, threadId, key, machine } = await idleThread({ leftRowsKeptMs: 300 });
    sim.engine.dispatch({ type: "thread.delete", commandId: "gone", threadId });
    await until(service, () => agent(service, sim, threadId)?.status === "deleted", "the fleet shows it deleted");
    const sent = (await service.request("agent.send", { key, text: "after", expectedIntent: "new-turn" })) as Delivery;
    expect(sent).toMatchObject({ state: "refused", reason: expect.stringMatching(words(machine, "deleted")) });

    await until(service, () => agent(service, sim, threadId) === undefined, "its row gone");
    const later = (await service.request("agent.send", { key, text: "later", expectedIntent: "new-turn" })) as Delivery;
    expect(later).toMatchObject({ state: "refused", reason: sent.reason });
    const interrupt = (await service.request("agent.interrupt", { key })) as Delivery;
    expect(interrupt).toMatchObject({ state: "refused", reason: sent.reason!.replace("the message was not sent", "it was not sent") });
  });

  it("sent to an archived agent: says archived, where and when, and how to message it again", async () => {
    const { sim, service, threadId, key, machine } = await idleThread();
    sim.engine.dispatch({ type: "thread.archive", commandId: "shelved", threadId });
    await until(service, () => agent(service, sim, threadId)?.lifecycle === "archived", "the fleet shows it archived");
    const sent = (await service.request("agent.send", { key, text: "wake up", expectedIntent: "new-turn" })) as Delivery;
    expect(sent).toMatchObject({ state: "refused", reason: expect.stringMatching(words(machine, "archived", " Unarchive it in T3 to message it.")) });
    expect(messagesOf(sim, threadId, "wake up")).toEqual([]);
  });
});

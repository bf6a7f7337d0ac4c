// A message in flight while its machine's T3 is upgraded in place from protocol 1 to 2 (the soak's
// soak-fork, bench/soak.ts). T3's import keeps each thread's user and assistant messages with their
// ids (docs/t3-protocols.md, "Protocol 2"), so the upgraded thread shows a message protocol 1
// stored and the fleet settles it from there. The simulator once imported threads without their
// messages: the fleet then found its message missing and sent it again, and the soak counted it
// twice across the two servers (CI, stop 35).
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import { userMessages } from "../../sim/soak-hooks";
import { idleUpstreamThread, until } from "./service.testkit";

describe("a message unconfirmed when its machine is upgraded in place", () => {
  it("is found in the upgraded thread, as T3 imports it, and settles without being sent again", async () => {
    const { sims, service, sim: p1, threadId, key } = await idleUpstreamThread();

    // T3 stores the message but neither answers the dispatch nor streams it: the fleet cannot know it arrived.
    p1.muteThreadStreams = true;
    p1.dropNextDispatch = "unanswered";
    const text = "only once across the upgrade";
    const sending = service.request("agent.send", { key, text, expectedIntent: "new-turn" }) as Promise<Delivery>;
    await until(service, () => (userMessages(p1)[threadId] ?? []).includes(text), "stored by protocol 1");
    const v2 = await sims.upgradeToV2(p1.environmentId);
    const sent = await sending;
    expect(sent.state).toBe("uncertain");

    await until(service, () => service.delivery(sent.commandId)?.state === "delivered", "found in the upgraded thread");
    expect(service.model.environment(p1.environmentId)?.protocol).toBe(2);
    // The upgraded server holds the one message protocol 1 stored, as imported (its time kept, no run of its own):
    // a resend would have started a run for it there. (A resend tried while the old connection was still
    // closing never reaches a server, and may show as a second "sending" before the upgraded thread is read.)
    const before = p1.engine.threads.get(threadId)!.messages.filter((message) => message.text === text);
    const after = v2.engine.threads.get(threadId)!.messages.filter((message) => message.text === text);
    expect(before).toHaveLength(1);
    expect(after.map(({ id, createdAt, runId }) => ({ id, createdAt, runId }))).toEqual([{ id: before[0]!.id, createdAt: before[0]!.createdAt, runId: null }]);
  });
});

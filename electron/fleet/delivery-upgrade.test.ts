// A message in flight while its machine's T3 is upgraded in place from protocol 1 to 2 (the soak's
// soak-fork, bench/soak.ts): the upgraded server shows neither the message nor its command receipt
// (sim/protocol2/server.ts, upgradeInPlace), so a resend with the same command id is not
// deduplicated. Found by the soak in CI: the fleet resent it on its own and T3 held it twice.
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import { userMessages } from "../../sim/soak-hooks";
import { UPGRADED_NOT_FOUND } from "./delivery-reasons";
import { setup, until } from "./service.testkit";

describe("a message unconfirmed when its machine is upgraded in place", () => {
  it("is never sent again on its own: the fleet offers Send again, once, and says why", async () => {
    const { sims, service } = await setup(["upstream"]);
    const p1 = sims.servers[0]!;
    const threadId = sims.createThread(p1, { title: "Worker" });
    const key = `${p1.environmentId}/${threadId}`;
    await service.request("pair.confirm", { input: p1.pairingUrl() });
    await until(service, () => service.model.agent(key)?.status === "idle", "idle");

    // T3 stores the message but neither answers the dispatch nor streams it: the fleet cannot know it arrived.
    p1.muteThreadStreams = true;
    p1.dropNextDispatch = "unanswered";
    const text = "only once across the upgrade";
    const sending = service.request("agent.send", { key, text, expectedIntent: "new-turn" }) as Promise<Delivery>;
    await until(service, () => (userMessages(p1)[threadId] ?? []).includes(text), "stored by protocol 1");
    const v2 = await sims.upgradeToV2(p1.environmentId);
    const sent = await sending;

    await until(service, () => service.delivery(sent.commandId)?.sendAgain === true, "Send again offered");
    expect(service.model.environment(p1.environmentId)?.protocol).toBe(2);
    expect(service.delivery(sent.commandId)).toMatchObject({ state: "uncertain", reason: UPGRADED_NOT_FOUND });
    // Not resent: the upgraded server holds no copy, the one T3 stored before the upgrade stays the only one.
    expect(userMessages(v2)[threadId] ?? []).not.toContain(text);

    // The user's Send again sends it once to the upgraded server.
    await service.request("delivery.recheck", { commandId: sent.commandId });
    await until(service, () => ["delivered", "answered"].includes(service.delivery(sent.commandId)?.state ?? ""), "sent again and shown");
    expect((userMessages(v2)[threadId] ?? []).filter((stored) => stored === text)).toHaveLength(1);
  });
});

// A send whose message left the transcript's tail still settles as it should (issue 43): a followed
// thread holds only its newest items (shared/fleet/transcript-tail.ts), so a turn with hundreds of
// activities pushes the message out before the reply comes. The delivery rules still find it by id
// (its anchor) and the reply of the run it started; the open view shows the tail, says that earlier
// items are in T3, and never shows the anchors.
import { describe, expect, it } from "vitest";
import type { AgentDetail } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import { FOLLOWED_TAIL, OPEN_VIEW_TAIL } from "../../shared/fleet/transcript-tail";
import { agent, followersOf, pairAll, setup, until } from "./service.testkit";

describe("a delivery whose message left the transcript's tail", () => {
  it("settles answered with the turn it started, and the open view shows the tail after a note", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Explorer" });
    await pairAll(service, sims);
    await until(service, () => agent(service, sim, threadId)?.status === "idle", "idle");
    const key = `${sim.environmentId}/${threadId}`;
    // 200 subagents: 600 activities between the message and its reply, more than the tail holds.
    sim.scriptNextTurn(threadId, {
      steps: [
        { kind: "subagents", count: 200 },
        { kind: "reply", text: "Every area is explored." },
      ],
    });
    const sent = (await service.request("agent.send", { key, text: "Explore every area", expectedIntent: "new-turn" })) as Delivery;
    await until(service, () => service.delivery(sent.commandId)?.state === "answered", "answered");
    expect(service.delivery(sent.commandId)!.observed).toMatchObject({ outcome: "new-turn" });

    const view = (await service.request("agent.open", { key })) as AgentDetail;
    expect(view.earlier).toBe(true);
    expect(view.items.length).toBeLessThanOrEqual(OPEN_VIEW_TAIL.items * 2);
    expect(view.items.some((item) => item.id === sent.messageId)).toBe(false);
    expect(view.items.findLast((item) => item.type === "message")).toMatchObject({ role: "assistant", text: "Every area is explored." });
    // Followed for the send, the thread held only what its row and the delivery rules read; open, it
    // is read afresh, and the view gets the open view's tail.
    // The first answer is what it held then, never an empty view while the snapshot comes.
    expect(view.loaded).toBe(true);
    expect(view.items.length).toBeLessThanOrEqual(FOLLOWED_TAIL.items + FOLLOWED_TAIL.trimBatch);
    const held = () => {
      const detail = followersOf(service, sim.environmentId).get(threadId)!.detail;
      return detail.items.length - (detail.anchored ?? 0);
    };
    await until(service, () => held() > FOLLOWED_TAIL.items + FOLLOWED_TAIL.trimBatch, "the open view's tail");
    const reopened = (await service.request("agent.open", { key })) as AgentDetail;
    expect(reopened.items.length).toBe(held());
    expect(reopened.items.length).toBeGreaterThanOrEqual(OPEN_VIEW_TAIL.items);
    // Closed, it goes back to holding only what the fleet reads (if it is still followed at all).
    await service.request("agent.close", { key });
    const followed = followersOf(service, sim.environmentId).get(threadId);
    if (followed) expect(held()).toBeLessThanOrEqual(FOLLOWED_TAIL.items);
    // The history's facts stay: all 200 subagents, completed.
    await until(service, () => agent(service, sim, threadId)?.subagents.length === 200, "200 subagents");
    expect(agent(service, sim, threadId)!.subagents.every((subagent) => subagent.status === "completed")).toBe(true);
  });
});

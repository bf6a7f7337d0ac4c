// A send whose message left the transcript's tail still settles as it should (issue 43): a followed
// thread holds only its newest items (shared/fleet/transcript-tail.ts), so a turn with hundreds of
// activities pushes the message out before the reply comes. The delivery rules still find it by id
// (its anchor) and the reply of the run it started; the open view shows the tail, says that earlier
// items are in T3, and never shows the anchors.
import { describe, expect, it } from "vitest";
import type { AgentDetail } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import { TRANSCRIPT_TAIL_ITEMS } from "../../shared/fleet/transcript-tail";
import { agent, pairAll, setup, until } from "./service.testkit";

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
    expect(view.items.length).toBeLessThanOrEqual(TRANSCRIPT_TAIL_ITEMS * 2);
    expect(view.items.some((item) => item.id === sent.messageId)).toBe(false);
    expect(view.items.findLast((item) => item.type === "message")).toMatchObject({ role: "assistant", text: "Every area is explored." });
    // The history's facts stay: all 200 subagents, completed.
    await until(service, () => agent(service, sim, threadId)?.subagents.length === 200, "200 subagents");
    expect(agent(service, sim, threadId)!.subagents.every((subagent) => subagent.status === "completed")).toBe(true);
  });
});

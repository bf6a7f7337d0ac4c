// Agent details against simulators: an open agent's transcript, lagging streams re-subscribed,
// deltas instead of whole transcripts.
import { describe, expect, it } from "vitest";
import { type AgentDetail, applyDetailDelta } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import { agent, pairAll, setup, until } from "./service.testkit";

describe("agent details", () => {
  it("a thread stream that falls behind the shell is subscribed again and catches up", async () => {
    const { sims, service } = await setup(["upstream"], { streamLagMs: 150 });
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Quiet stream" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await service.request("agent.open", { key });
    await until(service, () => service.detail(key).loaded, "transcript loaded");
    sim.muteThreadStreams = true; // live events stop, the shell keeps moving
    sims.sendMessage(sim, threadId, "are you there");
    await until(
      service,
      () => service.detail(key).items.some((m) => m.type === "message" && m.role === "assistant" && m.text.includes("are you there")),
      "caught up by resubscribing",
    );
    expect(sim.muteThreadStreams).toBe(true);
  });

  it("an open agent gets its transcript once, then only what changed; closing stops the updates", async () => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Chatty", text: "first question" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => agent(service, sim, threadId)?.status === "idle" && agent(service, sim, threadId)!.updatedAt > "", "first turn done");
    let shown = (await service.request("agent.open", { key })) as AgentDetail;
    let history: string[] = [];
    // Apply what the UI receives, as the renderer's store does.
    const applied = () => {
      for (const event of events.splice(0)) {
        if (event.type === "agent.detail" && event.detail.key === key) shown = event.detail;
        if (event.type === "agent.detailDelta" && event.delta.key === key) {
          expect(event.delta.items.map((m) => m.id).filter((id) => history.includes(id))).toEqual([]); // never the old transcript again
          shown = applyDetailDelta(shown, event.delta);
        }
      }
      return shown;
    };
    await until(
      service,
      () => applied().items.some((m) => m.type === "message" && m.role === "assistant" && m.text.includes("first question") && !m.streaming),
      "history shown",
    );
    history = shown.items.map((m) => m.id);

    const talk = (await service.request("agent.send", { key, text: "talk to me", expectedIntent: "new-turn" })) as Delivery;
    await until(
      service,
      () => applied().items.some((m) => m.type === "message" && m.role === "assistant" && m.text.includes("talk to me") && !m.streaming),
      "reply shown",
    );
    expect(applied().items).toEqual(service.detail(key).items);

    await until(service, () => service.delivery(talk.commandId)?.state === "answered" && agent(service, sim, threadId)?.status === "idle", "turn over");
    applied(); // everything sent while open
    await service.request("agent.close", { key });
    // The thread is still followed for this send's delivery, but the closed view hears nothing of it.
    const after = (await service.request("agent.send", { key, text: "after close", expectedIntent: "new-turn" })) as Delivery;
    expect(after.state).not.toBe("refused");
    await until(service, () => service.delivery(after.commandId)?.state === "answered", "answered after close");
    expect(events.filter((e) => (e.type === "agent.detail" && e.detail.key === key) || (e.type === "agent.detailDelta" && e.delta.key === key))).toEqual([]);
  });

  it("a reply streamed token by token reaches the open view as the text it gained, and reads the same as the service's", async () => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    sim.agents.options.tokenStreaming = true; // word-by-word deltas, as upstream T3 with legacy token streaming
    const threadId = sims.createThread(sim, { title: "Streamer" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    let shown = (await service.request("agent.open", { key })) as AgentDetail;
    let appendedTexts = 0;
    const applied = () => {
      for (const event of events.splice(0)) {
        if (event.type === "agent.detail" && event.detail.key === key) shown = event.detail;
        if (event.type === "agent.detailDelta" && event.delta.key === key) {
          appendedTexts += event.delta.appended?.length ?? 0;
          shown = applyDetailDelta(shown, event.delta);
        }
      }
      return shown;
    };
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    await service.request("agent.send", { key, text: words, expectedIntent: "new-turn" });
    await until(
      service,
      () => applied().items.some((m) => m.type === "message" && m.role === "assistant" && m.text.includes("word59") && !m.streaming),
      "reply shown",
    );
    expect(applied().items).toEqual(service.detail(key).items);
    expect(appendedTexts).toBeGreaterThan(0);
  });

  it("another page opening the agent while its reply streams costs the first page none of it", async () => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    sim.agents.options.tokenStreaming = true;
    const threadId = sims.createThread(sim, { title: "Streamer" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    let shown = (await service.request("agent.open", { key }, "page-a")) as AgentDetail;
    const applied = () => {
      for (const event of events.splice(0)) {
        if (event.type === "agent.detail" && event.detail.key === key) shown = event.detail;
        if (event.type === "agent.detailDelta" && event.delta.key === key) shown = applyDetailDelta(shown, event.delta);
      }
      return shown;
    };
    // The second page opens in the very task that changed the agent, before that change went out to the first.
    let opens = 0;
    service.model.subscribe((change) => {
      if (opens < 5 && change.agents.some((view) => view.key === key)) {
        opens++;
        void service.request("agent.open", { key }, `page-b${opens}`);
      }
    });
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    await service.request("agent.send", { key, text: words, expectedIntent: "new-turn" }, "page-a");
    await until(
      service,
      () => applied().items.some((m) => m.type === "message" && m.role === "assistant" && m.text.includes("word59") && !m.streaming),
      "reply shown",
    );
    expect(opens).toBe(5);
    expect(applied().items).toEqual(service.detail(key).items);
  });
});

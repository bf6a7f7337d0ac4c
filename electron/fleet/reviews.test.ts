// Marking an agent's changes reviewed through the fleet service (issue 40): the mark, and its undo,
// are kept on disk as acknowledgements and snoozes are, so a restart of the service brings back
// neither a reviewed item nor one the user brought back.
import { describe, expect, it } from "vitest";
import type { BridgeResults } from "../../shared/bridge/contract";
import { trayModel } from "../../shared/fleet/tray";
import { FleetService } from "./service";
import { FAST, cleanups, pairAll, setup, until } from "./service.testkit";

describe("reviewed changes", () => {
  it("a reviewed turn stays reviewed across a restart of the service, an undo stays undone, and a later turn with changes needs the user again", async () => {
    const { sims, service, dataDir, secrets } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    await pairAll(service, sims);
    await service.request("settings.update", { finishedWithChangesInInbox: true });
    const threadId = sims.createThread(sim, { title: "Refactor the parser", provider: "codex", text: "Refactor it #edit:2" });
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => service.model.agent(key)?.review === true, "the finished turn's changes await review");
    expect(service.model.counts().needsYou).toBe(1);

    const marked = (await service.request("agent.review", { key })) as BridgeResults["agent.review"];
    expect(marked).toEqual({ key, turnCount: 1, previous: null });
    expect(service.model.agent(key)!.review).toBeFalsy();
    expect(service.model.counts().needsYou).toBe(0);

    /** Stops the service that runs and starts another on the same data folder, as a restart does. */
    const restart = async (running: FleetService): Promise<FleetService> => {
      await running.stop();
      const reopened = await FleetService.start({ dataDir, secrets, ...FAST });
      cleanups.push(() => reopened.stop());
      await until(reopened, () => reopened.model.agent(key)?.status === "idle", "the agent back after the restart");
      // The user opens the agent: its thread is read again, with the turn's files (what the review is about).
      await reopened.request("agent.open", { key }, "window");
      await until(
        reopened,
        () =>
          reopened.model.environment(sim.environmentId)?.connection.phase === "online" &&
          reopened.model.agent(key)?.status === "idle" &&
          reopened.model.agent(key)?.changes?.at(-1)?.turnCount === 1,
        "the agent and its changes back after the restart",
      );
      return reopened;
    };

    const afterMark = await restart(service);
    expect(afterMark.model.agent(key)!.review).toBeFalsy();
    expect(afterMark.model.counts().needsYou).toBe(0);
    const tray = trayModel(afterMark.model.environments(), afterMark.model.agents(), false);
    expect(tray.items.filter((item) => item.kind === "agent")).toEqual([]);

    // The receipt's Undo: the changes await review again, and still do after another restart.
    await afterMark.request("agent.unreview", { key, turnCount: marked.previous });
    expect(afterMark.model.agent(key)!.review).toBe(true);
    const afterUndo = await restart(afterMark);
    expect(afterUndo.model.agent(key)!.review).toBe(true);
    expect(afterUndo.model.counts().needsYou).toBe(1);

    // Reviewed again, then a later turn changes files: that turn needs the user; the earlier mark does not hide it.
    await afterUndo.request("agent.review", { key });
    expect(afterUndo.model.counts().needsYou).toBe(0);
    sims.sendMessage(sim, threadId, "And the tests #edit:1");
    await until(
      afterUndo,
      () => afterUndo.model.agent(key)?.changes?.at(-1)?.turnCount === 2 && afterUndo.model.agent(key)?.review === true,
      "the second turn's changes await review",
    );
    expect(afterUndo.model.counts().needsYou).toBe(1);
  });
});

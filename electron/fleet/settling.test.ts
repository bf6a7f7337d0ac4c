// A thread whose turn ended is followed only until its stream shows what T3 reports after a turn
// (its checkpoint and token figures), not for the whole settling window (SETTLE_FOLLOW_MS, 30 s):
// each followed thread holds its whole transcript (issue 23, the hour-long soak's heap). Where a
// checkpoint may still come (protocol 1's first turn in a folder with none yet, as recorded outside
// git repositories) it stays followed for the window (docs/t3-protocols.md, "Changes and usage").
import { describe, expect, it, vi } from "vitest";
import { createV2Thread } from "../../sim/protocol2/fleet-hooks";
import { followersOf, setup, until } from "./service.testkit";

async function pairedSim(generation: "upstream" | "v2") {
  const { sims, service } = await setup([generation]);
  const sim = (sims.v2Servers[0] ?? sims.servers[0])!;
  await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(service, () => service.model.environment(sim.environmentId)?.connection.phase === "online", "online");
  const v2 = sims.v2Servers[0];
  const p1 = sims.servers[0];
  const start = (text: string) =>
    v2 ? createV2Thread(v2, { title: "Worker", provider: "codex", text }) : sims.createThread(p1!, { title: "Worker", provider: "codex", text });
  return { service, sim, sims, start };
}

describe("a thread whose turn ended", () => {
  it.each(["upstream", "v2"] as const)("%s: is let go once its checkpoint and usage are shown, well within the settling window", async (generation) => {
    const { service, sim, start } = await pairedSim(generation);
    const threadId = start("Edit two files #edit:2");
    const key = `${sim.environmentId}/${threadId}`;
    const followers = followersOf(service, sim.environmentId);
    await until(service, () => followers.isFollowing(threadId), "followed while its turn runs");
    await until(service, () => service.model.agent(key)?.status === "idle", "the turn ended");
    // Letting a stream go publishes nothing, so this one check polls; it gives up after 15 s, half the settling window.
    await vi.waitFor(() => expect(followers.isFollowing(threadId), "no longer followed after the turn").toBe(false), { timeout: 15_000, interval: 20 });
    const agent = service.model.agent(key)!;
    expect(agent.changes?.at(-1)).toMatchObject({ turnCount: 1, status: "ready", files: [expect.anything(), expect.anything()] });
    expect(agent.usage?.contextUsed).toBeGreaterThan(0);
  });

  it("upstream: with no checkpoint coming (not a git repository) it stays followed for the window after its first turn, not after later ones", async () => {
    const { service, sim, sims, start } = await pairedSim("upstream");
    const threadId = start("Just answer");
    const key = `${sim.environmentId}/${threadId}`;
    const followers = followersOf(service, sim.environmentId);
    const turnEnded = (usedBefore: number) => () =>
      service.model.agent(key)?.status === "idle" && (service.model.agent(key)?.usage?.contextUsed ?? 0) > usedBefore;
    await until(service, turnEnded(0), "the first turn ended, its usage shown");
    expect(service.model.agent(key)!.changes).toBeUndefined();
    // Whether this workspace gets checkpoints is not known yet.
    expect(followers.isFollowing(threadId, "settling")).toBe(true);
    const usedAfterFirst = service.model.agent(key)!.usage!.contextUsed!;
    sims.sendMessage(sims.servers[0]!, threadId, "And again");
    await until(service, turnEnded(usedAfterFirst), "the second turn ended, its usage shown");
    await vi.waitFor(() => expect(followers.isFollowing(threadId), "no longer followed after the second turn").toBe(false), { timeout: 15_000, interval: 20 });
    expect(service.model.agent(key)!.changes).toBeUndefined();
  });
});

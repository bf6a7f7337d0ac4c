// Thread churn on both protocols: threads created, run, deleted and archived while the fleet follows
// them. Counted at the servers: every thread stream left open is one the fleet still follows, once;
// none is left behind for a thread the fleet stopped following (issue 23, a day at the desk). (A
// followed thread may have no stream: T3 0.0.42 ends an archived or deleted thread's stream.)
import { describe, expect, it, vi } from "vitest";
import type { SimHost } from "../../sim/host";
import { createV2Thread } from "../../sim/protocol2/fleet-hooks";
import { changeThread } from "../../sim/soak-hooks";
import { followersOf, setup, until } from "./service.testkit";

describe("thread streams under churn", () => {
  it("every thread stream open at a server is one the fleet follows, once: none left behind by threads that came and went", async () => {
    const { sims, service } = await setup(["upstream", "v2"]);
    const p1 = sims.servers[0]!;
    const v2 = sims.v2Servers[0]!;
    for (const sim of [p1, v2]) await service.request("pair.confirm", { input: sim.pairingUrl() });
    await until(service, () => [p1, v2].every((sim) => service.model.environment(sim.environmentId)?.connection.phase === "online"), "both online");

    const followedAt = (environmentId: string) => (threadId: string) => followersOf(service, environmentId).isFollowing(threadId);
    for (let round = 0; round < 12; round++) {
      const running = [
        { sim: p1 as SimHost, id: sims.createThread(p1, { title: `p1 ${round}`, text: "work #slow" }) },
        { sim: v2 as SimHost, id: createV2Thread(v2, { title: `v2 ${round}`, provider: "codex", text: "work #hold" }) },
      ];
      // Followed while they run; then deleted or archived mid-run. (The V2 simulator refuses to archive a
      // thread with a run going; T3's V2 engine archives it and detaches its provider session.)
      await until(
        service,
        () => running.every(({ sim, id }) => followedAt(sim === p1 ? p1.environmentId : v2.environmentId)(id)),
        `round ${round}: both followed`,
      );
      changeThread(p1, running[0]!.id, round % 2 ? "delete" : "archive");
      changeThread(v2, running[1]!.id, "delete");
      // And one created and deleted at once, which the fleet may see only in passing.
      const brief = createV2Thread(v2, { title: `brief ${round}`, provider: "codex", text: "work #hold" });
      changeThread(v2, brief, "delete");
    }

    // A stream the fleet just closed is gone once the server has read the Interrupt: the counts settle.
    await vi.waitFor(
      () => {
        for (const sim of [p1, v2] as SimHost[]) {
          const environmentId = sim === p1 ? p1.environmentId : v2.environmentId;
          const open = sim.openThreadStreams();
          expect(
            open.filter((threadId) => !followedAt(environmentId)(threadId)),
            `${environmentId}: streams nobody follows`,
          ).toEqual([]);
          expect(new Set(open).size, `${environmentId}: one stream per thread`).toBe(open.length);
        }
      },
      { timeout: 10_000, interval: 50 },
    );
  });
});

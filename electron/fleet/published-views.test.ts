import { afterEach, describe, expect, it, vi } from "vitest";
import type { FleetChange } from "../../shared/fleet/model";
import type { AgentView } from "../../shared/fleet/types";
import { agentView } from "../../shared/fleet/views.testkit";
import { ACTIVITY_PUBLISH_MS, PublishedViews } from "./published-views";

const change = (agents: AgentView[], removed: string[] = []): FleetChange => ({ agents, removed, environments: [], removedEnvironments: [] });

function publisher() {
  const published: FleetChange[] = [];
  const views = new PublishedViews((change) => published.push(change));
  return { views, published, sentTitles: () => published.flatMap((c) => c.agents.map((a) => `${a.title}@${a.lastActivityAt}`)) };
}

afterEach(() => vi.useRealTimers());

describe("what the service publishes", () => {
  it("publishes a view when something shown changed, and nothing for a view that did not change", () => {
    const { views, published, sentTitles } = publisher();
    const first = agentView("t", "running", { title: "A", lastActivityAt: "2026-11-29T10:00:00.000Z" });
    views.changed(change([first]));
    views.changed(change([{ ...first }]));
    views.changed(change([{ ...first, pending: [...first.pending], capabilities: { ...first.capabilities } }]));
    views.changed(change([{ ...first, title: "B" }]));
    expect(sentTitles()).toEqual(["A@2026-11-29T10:00:00.000Z", "B@2026-11-29T10:00:00.000Z"]);
    expect(published).toHaveLength(2);
  });

  it("holds changes of activity time alone and publishes the latest of them together on one tick", () => {
    vi.useFakeTimers();
    const { views, published, sentTitles } = publisher();
    const a = agentView("a", "running", { title: "A", lastActivityAt: "2026-11-29T10:00:00.000Z" });
    const b = agentView("b", "running", { title: "B", lastActivityAt: "2026-11-29T10:00:00.000Z" });
    views.changed(change([a, b]));
    for (let second = 1; second <= 4; second++) {
      const at = `2026-11-29T10:00:0${second}.000Z`;
      views.changed(
        change([
          { ...a, lastActivityAt: at, updatedAt: at },
          { ...b, lastActivityAt: at, updatedAt: at },
        ]),
      );
    }
    expect(published).toHaveLength(1);
    vi.advanceTimersByTime(ACTIVITY_PUBLISH_MS);
    expect(published).toHaveLength(2);
    expect(sentTitles().slice(2)).toEqual(["A@2026-11-29T10:00:04.000Z", "B@2026-11-29T10:00:04.000Z"]);
    // Nothing held: no timer keeps running.
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a shown change publishes at once with the latest times and drops what was held for that agent", () => {
    vi.useFakeTimers();
    const { views, published, sentTitles } = publisher();
    const a = agentView("a", "running", { title: "A", lastActivityAt: "2026-11-29T10:00:00.000Z" });
    views.changed(change([a]));
    views.changed(change([{ ...a, lastActivityAt: "2026-11-29T10:00:01.000Z" }]));
    views.changed(change([{ ...a, status: "needs-approval", lastActivityAt: "2026-11-29T10:00:02.000Z" }]));
    vi.advanceTimersByTime(ACTIVITY_PUBLISH_MS);
    expect(sentTitles()).toEqual(["A@2026-11-29T10:00:00.000Z", "A@2026-11-29T10:00:02.000Z"]);
    expect(published[1]!.agents[0]!.status).toBe("needs-approval");
  });

  it("removals are published and forget the agent: it comes back as new", () => {
    const { views, published } = publisher();
    const a = agentView("a", "idle", { title: "A" });
    views.changed(change([a]));
    views.changed(change([], [a.key]));
    views.changed(change([a]));
    expect(published.map((c) => [c.agents.length, c.removed.length])).toEqual([
      [1, 0],
      [0, 1],
      [1, 0],
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { TRAY_AGENT_LIMIT, tabTitle, tabVariant, trayModel, trayVariant } from "./tray";
import type { ConnectionPhase, FleetCounts } from "./types";
import { fleetCounts, needFingerprint } from "./views";
import { ONLINE, agentView, environmentView } from "./views.testkit";

const counts = (patch: Partial<FleetCounts>): FleetCounts => ({ byStatus: {}, needsYou: 0, hostsDown: 0, environments: 1, agents: 0, ...patch });
const NOW = Date.parse("2026-11-29T10:00:00.000Z");

describe("tray", () => {
  it.each([
    [counts({ environments: 0 }), "nothing-paired"],
    [counts({ byStatus: { failed: 1, running: 3 }, needsYou: 1, hostsDown: 1 }), "failed"],
    [{ ...counts({ byStatus: { failed: 1 }, needsYou: 0 }), failedNeedingYou: 0 }, "all-clear"],
    [counts({ byStatus: { "needs-input": 1 }, needsYou: 1, hostsDown: 1 }), "needs-you"],
    [counts({ byStatus: { unknown: 4 }, hostsDown: 1 }), "host-offline"],
    [counts({ byStatus: { running: 2, idle: 1 } }), "working"],
    [counts({ byStatus: { idle: 3 } }), "all-clear"],
  ] as const)("%o → %s", (value, variant) => {
    expect(trayVariant(value)).toBe(variant);
  });

  it("lists machines with counts, the agents that need you (each opens its thread), and the actions", () => {
    const env = environmentView({ counts: { running: 2, "needs-approval": 1 } });
    const agents = [agentView("a", "needs-approval", { title: "Migrate" }), agentView("b", "running")];
    const model = trayModel([env], agents, false, NOW);
    expect(model.tooltip).toContain("1 needs you");
    expect(model.items).toContainEqual({ kind: "label", label: "studio: online · 1 needs approval, 2 running" });
    expect(model.items).toContainEqual({ kind: "agent", agentKey: "e/a", label: "Migrate (studio) — needs approval" });
    expect(model.items.filter((item) => item.kind === "action").map((item) => item.kind === "action" && item.command)).toEqual([
      "app.open",
      "pairing.open",
      "notifications.pause",
      "app.quit",
    ]);
  });

  it("says what a machine's connection is doing in the window's words", () => {
    const offline = environmentView({
      label: "vm",
      connection: { phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt: new Date(NOW + 12_000).toISOString(), attempt: 2, error: "refused" },
    });
    const unauthorized = environmentView({
      environmentId: "u",
      label: "box",
      connection: { phase: "unauthorized", since: "t", lastConfirmedAt: null, error: "revoked" },
    });
    const model = trayModel([offline, unauthorized], [], false, NOW);
    expect(model.items).toContainEqual({ kind: "label", label: "vm: offline · retrying in 12 s · no agents" });
    expect(model.items).toContainEqual({ kind: "label", label: "box: needs pairing again · no agents" });
  });

  it("an acknowledged failure and a stalled run: one leaves the menu, the other joins it", () => {
    const acknowledged = { ...agentView("f", "failed", { title: "Old failure" }), acknowledged: true };
    const stalled = agentView("s", "running", { title: "Quiet run", stalled: true });
    const model = trayModel([environmentView()], [acknowledged, stalled], false, NOW);
    expect(model.items.filter((item) => item.kind === "agent").map((item) => item.kind === "agent" && item.label)).toEqual(["Quiet run (studio) — stalled"]);
    expect(model.variant).toBe("needs-you");
  });

  it("a run the provider holds up (capacity) is listed as held up, not failed", () => {
    const heldUp = agentView("h", "running", { title: "Capacity run", stalled: true, heldUp: true, reason: "Free-tier capacity limit reached" });
    const model = trayModel([environmentView()], [heldUp], false, NOW);
    expect(model.items.filter((item) => item.kind === "agent").map((item) => item.kind === "agent" && item.label)).toEqual(["Capacity run (studio) — held up"]);
  });

  it("counts by the one rule: T3's snoozes apart, an away machine's needs kept as of (held up stays held up), failures red", () => {
    const snoozed = agentView("z", "needs-input", { title: "Snoozed question", snoozedUntil: new Date(NOW + 60_000).toISOString() });
    const away = {
      ...agentView("h", "running", { title: "Capacity run", stalled: true, heldUp: true }),
      status: "unknown" as const,
      asOf: new Date(NOW - 60_000).toISOString(),
    };
    const failedAway = { ...agentView("f", "failed", { title: "Broke" }), status: "unknown" as const, asOf: new Date(NOW - 60_000).toISOString() };
    const offline = environmentView({ connection: { phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt: "t", attempt: 1, error: "refused" } });
    const model = trayModel([offline], [snoozed, away, failedAway], false, NOW);
    expect(model.tooltip).toContain("2 need you");
    expect(model.variant).toBe("failed");
    const labels = model.items.filter((item) => item.kind === "agent").map((item) => item.kind === "agent" && item.label);
    expect(labels).toEqual([
      expect.stringMatching(/^Broke \(studio\) — failed, as of \d\d:\d\d$/),
      expect.stringMatching(/^Capacity run \(studio\) — held up, as of \d\d:\d\d$/),
    ]);
    expect(trayModel([offline], [snoozed], false, NOW + 60_000).tooltip).toContain("1 needs you");
  });

  it("a machine away counts its agents as of its last confirmation, never as a bare unknown (issue 40 point 9)", () => {
    const lastConfirmed = new Date(NOW - 60_000).toISOString();
    const offline = environmentView({
      connection: {
        phase: "offline",
        since: lastConfirmed,
        lastConfirmedAt: lastConfirmed,
        nextAttemptAt: new Date(NOW + 5_000).toISOString(),
        attempt: 1,
        error: "refused",
      },
      counts: { unknown: 7 },
    });
    const line = trayModel([offline], [], false, NOW).tooltip.split("\n")[1]!;
    expect(line).toMatch(/^studio: offline · retrying in 5 s · 7 agents as of \d\d:\d\d$/);
    expect(line).not.toContain("unknown");
  });

  it("counts the snoozes T3 Fleet keeps apart, as every window does: until it changes, and a time T3 refused until it passes", () => {
    const failed = agentView("u", "failed", { title: "Flaky" });
    const untilChanged = { ...failed, fleetSnooze: { until: null, fingerprint: needFingerprint(failed) } };
    const question = agentView("q", "needs-input", { title: "Question" });
    const refused = { ...question, fleetSnooze: { until: NOW + 60_000, fingerprint: needFingerprint(question), note: "T3 refused it: pending request" } };
    const agentKeys = (model: ReturnType<typeof trayModel>) => model.items.flatMap((item) => (item.kind === "agent" ? [item.agentKey] : []));
    const snoozedNow = trayModel([environmentView()], [untilChanged, refused], false, NOW);
    expect(snoozedNow.variant).not.toBe("failed");
    expect(snoozedNow.tooltip).not.toContain("need");
    expect(agentKeys(snoozedNow)).toEqual([]);
    // The time passed for one; what the other needs changed (its snooze was for another need).
    const retried = { ...untilChanged, reason: "a new error" };
    const later = trayModel([environmentView()], [retried, refused], false, NOW + 60_000);
    expect(later.tooltip).toContain("2 need you");
    expect(agentKeys(later).sort()).toEqual([question.key, failed.key].sort());
  });

  it("the tab's title says the count first, once, and nothing that flaps with a connection; (N) stays while the service is away", () => {
    expect(tabTitle(7, true)).toBe("7 need you — T3 Fleet");
    expect(tabTitle(7, true).match(/7/g), "the count is said once, not as (7) 7 need you").toHaveLength(1);
    expect(tabTitle(3, true)).toBe("3 need you — T3 Fleet");
    expect(tabTitle(1, true)).toBe("1 needs you — T3 Fleet");
    expect(tabTitle(0, true)).toBe("T3 Fleet — nothing needs you");
    expect(tabTitle(2, false)).toBe("(2) T3 Fleet — service not reachable");
  });

  describe("the tab's icon and title follow what needs you, never a machine that flaps", () => {
    const OFFLINE: ConnectionPhase = { phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt: "t", attempt: 1, error: "refused" };
    /** The fleet as the window sees it with the flapping machine "b" online or away (its agents then judged as of their last contact). */
    const fleet = (flapping: "online" | "away", agents: { id: string; status: "running" | "idle" | "failed" | "needs-approval"; stalled?: boolean }[]) => {
      const envs = [
        environmentView({ environmentId: "a", label: "steady" }),
        environmentView({ environmentId: "b", label: "flaky", connection: flapping === "online" ? ONLINE : OFFLINE }),
      ];
      const views = agents.map(({ id, status, stalled = false }) => {
        const environmentId = id.startsWith("b") ? "b" : "a";
        const away = environmentId === "b" && flapping === "away";
        return agentView(id, status, {
          key: `${environmentId}/${id}`,
          environmentId,
          stalled,
          ...(away && { status: "unknown" as const, lastKnownStatus: status, asOf: "t" }),
        });
      });
      const counts = fleetCounts(envs, views);
      return { tab: [tabVariant(counts, true), tabTitle(counts.needsYou, true)], tray: trayVariant(counts) };
    };

    it.each([
      [
        "nothing needs you, the flapping machine's agents run",
        [
          { id: "b1", status: "running" },
          { id: "a1", status: "idle" },
        ],
        ["all-clear", "T3 Fleet — nothing needs you"],
      ],
      ["nothing needs you, every agent idle", [{ id: "b1", status: "idle" }], ["all-clear", "T3 Fleet — nothing needs you"]],
      ["an approval on the flapping machine", [{ id: "b1", status: "needs-approval" }], ["needs-you", "1 needs you — T3 Fleet"]],
      ["a stall on the flapping machine", [{ id: "b1", status: "running", stalled: true }], ["needs-you", "1 needs you — T3 Fleet"]],
      [
        "a failure on the flapping machine",
        [
          { id: "b1", status: "failed" },
          { id: "a1", status: "running" },
        ],
        ["failed", "1 needs you — T3 Fleet"],
      ],
    ] as const)("%s: the same online and away", (_, agents, expected) => {
      const online = fleet("online", [...agents]);
      const away = fleet("away", [...agents]);
      expect(online.tab).toEqual(expected);
      expect(away.tab).toEqual(expected);
    });

    it("the tray still shows the machine away (its icon has a variant for it; the tab's does not)", () => {
      const agents = [{ id: "b1", status: "running" as const }];
      expect([fleet("online", agents).tray, fleet("away", agents).tray]).toEqual(["working", "host-offline"]);
    });

    it("changes when a need does, and says when the service is lost", () => {
      expect(tabVariant({ environments: 0, needsYou: 0, failedNeedingYou: 0 }, true)).toBe("nothing-paired");
      expect(tabVariant({ environments: 2, needsYou: 0, failedNeedingYou: 0 }, true)).toBe("all-clear");
      expect(tabVariant({ environments: 2, needsYou: 1, failedNeedingYou: 0 }, true)).toBe("needs-you");
      expect(tabVariant({ environments: 2, needsYou: 2, failedNeedingYou: 1 }, true)).toBe("failed");
      expect(tabVariant({ environments: 2, needsYou: 2, failedNeedingYou: 1 }, false)).toBe("service-lost");
    });
  });

  it("counts and lists an agent that finished with changes not reviewed, as the window does (issue 40)", () => {
    const review = agentView("r", "idle", { title: "Refactor", review: true });
    const model = trayModel([environmentView({ counts: { idle: 1 } })], [review], false, NOW);
    expect(model.variant).toBe("needs-you");
    expect(model.tooltip).toContain("1 needs you");
    expect(model.items).toContainEqual(expect.objectContaining({ kind: "agent", agentKey: "e/r" }));
    expect(tabTitle(fleetCounts([environmentView()], [review]).needsYou, true)).toBe("1 needs you — T3 Fleet");
  });

  it("caps the agents listed and says how many more", () => {
    const agents = Array.from({ length: TRAY_AGENT_LIMIT + 3 }, (_, i) => agentView(`t${String(i).padStart(2, "0")}`, "failed"));
    const model = trayModel([environmentView()], agents, true, NOW);
    expect(model.items.filter((item) => item.kind === "agent")).toHaveLength(TRAY_AGENT_LIMIT);
    expect(model.items).toContainEqual({ kind: "label", label: "…and 3 more" });
    expect(model.items).toContainEqual({ kind: "action", label: "Resume notifications", command: "notifications.resume" });
  });
});

// A server that sends figures out of range (issue 43): a checkpoint's line counts, a usage report
// and a transcript item with negative, fractional, unsafe or non-numeric counts, on each protocol.
// What does not decode costs that figure alone ("not reported"): the machine stays online, every
// other agent keeps its row, and the same report's good figures are kept.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { AgentDetail, BridgeEvent } from "../../shared/bridge/contract";
import { contextWords } from "../../shared/fleet/changes-usage";
import type { AgentView } from "../../shared/fleet/types";
import { HOSTILE_FIGURES } from "../../shared/t3/hostile-text.testkit";
import { createV2Thread, sendV2Message } from "../../sim/protocol2/fleet-hooks";
import type { FleetService } from "./service";
import { pairAll, setup, until } from "./service.testkit";

const { huge, negative, fraction, unsafe, maxSafe, word } = HOSTILE_FIGURES;
/**
 * Pings once a second, not every 100 ms: the machine must stay online through what it sent, and a
 * ping missed while this busy machine is unscheduled is no part of that (a decode failure ends the
 * connection at once, whatever the pings).
 */
const TUNING = { socket: { pingIntervalMs: 1_000, openTimeoutMs: 2_000 } };

/** Every phase the machine's row showed in the events from `from` on. */
function phasesSince(events: BridgeEvent[], from: number, environmentId: string): string[] {
  return events
    .slice(from)
    .flatMap((event) => (event.type === "fleet.delta" ? event.environments.filter((view) => view.environmentId === environmentId) : []))
    .map((view) => view.connection.phase);
}

/** What must not change on a bystander: its row, its status and its title. */
const rowOf = (view: AgentView | undefined) => view && { key: view.key, status: view.status, title: view.title, parent: view.parentThreadId };

/** Waits for `shown` or for the machine to leave `online`, whichever comes first, so a regression fails at once. */
async function shownWhileOnline(service: FleetService, environmentId: string, shown: () => boolean, what: string): Promise<void> {
  await until(service, () => shown() || service.model.environment(environmentId)?.connection.phase !== "online", what);
  const connection = service.model.environment(environmentId)?.connection;
  expect(connection?.phase, `the machine while ${what}: ${JSON.stringify(connection)}`).toBe("online");
  expect(shown(), what).toBe(true);
}

async function expectHostileFiguresNotReported(service: FleetService, environmentId: string, key: string): Promise<void> {
  const view = () => service.model.agent(key);
  await shownWhileOnline(
    service,
    environmentId,
    () => view()?.changes?.some((turn) => turn.files.some((file) => file.path === "hostile-a.ts")) === true,
    "the hostile checkpoint",
  );
  const files = view()!.changes!.find((turn) => turn.files.some((file) => file.path === "hostile-a.ts"))!.files;
  expect(files).toEqual([
    { path: "hostile-a.ts", kind: "modified", additions: null, deletions: null },
    { path: "hostile-b.ts", kind: "modified", additions: 3, deletions: null },
    { path: "hostile-c.ts", kind: "added", additions: null, deletions: 2 },
  ]);
  await shownWhileOnline(service, environmentId, () => view()?.usage?.contextMax === 1, "the hostile usage report");
  // A window of one token is no window: the fill is not shown as a fact.
  expect(contextWords(view()!.usage!)).not.toMatch(/^\d+ %/);
  expect(view()!.usage!.thread?.total ?? null).toBeNull();
  const detail = (await service.request("agent.open", { key })) as AgentDetail;
  await shownWhileOnline(
    service,
    environmentId,
    () => service.detail(key).items.some((item) => item.type === "file-change" && item.path === "hostile-d.ts"),
    "the hostile item",
  );
  const item = service.detail(key).items.find((candidate) => candidate.type === "file-change" && candidate.path === "hostile-d.ts");
  expect(item).toMatchObject({ additions: null, deletions: null });
  expect(detail.error ?? service.detail(key).error).toBeNull();
}

describe("figures out of range cost only themselves", () => {
  it("protocol 1: a hostile checkpoint, usage report and file-change item leave the machine online and every other agent intact", async () => {
    const { sims, service, events } = await setup(["upstream"], TUNING);
    const sim = sims.servers[0]!;
    // Paired first: the fleet follows the turns it sees run, for their checkpoints and usage.
    await pairAll(service, sims);
    const bystanders = [0, 1, 2].map((index) => sims.createThread(sim, { title: `Bystander ${index}`, text: index === 0 ? "Edit it #edit:1" : "Hello" }));
    const target = sims.createThread(sim, { title: "Hostile figures", text: "Change it #edit:2" });
    const key = `${sim.environmentId}/${target}`;
    await until(service, () => service.model.agent(key)?.changes?.[0]?.files.length === 2 && service.model.agent(key)?.status === "idle", "the turn's files");
    await until(service, () => bystanders.every((id) => service.model.agent(`${sim.environmentId}/${id}`)?.status === "idle"), "bystanders idle");
    const before = bystanders.map((id) => rowOf(service.model.agent(`${sim.environmentId}/${id}`)));
    const from = events.length;

    const state = sim.engine.threads.get(target)!;
    const checkpoint = state.checkpoints![0]!;
    const at = () => sim.engine.now();
    // The checkpoint is replaced (T3 upserts by turn) with counts no server should send; its snapshot carries them from now on.
    sim.engine.append("thread", target, "thread.turn-diff-completed", null, {
      threadId: target,
      ...checkpoint,
      files: [
        { path: "hostile-a.ts", kind: "modified", additions: huge, deletions: negative },
        { path: "hostile-b.ts", kind: "modified", additions: 3, deletions: fraction },
        { path: "hostile-c.ts", kind: "added", additions: word, deletions: 2 },
      ],
    });
    const activity = (kind: string, payload: Record<string, unknown>) =>
      sim.engine.append("thread", target, "thread.activity-appended", null, {
        threadId: target,
        activity: { id: randomUUID(), tone: kind === "context-window.updated" ? "info" : "tool", kind, summary: kind, payload, turnId: null, createdAt: at() },
      });
    activity("context-window.updated", { usedTokens: maxSafe, maxTokens: 1, totalProcessedTokens: unsafe, inputTokens: word, outputTokens: 12 });
    activity("tool.completed", { itemType: "file_change", status: "completed", data: { path: "hostile-d.ts", additions: negative, deletions: huge } });

    await expectHostileFiguresNotReported(service, sim.environmentId, key);
    // The same report's good figure is kept (the last request's output).
    expect(service.model.agent(key)!.usage!.lastTurn?.output).toBe(12);
    expect(phasesSince(events, from, sim.environmentId).every((phase) => phase === "online")).toBe(true);
    expect(bystanders.map((id) => rowOf(service.model.agent(`${sim.environmentId}/${id}`)))).toEqual(before);
  });

  it("protocol 2: a hostile checkpoint, usage report and file-change item leave the machine online and every other agent intact", async () => {
    const { sims, service, events } = await setup(["v2"], TUNING);
    const v2 = sims.v2Servers[0]!;
    await service.request("pair.confirm", { input: v2.pairingUrl() });
    await until(service, () => service.model.environment(v2.environmentId)?.connection.phase === "online", "online");
    const bystanders = [0, 1, 2].map((index) => createV2Thread(v2, { title: `Bystander ${index}`, text: index === 0 ? "Edit it #edit:1" : "Hello" }));
    const target = createV2Thread(v2, { title: "Hostile figures", text: "Change it #edit:2" });
    const key = `${v2.environmentId}/${target}`;
    await until(service, () => service.model.agent(key)?.changes?.[0]?.files.length === 2 && service.model.agent(key)?.status === "idle", "the turn's files");
    await until(service, () => bystanders.every((id) => service.model.agent(`${v2.environmentId}/${id}`)?.status === "idle"), "bystanders idle");
    const before = bystanders.map((id) => rowOf(service.model.agent(`${v2.environmentId}/${id}`)));
    const from = events.length;

    const engine = v2.engine;
    const state = engine.threads.get(target)!;
    const checkpoint = state.checkpoints.find((candidate) => candidate.appRunOrdinal === 1)!;
    const hostileCheckpoint = {
      ...checkpoint,
      files: [
        { path: "hostile-a.ts", kind: "modified", additions: huge, deletions: negative },
        { path: "hostile-b.ts", kind: "modified", additions: 3, deletions: fraction },
        { path: "hostile-c.ts", kind: "added", additions: word as unknown as number, deletions: 2 },
      ],
    };
    engine.upsert(state.checkpoints, hostileCheckpoint);
    engine.emitEvent(state, "checkpoint.captured", hostileCheckpoint, { runId: checkpoint.runId, nodeId: checkpoint.nodeId, driver: true });
    const turn = state.providerTurns.at(-1)!;
    const hostileTurn = {
      ...turn,
      completedAt: engine.now(),
      tokenUsage: { usedTokens: maxSafe, maxTokens: 1, inputTokens: huge, updatedAt: engine.now() },
      turnTokenUsage: { usageScope: "main_agent" as const, usageStatus: "complete" as const, inputTokens: unsafe, outputTokens: 12, hasSubagents: false },
    };
    engine.upsert(state.providerTurns, hostileTurn);
    engine.emitEvent(state, "provider-turn.updated", hostileTurn, { runId: checkpoint.runId, driver: true });
    const item = state.items.find((candidate) => candidate.type === "assistant_message")!;
    engine.putItem(state, { ...item, id: `item:${randomUUID()}`, type: "file_change", fileName: "hostile-d.ts", additions: negative, deletions: huge });

    await expectHostileFiguresNotReported(service, v2.environmentId, key);
    // The same report's good figure is kept (the turn's output), the unsafe one is not.
    expect(service.model.agent(key)!.usage!.lastTurn).toMatchObject({ input: null, output: 12, total: null });
    expect(phasesSince(events, from, v2.environmentId).every((phase) => phase === "online")).toBe(true);
    expect(bystanders.map((id) => rowOf(service.model.agent(`${v2.environmentId}/${id}`)))).toEqual(before);
  });
});

/** Opens the agent and waits for its detail to load, or for the machine to leave `online`. */
async function openedWhileOnline(service: FleetService, environmentId: string, key: string): Promise<void> {
  await service.request("agent.open", { key });
  await shownWhileOnline(service, environmentId, () => service.detail(key).loaded || service.detail(key).error !== null, "the thread's detail");
  expect(service.detail(key)).toMatchObject({ loaded: true, error: null });
}

describe("what T3 sends in a form the fleet cannot read costs that item alone, never its thread or the machine", () => {
  it("protocol 1: a bad event is skipped and the stream goes on; a bad element of a thread's snapshot is left out and counted, the thread shown", async () => {
    const { sims, service, events } = await setup(["upstream"], TUNING);
    const sim = sims.servers[0]!;
    await pairAll(service, sims);
    const live = sims.createThread(sim, { title: "Live" });
    const broken = sims.createThread(sim, { title: "Broken" });
    const bystander = sims.createThread(sim, { title: "Bystander" });
    const key = (id: string) => `${sim.environmentId}/${id}`;
    await until(service, () => [live, broken, bystander].every((id) => service.model.agent(key(id))?.status === "idle"), "all listed");
    const before = rowOf(service.model.agent(key(bystander)));
    const from = events.length;
    const checkpoint = {
      turnId: "turn-x",
      checkpointTurnCount: "two",
      checkpointRef: "refs/x",
      status: "ready",
      files: [],
      assistantMessageId: null,
      completedAt: sim.engine.now(),
    };

    await service.request("agent.open", { key: key(live) });
    await until(service, () => service.detail(key(live)).loaded, "live thread loaded");
    sim.engine.append("thread", live, "thread.turn-diff-completed", null, { threadId: live, ...checkpoint });
    await shownWhileOnline(
      service,
      sim.environmentId,
      () => (service.model.environment(sim.environmentId)?.skippedItems?.count ?? 0) >= 1,
      "the bad event counted",
    );
    sims.sendMessage(sim, live, "still there?");
    await until(service, () => service.detail(key(live)).items.some((item) => item.type === "message" && item.role === "assistant"), "the stream goes on");

    sim.engine.append("thread", broken, "thread.turn-diff-completed", null, { threadId: broken, ...checkpoint });
    await openedWhileOnline(service, sim.environmentId, key(broken));
    expect(service.model.environment(sim.environmentId)!.skippedItems!.last).toMatchObject({ path: "[0].checkpointTurnCount" });
    expect(service.model.agent(key(broken))!.changes ?? []).toEqual([]);
    expect(service.model.environment(sim.environmentId)!.skippedItems!.count).toBeGreaterThanOrEqual(2);
    expect(phasesSince(events, from, sim.environmentId).every((phase) => phase === "online")).toBe(true);
    expect(rowOf(service.model.agent(key(bystander)))).toEqual(before);
  });

  it("protocol 2: a bad event is skipped and the stream goes on; a bad element of a thread's snapshot is left out and counted, the thread shown", async () => {
    const { sims, service, events } = await setup(["v2"], TUNING);
    const v2 = sims.v2Servers[0]!;
    await service.request("pair.confirm", { input: v2.pairingUrl() });
    await until(service, () => service.model.environment(v2.environmentId)?.connection.phase === "online", "online");
    const live = createV2Thread(v2, { title: "Live" });
    const broken = createV2Thread(v2, { title: "Broken" });
    const bystander = createV2Thread(v2, { title: "Bystander" });
    const key = (id: string) => `${v2.environmentId}/${id}`;
    await until(service, () => [live, broken, bystander].every((id) => service.model.agent(key(id))?.status === "idle"), "all listed");
    const before = rowOf(service.model.agent(key(bystander)));
    const from = events.length;
    // A checkpoint whose id is a number: no field of it can be trusted.
    const checkpoint = (threadId: string) => ({ id: 42, threadId, runId: null, appRunOrdinal: 1, status: "ready", files: [], capturedAt: v2.engine.now() });

    await service.request("agent.open", { key: key(live) });
    await until(service, () => service.detail(key(live)).loaded, "live thread loaded");
    const liveState = v2.engine.threads.get(live)!;
    v2.engine.emitEvent(liveState, "checkpoint.captured", checkpoint(live));
    await shownWhileOnline(
      service,
      v2.environmentId,
      () => (service.model.environment(v2.environmentId)?.skippedItems?.count ?? 0) >= 1,
      "the bad event counted",
    );
    sendV2Message(v2, live, "still there?");
    await until(service, () => service.detail(key(live)).items.some((item) => item.type === "message" && item.role === "assistant"), "the stream goes on");

    (v2.engine.threads.get(broken)!.checkpoints as unknown[]).push(checkpoint(broken));
    await openedWhileOnline(service, v2.environmentId, key(broken));
    expect(service.model.environment(v2.environmentId)!.skippedItems!.last).toMatchObject({ path: "[0].id" });
    expect(service.model.agent(key(broken))!.changes ?? []).toEqual([]);
    expect(service.model.environment(v2.environmentId)!.skippedItems!.count).toBeGreaterThanOrEqual(2);
    expect(phasesSince(events, from, v2.environmentId).every((phase) => phase === "online")).toBe(true);
    expect(rowOf(service.model.agent(key(bystander)))).toEqual(before);
  });
});

// Changes and usage end to end against the simulators, on both protocols: a turn that edits files
// shows its files on the agent, its diff is read once when asked and matches the files' counts, and
// the agent's usage is what the server reported.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentDiff } from "../../shared/bridge/contract";
import type { AgentView } from "../../shared/fleet/types";
import { SimFleet } from "../../sim/fleet";
import { createV2Thread, sendV2Message } from "../../sim/protocol2/fleet-hooks";
import { MemorySecretStore } from "./secrets";
import { FleetService } from "./service";
import { until } from "./service.testkit";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup() {
  const sims = await SimFleet.start({ envs: 2, generations: ["upstream", "v2"], tickMs: 5 });
  cleanups.push(() => sims.stop());
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-changes-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const service = await FleetService.start({
    dataDir,
    secrets: new MemorySecretStore(),
    socket: { pingIntervalMs: 100, openTimeoutMs: 1_000 },
    timing: { baseBackoffMs: 50, maxBackoffMs: 300, stableAfterMs: 1_000, probeTimeoutMs: 300 },
  });
  cleanups.push(() => service.stop());
  for (const sim of [...sims.servers, ...sims.v2Servers]) await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(
    service,
    () => [...sims.servers, ...sims.v2Servers].every((sim) => service.model.environment(sim.environmentId)?.connection.phase === "online"),
    "all online",
  );
  return { sims, service };
}

/** Counts of a unified diff per file: the lines starting with + or - below each file's hunks. */
function diffCounts(diff: string): Record<string, { additions: number; deletions: number }> {
  const counts: Record<string, { additions: number; deletions: number }> = {};
  let current: { additions: number; deletions: number } | undefined;
  for (const line of diff.split("\n")) {
    const file = /^diff --git a\/(\S+) b\//.exec(line);
    if (file) counts[file[1]!] = current = { additions: 0, deletions: 0 };
    else if (current && line.startsWith("+") && !line.startsWith("+++")) current.additions++;
    else if (current && line.startsWith("-") && !line.startsWith("---")) current.deletions++;
  }
  return counts;
}

async function expectChangesAndDiff(service: FleetService, key: string, turnCount: number, fileCount: number): Promise<void> {
  const view = () => service.model.agent(key);
  await until(service, () => view()?.changes?.some((turn) => turn.turnCount === turnCount && turn.files.length === fileCount) === true, "the turn's files");
  const turn = view()!.changes!.find((candidate) => candidate.turnCount === turnCount)!;
  expect(turn.status).toBe("ready");
  const diff = (await service.request("agent.diff", { key, scope: { kind: "turn", turnCount } })) as AgentDiff;
  expect(diff.state === "unavailable" ? diff.reason : diff.state).toBe("ready");
  const counted = diffCounts(diff.state === "ready" ? diff.text : "");
  expect(counted).toEqual(Object.fromEntries(turn.files.map((file) => [file.path, { additions: file.additions, deletions: file.deletions }])));
  const whole = (await service.request("agent.diff", { key, scope: { kind: "thread" } })) as AgentDiff;
  expect(whole).toMatchObject({ state: "ready", fromTurnCount: 0, toTurnCount: view()!.changes!.at(-1)!.turnCount });
}

function expectUsage(agent: AgentView | undefined): void {
  expect(agent?.usage).toMatchObject({ contextMax: 258_400, lastTurn: { input: expect.any(Number), output: expect.any(Number) } });
  expect(agent!.usage!.contextUsed).toBeGreaterThan(0);
}

describe("changes and usage through the fleet service", () => {
  it("protocol 1: a turn that edits files shows them, its diff matches, usage is reported", async () => {
    const { sims, service } = await setup();
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Refactor", provider: "codex", text: "Refactor it #edit:3" });
    const key = `${sim.environmentId}/${threadId}`;
    await expectChangesAndDiff(service, key, 1, 3);
    expectUsage(service.model.agent(key));
    expect(service.model.agent(key)!.usage!.compactsAutomatically).toBe(true);
    sims.sendMessage(sim, threadId, "And a second pass #edit:2");
    await expectChangesAndDiff(service, key, 2, 2);
  });

  it("protocol 2: a run that edits files shows them, its diff matches, usage is reported", async () => {
    const { sims, service } = await setup();
    const v2 = sims.v2Servers[0]!;
    const threadId = createV2Thread(v2, { title: "Tidy", provider: "codex", text: "Tidy it #edit:2" });
    const key = `${v2.environmentId}/${threadId}`;
    await expectChangesAndDiff(service, key, 1, 2);
    expectUsage(service.model.agent(key));
    expect(service.model.agent(key)!.usage!.compactsAutomatically).toBeNull();
    sendV2Message(v2, threadId, "Now the tests #edit:1");
    await expectChangesAndDiff(service, key, 2, 1);
  });

  it("a plain turn in a folder that is not a git repository has no changes (as recorded), and its diff is refused with why", async () => {
    const { sims, service } = await setup();
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Chat", provider: "codex", text: "Just answer" });
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => service.model.agent(key)?.usage !== undefined, "usage reported");
    expect(service.model.agent(key)!.changes).toBeUndefined();
    await expect(service.request("agent.diff", { key, scope: { kind: "thread" } })).rejects.toThrow("no changes");
  });
});

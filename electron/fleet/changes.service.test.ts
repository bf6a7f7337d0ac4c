// Changes and usage end to end against the simulators, on both protocols: a turn that edits files
// shows its files on the agent, its diff is read once when asked and matches the files' counts, and
// the agent's usage is what the server reported. On protocol 2 each is also held against what the
// simulator stored (its checkpoint's files, its diff, its provider turns' figures), as the withdrawn
// real-engine suite held them against T3's V2 engine and git.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentDiff } from "../../shared/bridge/contract";
import { FOLLOWED_TAIL } from "../../shared/fleet/transcript-tail";
import type { AgentView } from "../../shared/fleet/types";
import { SimFleet } from "../../sim/fleet";
import { diffBetween } from "../../sim/changes";
import { createV2Thread, sendV2Message } from "../../sim/protocol2/fleet-hooks";
import { V2SimServer } from "../../sim/protocol2/server";
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
    // Pings every second (as e2e/fixtures.ts): nothing here is about liveness, and on a busy machine a
    // test process stalled past a 300 ms probe read as a vanished host, failing a diff read ("stopped answering pings").
    socket: { pingIntervalMs: 1_000, openTimeoutMs: 2_000 },
    timing: { baseBackoffMs: 100, maxBackoffMs: 500, stableAfterMs: 2_000, probeTimeoutMs: 500 },
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

/**
 * Protocol 2, against what the simulator stored: the turn's files are its run's checkpoint's, the
 * diff the fleet shows is the simulator's (sim/protocol2/turn-changes.ts), and its usage is the
 * newest provider turn's figures, or not reported where the provider turns carry none.
 */
async function expectAsStored(service: FleetService, v2: V2SimServer, threadId: string, turnCount: number): Promise<void> {
  const key = `${v2.environmentId}/${threadId}`;
  const stored = v2.engine.threads.get(threadId)!;
  await until(service, () => service.model.agent(key)?.status === "idle", "the run over");
  const checkpoint = stored.checkpoints.find((candidate) => candidate.appRunOrdinal === turnCount)!;
  const turn = service.model.agent(key)!.changes!.find((candidate) => candidate.turnCount === turnCount)!;
  expect(turn).toMatchObject({ status: checkpoint.status, runId: checkpoint.runId, files: checkpoint.files });
  const diff = (await service.request("agent.diff", { key, scope: { kind: "turn", turnCount } })) as AgentDiff;
  expect(diff.state === "ready" && diff.text).toBe(stored.diffs!.get(turnCount));
  const whole = (await service.request("agent.diff", { key, scope: { kind: "thread" } })) as AgentDiff;
  expect(whole.state === "ready" && whole.text).toBe(diffBetween(stored.diffs!, 0, turnCount));
  const live = stored.providerTurns.findLast((candidate) => candidate.tokenUsage)?.tokenUsage;
  const last = stored.providerTurns.findLast((candidate) => candidate.turnTokenUsage)?.turnTokenUsage;
  const usage = service.model.agent(key)!.usage;
  if (!live && !last) expect(usage, "not reported").toBeUndefined();
  else
    expect(usage).toMatchObject({
      contextUsed: live!.usedTokens,
      contextMax: live!.maxTokens,
      lastTurn: { input: last!.inputTokens, output: last!.outputTokens, total: last!.inputTokens! + last!.outputTokens! },
    });
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
    await expectAsStored(service, v2, threadId, 1);
    sendV2Message(v2, threadId, "Now the tests #edit:1");
    await expectChangesAndDiff(service, key, 2, 1);
    await expectAsStored(service, v2, threadId, 2);
  });

  it("protocol 2 as the recorded engine (no token figures): the run's files and diff as stored, usage not reported", async () => {
    const { service } = await setup();
    // The recorded engine's provider turns carry no token figures (V2SimServerOptions.reportsTokenUsage off).
    const v2 = await new V2SimServer({ label: "recorded-engine", tickMs: 5 }).start();
    cleanups.push(() => v2.stop());
    await service.request("pair.confirm", { input: v2.pairingUrl() });
    // The run starts once the machine is online, as the real engine's did: a run over before then is only remembered (electron/fleet/following.ts).
    await until(service, () => service.model.environment(v2.environmentId)?.connection.phase === "online", "online");
    const threadId = createV2Thread(v2, { title: "Write a file", provider: "codex", text: "Write it #edit:1" });
    await expectChangesAndDiff(service, `${v2.environmentId}/${threadId}`, 1, 1);
    await expectAsStored(service, v2, threadId, 1);
    expect(service.model.agent(`${v2.environmentId}/${threadId}`)!.usage).toBeUndefined();
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

  it("an agent opened and closed again keeps only the followed tail's turns of changes, not the open view's", async () => {
    const { sims, service } = await setup();
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Many passes", provider: "codex", text: "Pass 1 #edit:1" });
    const key = `${sim.environmentId}/${threadId}`;
    const view = () => service.model.agent(key);
    const turns = FOLLOWED_TAIL.checkpoints + 3;
    for (let turn = 1; turn <= turns; turn++) {
      if (turn > 1) sims.sendMessage(sim, threadId, `Pass ${turn} #edit:1`);
      await until(service, () => view()?.changes?.at(-1)?.turnCount === turn && view()?.status === "idle", `pass ${turn}`);
    }
    // Followed for its turns, it held the followed tail's checkpoints.
    expect(view()!.changes!.length).toBeLessThanOrEqual(FOLLOWED_TAIL.checkpoints);
    // Open, the view's tail: every turn's files.
    await service.request("agent.open", { key });
    await until(service, () => view()?.changes?.length === turns, "every turn's changes");
    // Closed: the agent's row keeps the newest turns only, as stored.
    await service.request("agent.close", { key });
    expect(view()!.changes!.map((turn) => turn.turnCount)).toEqual(
      sim.engine.threads
        .get(threadId)!
        .checkpoints!.slice(-FOLLOWED_TAIL.checkpoints)
        .map((checkpoint) => checkpoint.checkpointTurnCount),
    );
  });
});

// The fleet against the released T3 0.0.42 running the real Codex, Claude Code and OpenCode CLIs
// (integration/harnesses), each pointed at the scripted model server (integration/model), inside a
// private network namespace (scripts/realt3.sh). One T3 server and one fleet serve all three
// harnesses; each scenario runs for the three at once, on threads of their own.
import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TruthWatch } from "../../electron/fleet/truth-watch.testkit";
import { OPENCODE_MODEL, SCRIPTED_MODEL } from "../harnesses/harness-env";
import { LookupRecorder, type OutsideAttempts, onlyLoopback, outsideAttempts } from "../harnesses/offline.testkit";
import { ScriptedModelServer } from "../model/scripted-model-server";
import { FAST, type Fleet, startFleet } from "./fleet.testkit";
import {
  type HarnessUnderTest,
  type ScenarioContext,
  type ServerSide,
  approvalDecisions,
  capacityLimit,
  interrupt,
  killAndRestart,
  messageWhileRunning,
  modelFailure,
  nativeSubagents,
  question,
  showsProviderAndModel,
  tokenUsage,
  turnWithReply,
} from "./harness-scenarios.testkit";
import { RELEASED_T3, RealT3Server } from "./harness.testkit";
import { T3Operator } from "./operator.testkit";
import { readT3Truth } from "./truth-reader.testkit";
import { type ReportedUsage, nativeSubagentCompletes, nativeSubagentFails, tokenTotals } from "./subagent-usage.testkit";

const run = promisify(execFile);

/** What each harness was seen to do under T3 0.0.42 (docs/t3-protocols.md, "Harnesses under T3"). */
const HARNESSES: HarnessUnderTest[] = [
  {
    name: "codex",
    driver: "codex",
    instanceId: "codex",
    model: SCRIPTED_MODEL,
    runningMessage: "interrupts-reply",
    whileRunning: "steer",
    turnsAfterRunningMessage: 1,
    decisions: ["accept", "acceptForSession", "decline", "cancel"],
    acceptedCommandWrites: null,
    afterInterrupt: ["interrupted"],
    asks: false,
    showsRetries: true,
    subagents: false,
    reportsUsage: true,
  },
  {
    name: "claude",
    driver: "claudeAgent",
    instanceId: "claudeAgent",
    model: "claude-sonnet-4-5",
    runningMessage: "next-turn",
    whileRunning: "queue",
    turnsAfterRunningMessage: 2,
    decisions: ["accept", "acceptForSession", "decline", "cancel"],
    acceptedCommandWrites: true,
    // Ended when T3 also stopped the session; idle when T3 recorded the turn completed (seen once in CI).
    afterInterrupt: ["interrupted", "ended", "idle"],
    asks: true,
    showsRetries: false,
    subagents: true,
    reportsUsage: true,
  },
  {
    name: "opencode",
    driver: "opencode",
    instanceId: "opencode",
    model: OPENCODE_MODEL,
    runningMessage: "after-reply",
    whileRunning: "steer",
    turnsAfterRunningMessage: 1,
    decisions: ["accept", "acceptForSession", "decline"],
    acceptedCommandWrites: true,
    afterInterrupt: ["interrupted"],
    asks: true,
    showsRetries: true,
    subagents: false,
    reportsUsage: false,
  },
];

let model: ScriptedModelServer;
let server: RealT3Server;
let operator: T3Operator;
let fleet: Fleet;
const projects = new Map<string, string>();
const cleanups: (() => unknown)[] = [];
let attemptsBefore: OutsideAttempts;
let lookups: LookupRecorder;

const workspaceOf = (harness: HarnessUnderTest) => join(server.workDir, `harness-${harness.name}`);

const side: ServerSide = {
  async createThread(harness, title, runtimeMode) {
    const threadId = await operator.createThread(projects.get(harness.name)!, title, undefined, { instanceId: harness.instanceId, model: harness.model });
    if (runtimeMode !== "full-access") await operator.setRuntimeMode(threadId, runtimeMode);
    return threadId;
  },
  async userMessages(threadId, text) {
    return (await operator.thread(threadId)).messages.filter((message) => message.role === "user" && message.text === text).length;
  },
  async assistantTurns(threadId) {
    return [
      ...new Set((await operator.thread(threadId)).messages.flatMap((message) => (message.role === "assistant" && message.turnId ? [message.turnId] : []))),
    ];
  },
  async storedFailure(threadId) {
    return (await operator.thread(threadId)).session?.lastError ?? null;
  },
  async latestTurnState(threadId) {
    return (await operator.thread(threadId)).latestTurn?.state ?? null;
  },
  async threadIds() {
    return (await operator.shell()).threads.map((thread) => thread.id);
  },
  async userMessageCount(threadId) {
    return (await operator.thread(threadId)).messages.filter((message) => message.role === "user").length;
  },
};

/** How long T3 and the fleet may take to agree after a step: the fleet follows T3 in a second, a loaded two-core machine slower. */
const TRUTH_SETTLE_MS = 30_000;
/** The truth oracle's record of the fleet (electron/fleet/truth-watch.testkit.ts), from its pairing on. */
let truth: TruthWatch;
/** A step's truth: a scenario's threads alone while the others run on the same server; every thread after a restart. */
const truthful = (step: string, threadIds?: string[]) =>
  truth.check(fleet.environmentId, () => readT3Truth(operator, fleet.environmentId, threadIds), step, {
    settleMs: TRUTH_SETTLE_MS,
    scoped: threadIds !== undefined,
  });

const ctx = (): ScenarioContext => ({ fleet, model, side, workspaceOf, truthful });

/** T3's newest context-window report for the thread. */
async function reportedUsage(threadId: string) {
  const activity = (await operator.thread(threadId)).activities.filter((entry) => entry.kind === "context-window.updated").at(-1) as
    { payload?: Record<string, number> } | undefined;
  const payload = activity?.payload;
  if (!payload) return null;
  return { inputTokens: payload.lastInputTokens ?? payload.inputTokens ?? 0, outputTokens: payload.lastOutputTokens ?? payload.outputTokens ?? 0 };
}

/**
 * What T3 reported for the thread (docs/t3-protocols.md, "Changes and usage"): its thread figure, the
 * newest turnless report's `totalProcessedTokens` (Codex: the session so far) plus each turn's newest
 * (Claude: that turn's), and the newest report's context fill (`usedTokens`).
 */
async function reportedUsageTotals(threadId: string): Promise<ReportedUsage | null> {
  type Report = { turnId: string | null; createdAt: string; payload?: Record<string, number> };
  const reports = (await operator.thread(threadId)).activities.filter((entry) => entry.kind === "context-window.updated") as unknown as Report[];
  if (reports.length === 0) return null;
  const newest = new Map<string | null, Report>();
  for (const report of reports) if ((newest.get(report.turnId)?.createdAt ?? "") <= report.createdAt) newest.set(report.turnId, report);
  const figures = [...newest.values()].flatMap((report) =>
    typeof report.payload?.totalProcessedTokens === "number" ? [report.payload.totalProcessedTokens] : [],
  );
  const latest = reports.reduce((a, b) => (b.createdAt >= a.createdAt ? b : a));
  return {
    thread: figures.length ? figures.reduce((sum, figure) => sum + figure, 0) : null,
    context: latest.payload?.usedTokens ?? null,
    at: latest.createdAt,
  };
}

beforeAll(async () => {
  if (!(await onlyLoopback())) throw new Error("run the real-harness suites inside scripts/realt3.sh's network namespace (loopback only)");
  lookups = await LookupRecorder.start();
  cleanups.push(() => lookups.close());
  attemptsBefore = await outsideAttempts();
  // Fails (never skips) when a harness or T3 is missing or cannot start.
  model = await ScriptedModelServer.start();
  server = await RealT3Server.start({ kind: RELEASED_T3, harnesses: { names: ["codex", "claude", "opencode"], modelUrl: model.url } });
  operator = await T3Operator.start(server);
  for (const harness of HARNESSES) {
    // A git workspace per harness, so a command's change shows (and counts) there alone.
    await mkdir(workspaceOf(harness), { recursive: true });
    await run("git", ["init", "-q"], { cwd: workspaceOf(harness) });
    projects.set(harness.name, await operator.createProject(`harness-${harness.name}`));
  }
  fleet = await startFleet(server, FAST, cleanups);
  truth = new TruthWatch(fleet.service, fleet.events);
  cleanups.push(() => truth.stop());
}, 120_000);

afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
  await server?.stop();
  await model?.close();
}, 60_000);

const each = (scenario: (context: ScenarioContext, harness: HarnessUnderTest) => Promise<void>, which = HARNESSES) =>
  it.concurrent.each(which.map((harness) => [harness.name, harness] as const))("%s", (_name, harness) => scenario(ctx(), harness), 240_000);

describe("real harnesses under T3 0.0.42", () => {
  describe("pairing shows each agent's provider and model", () => each(showsProviderAndModel));
  describe("a turn with its reply", () => each(turnWithReply));
  describe("an approval with each decision T3 offers for the harness, checked at the model", () => each(approvalDecisions));
  describe("a question where the harness asks one", () => each(question));
  describe("a message sent while the turn runs does what the composer said", () => each(messageWhileRunning));
  describe("interrupt", () => each(interrupt));
  describe("a model failure is failed with its reason", () => each(modelFailure));
  describe("a capacity limit: held up where T3 shows the retries, then the reply", () => each(capacityLimit));
  describe("native subagents", () =>
    each(
      nativeSubagents,
      HARNESSES.filter((harness) => harness.subagents),
    ));
  describe("a native subagent that completes needs nothing; Claude's follow-up turn is its own", () =>
    each(
      nativeSubagentCompletes,
      HARNESSES.filter((harness) => harness.subagents),
    ));
  describe("a native subagent that fails reaches its parent's roll-up, the inbox and one notification, named", () =>
    each(
      nativeSubagentFails,
      HARNESSES.filter((harness) => harness.subagents),
    ));
  describe("token usage as T3 reports it", () => each((context, harness) => tokenUsage(context, harness, reportedUsage)));
  it(
    "a thread's tokens over two turns are what T3 reported, use and not the context; the fleet's total is their sum over how many agents, the fill apart",
    () => tokenTotals(ctx(), HARNESSES, reportedUsageTotals),
    240_000,
  );

  it("SIGKILL and restart of T3: every row back, nothing sent twice", () => killAndRestart(ctx(), server, 60_000), 120_000);

  it("each notification once, none again after T3's restart (the failed subagent's among them)", () => {
    const ids = fleet.events.flatMap((event) => (event.type === "notification" ? [event.notification.id] : []));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => id.includes("/subagent-failed/"))).toHaveLength(1);
  });

  it("nothing tried to reach an address outside the namespace (T3, the harnesses and the fleet)", async () => {
    // Counted by the kernel for this namespace: every connection or datagram to another address, DNS included.
    expect(await outsideAttempts()).toEqual(attemptsBefore);
    // OpenCode 1.18.33 installs @opencode-ai/plugin into its config folder in the background at every
    // start, with no setting to turn it off: its lookup of the npm registry fails here and it carries on.
    // Anything else looked up is a regression.
    expect(
      lookups.outsideNames().filter((name) => name !== "registry.npmjs.org"),
      "names looked up besides OpenCode's plugin install",
    ).toEqual([]);
  });
});

// The fleet against T3's V2 engine (protocol 2) running the real Codex CLI against the scripted model
// server, inside a private network namespace (scripts/realt3.sh). The engine's bundle leaves the
// Claude and Cursor SDKs out (../shared/tools/t3-v2/README.md), so Codex is the one harness here.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  question,
  tokenUsage,
  showsProviderAndModel,
  turnWithReply,
} from "./harness-scenarios.testkit";
import { RealT3Server, V2_ENGINE } from "./harness.testkit";
import { T3V2Operator } from "./operator-v2.testkit";

/** What the real Codex was seen to do under T3's V2 engine (docs/t3-protocols.md, "Harnesses under T3"). */
const CODEX: HarnessUnderTest = {
  name: "codex",
  driver: "codex",
  instanceId: "codex",
  // The operator's threads ask for this model; the scripted server answers any.
  model: "gpt-5-codex",
  runningMessage: "interrupts-reply",
  // Protocol 2 offers both; steering is the default, and T3 reports what became of the message.
  whileRunning: "steer",
  turnsAfterRunningMessage: 1,
  decisions: ["accept", "acceptForSession", "decline", "cancel"],
  acceptedCommandWrites: null,
  afterInterrupt: ["interrupted"],
  asks: false,
  showsRetries: true,
  subagents: false,
  // The engine keeps token use only for subagent activations: it drops a top-level thread's
  // `thread/tokenUsage/updated` from Codex (../shared/tools/t3-v2/server.mjs, "thread/tokenUsage/updated").
  reportsUsage: false,
};

let model: ScriptedModelServer;
let server: RealT3Server;
let operator: T3V2Operator;
let projectId: string;
let fleet: Fleet;
const cleanups: (() => unknown)[] = [];
let attemptsBefore: OutsideAttempts;
let lookups: LookupRecorder;

const side: ServerSide = {
  createThread: (_harness, title, runtimeMode) => operator.createThread(projectId, title, runtimeMode),
  async userMessages(threadId, text) {
    return (await operator.projection(threadId)).messages.filter((message) => message.role === "user" && message.text === text).length;
  },
  async assistantTurns(threadId) {
    return [
      ...new Set((await operator.projection(threadId)).messages.flatMap((message) => (message.role === "assistant" && message.runId ? [message.runId] : []))),
    ];
  },
  // The engine keeps a failure's reason in the thread's error item, not on the row.
  storedFailure: async () => null,
  latestTurnState: async () => null,
  async threadIds() {
    return (await operator.shell()).threads.map((thread) => thread.id);
  },
  async userMessageCount(threadId) {
    return (await operator.projection(threadId)).messages.filter((message) => message.role === "user").length;
  },
};

/** Token figures anywhere in the engine's projection of the thread, its subagents' left out; null when it holds none. */
async function reportedUsage(threadId: string) {
  const { subagents: _subagents, ...thread } = await operator.projection(threadId);
  const figures: { inputTokens: number; outputTokens: number }[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== "object") return;
    const record = value as Record<string, unknown>;
    if (typeof record.inputTokens === "number" || typeof record.usedTokens === "number") {
      figures.push({
        inputTokens: Number(record.lastInputTokens ?? record.inputTokens ?? 0),
        outputTokens: Number(record.lastOutputTokens ?? record.outputTokens ?? 0),
      });
    }
    Object.values(record).forEach(visit);
  };
  visit(thread);
  return figures.at(-1) ?? null;
}

const ctx = (): ScenarioContext => ({ fleet, model, side, workspaceOf: () => join(server.workDir, "harness-codex") });

beforeAll(async () => {
  if (!(await onlyLoopback())) throw new Error("run the real-harness suites inside scripts/realt3.sh's network namespace (loopback only)");
  lookups = await LookupRecorder.start();
  cleanups.push(() => lookups.close());
  attemptsBefore = await outsideAttempts();
  model = await ScriptedModelServer.start();
  server = await RealT3Server.start({ kind: V2_ENGINE, harnesses: { names: ["codex"], modelUrl: model.url } });
  operator = await T3V2Operator.start(server);
  projectId = await operator.createProject("Harness codex");
  fleet = await startFleet(server, FAST, cleanups);
}, 180_000);

afterAll(async () => {
  operator?.close();
  while (cleanups.length) await cleanups.pop()!();
  await server?.stop();
  await model?.close();
}, 60_000);

const one = (scenario: (context: ScenarioContext, harness: HarnessUnderTest) => Promise<void>) => it("codex", () => scenario(ctx(), CODEX), 240_000);

describe("the real Codex under T3's V2 engine", () => {
  describe("pairing shows the agent's provider and model", () => one(showsProviderAndModel));
  describe("a turn with its reply", () => one(turnWithReply));
  describe("an approval with each decision T3 offers, checked at the model", () => one(approvalDecisions));
  describe("a question where the harness asks one", () => one(question));
  describe("a message sent while the turn runs does what the composer said", () => one(messageWhileRunning));
  describe("interrupt", () => one(interrupt));
  describe("a model failure is failed with its reason", () => one(modelFailure));
  describe("a capacity limit: held up while Codex retries, then the reply", () => one(capacityLimit));
  describe("token usage as T3 reports it", () => one((context, harness) => tokenUsage(context, harness, reportedUsage)));

  it("SIGKILL and restart of the engine: every row back, nothing sent twice", () => killAndRestart(ctx(), server, 90_000), 180_000);

  it("nothing tried to reach an address outside the namespace (the engine, Codex and the fleet)", async () => {
    // Counted by the kernel for this namespace: every connection or datagram to another address, DNS included.
    expect(await outsideAttempts()).toEqual(attemptsBefore);
    expect(lookups.outsideNames(), "names looked up").toEqual([]);
  });
});

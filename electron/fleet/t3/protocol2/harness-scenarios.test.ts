// The real-harness scenarios (integration/realt3/harness-scenarios.testkit.ts, which harnesses.real.test.ts
// plays with the real CLIs under T3 0.0.42), played on the protocol-2 simulator for its Codex, under the
// same scenario names. CODEX is what the real Codex did under T3's V2 engine before it was withdrawn
// (issue 38; docs/t3-protocols.md, "Harnesses under T3"): the simulated one must do the same. What the real
// suites checked at the model server is checked here in what the simulator stored (its runs, turn
// items and requests), and what the fleet shows is checked against that.
//
// Not played here, and why:
// | scenario | why |
// | --- | --- |
// | native subagents | the real Codex's were never exercised under T3's V2 engine (its suite left them out); the simulator's subagents are played in conformance.test.ts |
// | nothing tried to reach an address outside the namespace | a property of the real processes in scripts/realt3.sh's namespace; the simulator is this process on 127.0.0.1 |
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentDetail } from "../../../../shared/bridge/contract";
import type { Delivery } from "../../../../shared/fleet/delivery";
import type { ApprovalDecision } from "../../../../shared/fleet/facts";
import type { AgentView } from "../../../../shared/fleet/types";
import type { ThreadState } from "../../../../sim/protocol2/engine";
import type { TurnItem } from "../../../../sim/protocol2/model";
import { T3V2Operator } from "../../../../sim/protocol2/operator.testkit";
import { V2SimServer } from "../../../../sim/protocol2/server";
import { MemorySecretStore } from "../../secrets";
import { FleetService } from "../../service";
import { FAST, until } from "../../service.testkit";
import { TruthWatch } from "../../truth-watch.testkit";
import { readProtocol2Truth } from "./truth-reader.testkit";

/** What the real Codex was seen to do under T3's V2 engine (its suite, withdrawn in issue 38). */
const CODEX = {
  name: "codex",
  instanceId: "codex",
  // The real engine's threads asked for this model (../shared/fixtures/t3-v2dev/README.md).
  model: "gpt-5-codex",
  // Protocol 2 offers steer and queue; steering is the default, and joins the running run.
  whileRunning: "steer",
  turnsAfterRunningMessage: 1,
  decisions: ["accept", "acceptForSession", "decline", "cancel"] as ApprovalDecision[],
  afterInterrupt: ["interrupted"],
  asks: false,
  showsRetries: true,
  // The engine dropped a top-level thread's token use from Codex: "not reported".
  reportsUsage: false,
} as const;

let server: V2SimServer;
let service: FleetService;
/** T3's own UI on the machine: creates the project and the threads, as the real suite's operator did. */
let operator: T3V2Operator;
let projectId: string;
/** The truth oracle: after every step, what the simulator stored against what the fleet says (issue 39). */
let truth: TruthWatch;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  // As the recorded engine: provider turns carry no token figures (V2SimServerOptions.reportsTokenUsage off).
  server = await new V2SimServer({ label: "harness-codex", tickMs: 5 }).start();
  cleanups.push(() => server.stop());
  const { token } = server.auth.issueSession({ scopes: ["orchestration:read", "orchestration:operate"], role: "client", label: "T3 web" });
  operator = new T3V2Operator({ baseUrl: server.baseUrl, workDir: "/home/user", token });
  cleanups.push(() => operator.close());
  projectId = await operator.createProject("Harness codex");
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-harness-v2-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), ...FAST });
  cleanups.push(() => service.stop());
  truth = new TruthWatch(service);
  cleanups.push(() => truth.stop());
  await service.request("pair.confirm", { input: server.pairingUrl() });
  await until(service, () => phase() === "online", "online");
});

afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const phase = () => service.model.environment(server.environmentId)?.connection.phase;
const keyOf = (threadId: string) => `${server.environmentId}/${threadId}`;
const agent = (threadId: string): AgentView | undefined => service.model.agent(keyOf(threadId));
const stored = (threadId: string): ThreadState => server.engine.threads.get(threadId)!;
const itemsOf = <T extends TurnItem["type"]>(threadId: string, type: T) =>
  stored(threadId).items.filter((item): item is Extract<TurnItem, { type: T }> => item.type === type);
const state = (commandId: string) => service.delivery(commandId)?.state;
/** Both sides agree once settled: every thread the simulator stored against every row, need, roll-up, notification and receipt. */
const truthful = (step: string) =>
  truth.check(
    server.environmentId,
    () =>
      readProtocol2Truth(
        operator,
        server.environmentId,
        [...service.model.agents()].map((view) => view.threadId),
      ),
    step,
  );

async function newAgent(title: string, runtimeMode: "full-access" | "approval-required" = "full-access"): Promise<string> {
  const threadId = await operator.createThread(projectId, title, runtimeMode, "codex");
  await until(service, () => agent(threadId) !== undefined, `${title} in the fleet`);
  return threadId;
}

async function send(threadId: string, text: string, expectedIntent: "new-turn" | "steer" | "queue" = "new-turn"): Promise<Delivery> {
  return (await service.request("agent.send", { key: keyOf(threadId), text, expectedIntent })) as Delivery;
}

const settled = (view: AgentView | undefined) =>
  view !== undefined && !["running", "starting", "queued", "waiting", "needs-approval", "needs-input"].includes(view.status);

async function untilSettled(threadId: string, what: string): Promise<AgentView> {
  await until(service, () => settled(agent(threadId)), what);
  return agent(threadId)!;
}

/** Every status (and held-up flag) the fleet showed for the agent while `body` ran. */
async function watching(threadId: string, body: () => Promise<void>): Promise<{ status: string; heldUp: boolean }[]> {
  const shown: { status: string; heldUp: boolean }[] = [];
  const record = () => {
    const view = agent(threadId);
    if (view && (shown.at(-1)?.status !== view.status || shown.at(-1)?.heldUp !== view.heldUp)) shown.push({ status: view.status, heldUp: view.heldUp });
  };
  service.on("event", record);
  try {
    await body();
  } finally {
    service.off("event", record);
  }
  return shown;
}

async function transcript(threadId: string): Promise<AgentDetail> {
  const key = keyOf(threadId);
  await service.request("agent.open", { key });
  await until(service, () => (service.detail(key)?.items.length ?? 0) > 0, "transcript loaded");
  const detail = service.detail(key);
  await service.request("agent.close", { key });
  return detail;
}

const assistantTexts = (detail: AgentDetail) => detail.items.flatMap((item) => (item.type === "message" && item.role === "assistant" ? [item.text] : []));
const storedReplies = (threadId: string) => itemsOf(threadId, "assistant_message").map((item) => item.text);
const userMessages = (threadId: string, text?: string) =>
  stored(threadId).messages.filter((message) => message.role === "user" && (text === undefined || message.text === text)).length;

describe("the simulated Codex on protocol 2 (as the real one under T3's V2 engine)", () => {
  describe("pairing shows each agent's provider and model", () => {
    it("codex", async () => {
      const threadId = await newAgent("Provider codex");
      await truthful("a new thread");
      expect(agent(threadId)).toMatchObject({ providerInstanceId: CODEX.instanceId, model: CODEX.model });
      expect(stored(threadId).thread.modelSelection).toEqual({ instanceId: CODEX.instanceId, model: CODEX.model });
      expect(phase()).toBe("online");
    });
  });

  describe("a turn with its reply", () => {
    it("codex", async () => {
      const threadId = await newAgent("Turn codex");
      const text = "say hello";
      const delivery = await send(threadId, text);
      await until(service, () => state(delivery.commandId) === "answered", "answered");
      // Answered once the reply is in; the run completes after its checkpoint.
      expect((await untilSettled(threadId, "the run ends")).status).toBe("idle");
      await truthful("a turn with its reply");
      expect(agent(threadId)!.providerDriver ?? agent(threadId)!.providerInstanceId).toBe(CODEX.instanceId);
      expect(stored(threadId).runs.map((run) => run.status)).toEqual(["completed"]);
      expect(assistantTexts(await transcript(threadId))).toEqual(storedReplies(threadId));
      expect(storedReplies(threadId)).toEqual(["Codex reply to: say hello"]);
      expect(userMessages(threadId, text)).toBe(1);
    });
  });

  describe("an approval with each decision T3 offers for the harness, checked at the model", () => {
    it("codex", async () => {
      for (const decision of CODEX.decisions) {
        const threadId = await newAgent(`Approval ${decision} codex`, "approval-required");
        await send(threadId, "run the approval command #approval");
        await until(service, () => agent(threadId)?.status === "needs-approval" && agent(threadId)!.pending.length === 1, `${decision}: needs approval`);
        await truthful(`${decision}: the approval pending`);
        const request = agent(threadId)!.pending[0]!;
        // Codex's approvals list no decisions on the engine (../shared/fixtures/t3-v2dev/03-approval.json): the fleet offers the contract's.
        expect(request.kind === "approval" && request.decisions.map((option) => option.decision)).toEqual(CODEX.decisions);
        // The command waits for the answer: it has not run.
        expect(itemsOf(threadId, "command_execution").map((item) => item.status)).toEqual(["running"]);
        const answer = (await service.request("agent.respondApproval", { key: keyOf(threadId), requestId: request.requestId, decision })) as Delivery;
        await until(service, () => state(answer.commandId) === "delivered", `${decision} delivered`);
        await untilSettled(threadId, `${decision}: the run ends`);
        await truthful(`${decision}: answered`);
        expect(server.engine.responses.get(request.requestId)).toEqual({ decision });
        // The command ran (its output went back to the provider) only when allowed.
        const ran = itemsOf(threadId, "command_execution").map((item) => ({ input: item.input, status: item.status, exitCode: item.exitCode }));
        if (decision === "accept" || decision === "acceptForSession") expect(ran, decision).toEqual([{ input: "npm test", status: "completed", exitCode: 0 }]);
        else expect(ran, decision).toEqual([{ input: "npm test", status: "cancelled", exitCode: undefined }]);
        const runs = stored(threadId).runs.map((run) => run.status);
        // Cancel ends the run; decline lets it answer without the command.
        expect(runs, decision).toEqual([decision === "cancel" ? "interrupted" : "completed"]);
        expect(agent(threadId)!.status, decision).toBe(decision === "cancel" ? "interrupted" : "idle");
      }
    });
  });

  describe("a question where the harness asks one", () => {
    it("codex", async () => {
      const threadId = await newAgent("Question codex");
      let delivery: Delivery | undefined;
      const shown = await watching(threadId, async () => {
        delivery = await send(threadId, "ask me a question #ask");
        await until(service, () => state(delivery!.commandId) === "answered", "answered");
      });
      // Codex cannot ask in T3's default interaction mode: nothing was asked, the run answered.
      expect(stored(threadId).thread.interactionMode).toBe("default");
      expect(stored(threadId).requests.length > 0, "asked").toBe(CODEX.asks);
      expect(itemsOf(threadId, "user_input_request").length > 0, "a question item").toBe(CODEX.asks);
      expect(
        shown.some((step) => step.status === "needs-input"),
        `shown ${JSON.stringify(shown)}`,
      ).toBe(CODEX.asks);
      expect((await untilSettled(threadId, "the run ends")).status).toBe("idle");
      await truthful("a question's turn ended");
    });
  });

  describe("a message sent while the turn runs does what the composer said", () => {
    it("codex", async () => {
      const threadId = await newAgent("Busy codex");
      const key = keyOf(threadId);
      const first = await send(threadId, "tell a slow held story #hold");
      // Protocol 2 offers a steer once the provider's turn runs (docs/t3-protocols.md), a moment after the run does.
      await until(
        service,
        () => agent(threadId)?.status === "running" && service.intent(key).kind === CODEX.whileRunning,
        `running, and the composer offering ${CODEX.whileRunning}`,
      );
      await truthful("mid-turn, before the steer");
      const text = "steer: and one more thing";
      const delivery = await send(threadId, text, service.intent(key).kind as "steer");
      await until(service, () => ["delivered", "answered"].includes(state(delivery.commandId) ?? ""), "delivered");
      await truthful("mid-turn, the steer delivered");
      expect(server.engine.release(threadId)).toBe(true);
      await until(service, () => state(delivery.commandId) === "answered", "steer answered");
      await until(service, () => state(first.commandId) === "answered", "first message answered");
      await untilSettled(threadId, "the run ends");
      await truthful("the steered turn ended");
      const runs = stored(threadId).runs;
      expect(runs.map((run) => run.status)).toHaveLength(CODEX.turnsAfterRunningMessage);
      // The steer joined the running run: one user message, intent "steer", in that run, and the provider's one reply took it in.
      const steer = itemsOf(threadId, "user_message").filter((item) => item.text === text);
      expect(steer.map((item) => ({ intent: item.inputIntent, runId: item.runId }))).toEqual([{ intent: "steer", runId: runs[0]!.id }]);
      expect(new Set(itemsOf(threadId, "assistant_message").map((item) => item.runId))).toEqual(new Set([runs[0]!.id]));
      expect(storedReplies(threadId)).toEqual(["Codex reply to: tell a slow held story [steered: steer: and one more thing]"]);
      expect(service.delivery(delivery.commandId)!.observed?.outcome).toBe("steered");
      expect(userMessages(threadId, text)).toBe(1);
    });
  });

  describe("interrupt", () => {
    it("codex", async () => {
      const threadId = await newAgent("Interrupt codex");
      await send(threadId, "an endless story #hold");
      // As the real suite waited for the model's request: the provider's turn runs (the composer offers a steer only then).
      await until(service, () => agent(threadId)?.status === "running" && service.intent(keyOf(threadId)).kind === "steer", "the provider's turn running");
      await truthful("mid-turn, before the interrupt");
      const delivery = (await service.request("agent.interrupt", { key: keyOf(threadId) })) as Delivery;
      await until(service, () => state(delivery.commandId) === "delivered", "interrupt delivered");
      const view = await untilSettled(threadId, "the run ends");
      await truthful("interrupted");
      const latest = stored(threadId).runs.at(-1)!;
      expect(CODEX.afterInterrupt, `after the interrupt (the simulator recorded the run ${latest.status})`).toContain(view.status);
      expect(latest.status).toBe("interrupted");
      // The provider stopped: its turn ended interrupted and it wrote no reply.
      expect(stored(threadId).providerTurns.map((turn) => turn.status)).toEqual(["interrupted"]);
      expect(storedReplies(threadId)).toEqual([]);
    });
  });

  describe("a model failure is failed with its reason", () => {
    it("codex", async () => {
      const threadId = await newAgent("Failing codex");
      await send(threadId, "this will fail #fail");
      await until(service, () => agent(threadId)?.status === "failed", "failed");
      // The engine keeps the reason in the run's error item, not on the row (docs/t3-protocols.md).
      const [error] = itemsOf(threadId, "error");
      expect(error).toMatchObject({ status: "failed", runId: stored(threadId).runs[0]!.id });
      await until(service, () => agent(threadId)?.reason === error!.failure.message, "the reason shown");
      expect(agent(threadId)!.reason).toBe("Codex failed: provider error");
      await truthful("failed");
    });
  });

  describe("a capacity limit: held up where T3 shows the retries, then the reply", () => {
    it("codex", async () => {
      const threadId = await newAgent("Limited codex");
      let delivery: Delivery | undefined;
      const shown = await watching(threadId, async () => {
        delivery = await send(threadId, "hit the capacity limit #capacity:3");
        await until(service, () => state(delivery!.commandId) === "answered", "answered after the limit lifted");
      });
      expect((await untilSettled(threadId, "the run ends")).status).toBe("idle");
      await truthful("the capacity limit lifted");
      // The provider retried three times (one error item, running until the limit lifted), then answered.
      const [retry] = itemsOf(threadId, "error");
      expect(retry).toMatchObject({ status: "completed", retry: { attempt: 3 }, failure: { message: "Reconnecting... 3/3", retryable: true } });
      expect(stored(threadId).runs.map((run) => run.status)).toEqual(["completed"]);
      expect(
        shown.some((step) => step.status === "failed"),
        `never shown failed (${JSON.stringify(shown)})`,
      ).toBe(false);
      expect(
        shown.some((step) => step.heldUp),
        `held up while it retried (${JSON.stringify(shown)})`,
      ).toBe(CODEX.showsRetries);
      expect(agent(threadId)!.heldUp).toBe(false);
      expect(assistantTexts(await transcript(threadId))).toEqual(["Codex reply to: hit the capacity limit"]);
    });
  });

  describe("token usage as T3 reports it", () => {
    it("codex", async () => {
      const threadId = await newAgent("Usage codex");
      const delivery = await send(threadId, "say hello");
      await until(service, () => state(delivery.commandId) === "answered", "answered");
      const turns = stored(threadId).providerTurns;
      expect(turns.map((turn) => turn.status)).toEqual(["completed"]);
      // The engine reports no token use for a top-level Codex thread: the fleet shows "not reported", never zero.
      expect(turns.some((turn) => turn.tokenUsage !== undefined || turn.turnTokenUsage !== undefined)).toBe(CODEX.reportsUsage);
      await until(service, () => agent(threadId)?.status === "idle", "idle");
      await truthful("a turn's usage");
      expect(agent(threadId)!.usage !== undefined, `usage shown: ${JSON.stringify(agent(threadId)!.usage)}`).toBe(CODEX.reportsUsage);
    });
  });

  it("SIGKILL and restart of T3: every row back, nothing sent twice", async () => {
    const threads = () => [...server.engine.threads.keys()];
    const before = threads();
    const counts = () => new Map(before.map((threadId) => [threadId, { users: userMessages(threadId), runs: stored(threadId).runs.length }]));
    const countsBefore = counts();
    const turnsBefore = before.reduce((sum, threadId) => sum + stored(threadId).providerTurns.length, 0);
    await server.kill();
    await until(service, () => phase() !== "online", "offline");
    await server.start();
    server.engine.reconcileAfterRestart();
    await until(service, () => phase() === "online", "online after the restart");
    expect(threads()).toEqual(before);
    await until(service, () => before.every((threadId) => agent(threadId) !== undefined), "every row back");
    expect(new Set([...service.model.agents()].map((view) => view.threadId))).toEqual(new Set(before));
    await truthful("T3 back after SIGKILL");
    // No message stored twice, no run started again: nothing was sent to the provider after the restart.
    expect(counts()).toEqual(countsBefore);
    expect(before.reduce((sum, threadId) => sum + stored(threadId).providerTurns.length, 0)).toBe(turnsBefore);
  });
});

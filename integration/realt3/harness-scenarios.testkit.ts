// The real-harness scenarios (issue 21), the same for every harness and server kind: a real T3
// server runs the real CLI (integration/harnesses) against the scripted model (integration/model);
// the fleet service drives it as a user would, and every claim is checked where it happens: at the
// model server (what the harness sent its model) and in T3 (what it stored). Each scenario tags its
// prompts with the harness and scenario, so concurrent scenarios never read each other's requests.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { AgentDetail } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import type { ApprovalDecision, RunningMessageBehaviour } from "../../shared/fleet/facts";
import type { AgentView } from "../../shared/fleet/types";
import type { HarnessName } from "../harnesses/install";
import { PLAIN_REPLY, SHELL_MARKER, WRITTEN_FILE } from "../model/script";
import type { RecordedRequest, ScriptedModelServer } from "../model/scripted-model-server";
import { type Fleet, agent, deliveryStates, env, keyOf, recoverServer, rows, until } from "./fleet.testkit";
import type { RealT3Server } from "./harness.testkit";

/** What one harness is, and what it was observed to do (docs/t3-protocols.md, "Harnesses under T3"). */
export interface HarnessUnderTest {
  name: HarnessName;
  /** T3's driver id, which the fleet shows as the provider. */
  driver: string;
  instanceId: string;
  model: string;
  /** What a message sent while a turn runs does; undefined where T3 reports it per message (protocol 2). */
  runningMessage?: RunningMessageBehaviour;
  /** The mode the fleet offers by default while a turn runs. */
  whileRunning: "steer" | "queue";
  /** Assistant turns in T3 after a message sent mid-reply: 1 when it joined the running turn. */
  turnsAfterRunningMessage: number;
  decisions: ApprovalDecision[];
  /**
   * Whether an accepted command can write the workspace; null where it varied between runs (Codex ran
   * accepted commands sometimes in its read-only sandbox: "Read-only file system").
   */
  acceptedCommandWrites: boolean | null;
  /**
   * What an interrupted turn is shown as (T3 0.0.42 sometimes also stops a Claude session on
   * interrupt, and sometimes records Claude's interrupted turn as completed).
   */
  afterInterrupt: ("interrupted" | "ended" | "idle")[];
  /** The harness asks a question in T3's default interaction mode. */
  asks: boolean;
  /** A capacity limit it retries through shows in T3 (and so in the fleet) as held up. */
  showsRetries: boolean;
  /** Native subagents T3 reports as task.* activities. */
  subagents: boolean;
  /** T3 reports the thread's token use for this harness (0.0.42: none for OpenCode). */
  reportsUsage: boolean;
}

/** The server side of a scenario: creating threads and reading what T3 stored, per protocol. */
export interface ServerSide {
  createThread(harness: HarnessUnderTest, title: string, runtimeMode: "full-access" | "approval-required"): Promise<string>;
  /** How many user messages with exactly `text` T3 stored in the thread. */
  userMessages(threadId: string, text: string): Promise<number>;
  /** The distinct turns (runs) of the thread's assistant messages, in order. */
  assistantTurns(threadId: string): Promise<string[]>;
  /** The thread's failure reason as T3 stored it. */
  storedFailure(threadId: string): Promise<string | null>;
  /** The ids of every thread T3 lists (the fleet's rows must match them). */
  threadIds(): Promise<string[]>;
  /** How many user messages T3 stored in the thread. */
  userMessageCount(threadId: string): Promise<number>;
  /** T3's own record of the latest turn's state ("completed", "interrupted", …), where the side reads it. */
  latestTurnState(threadId: string): Promise<string | null>;
}

export interface ScenarioContext {
  fleet: Fleet;
  model: ScriptedModelServer;
  side: ServerSide;
  /** The folder T3 creates each harness's project in (one workspace per harness). */
  workspaceOf(harness: HarnessUnderTest): string;
  /**
   * The truth oracle after a step (issue 39): what T3 stored of `threadIds` (and their children), or
   * of every thread, against what the fleet says; fails with both sides of any contradiction.
   */
  truthful(step: string, threadIds?: string[]): Promise<void>;
}

export const tag = (harness: HarnessUnderTest, scenario: string) => `[${harness.name}:${scenario}]`;
export const requestsTagged = (model: ScriptedModelServer, marker: string) =>
  model.requests.filter((request) => request.api !== null && request.text.includes(marker));
/** A harness's slowest step here is OpenCode's first turn (20-40 s on a loaded two-core machine). */
export const TURN_MS = 120_000;

export async function newAgent(
  ctx: ScenarioContext,
  harness: HarnessUnderTest,
  title: string,
  runtimeMode: "full-access" | "approval-required" = "full-access",
): Promise<string> {
  const threadId = await ctx.side.createThread(harness, title, runtimeMode);
  await until(ctx.fleet, () => agent(ctx.fleet, threadId) !== undefined, `${title} in the fleet`);
  return threadId;
}

/** Sends `text` from the fleet as a new turn and returns its delivery. */
export async function send(
  ctx: ScenarioContext,
  threadId: string,
  text: string,
  expectedIntent: "new-turn" | "steer" | "queue" = "new-turn",
): Promise<Delivery> {
  return (await ctx.fleet.service.request("agent.send", { key: keyOf(ctx.fleet, threadId), text, expectedIntent })) as Delivery;
}

const settled = (view: AgentView | undefined) =>
  view !== undefined && !["running", "starting", "queued", "waiting", "needs-approval", "needs-input"].includes(view.status);

export async function untilSettled(ctx: ScenarioContext, threadId: string, what: string): Promise<AgentView> {
  await until(
    ctx.fleet,
    () => settled(agent(ctx.fleet, threadId)),
    () => `${what} (shown as ${agent(ctx.fleet, threadId)?.status})`,
    TURN_MS,
  );
  return agent(ctx.fleet, threadId)!;
}

export async function transcript(ctx: ScenarioContext, threadId: string): Promise<AgentDetail> {
  const key = keyOf(ctx.fleet, threadId);
  await ctx.fleet.service.request("agent.open", { key });
  await until(ctx.fleet, () => ctx.fleet.service.detail(key)?.items.length > 0, "transcript loaded");
  const detail = ctx.fleet.service.detail(key);
  await ctx.fleet.service.request("agent.close", { key });
  return detail;
}

const assistantTexts = (detail: AgentDetail) => detail.items.flatMap((item) => (item.type === "message" && item.role === "assistant" ? [item.text] : []));

/** The row shows the harness's provider and model as T3 reports them. */
export async function showsProviderAndModel(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Provider ${harness.name}`);
  await ctx.truthful(`${harness.name}: a new thread`, [threadId]);
  const view = agent(ctx.fleet, threadId)!;
  expect(view.providerInstanceId).toBe(harness.instanceId);
  expect(view.model).toBe(harness.model);
  expect(env(ctx.fleet)!.connection.phase).toBe("online");
}

/** A turn from the fleet: the model server answered it, and the fleet shows the reply T3 stored. */
export async function turnWithReply(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Turn ${harness.name}`);
  const text = `say hello ${tag(harness, "turn")}`;
  const delivery = await send(ctx, threadId, text);
  await until(ctx.fleet, () => ctx.fleet.service.delivery(delivery.commandId)?.state === "answered", "answered", TURN_MS);
  await ctx.truthful(`${harness.name}: a turn answered`, [threadId]);
  // Protocol 2's rows name only the provider instance; protocol 1's sessions also name the driver.
  const view = agent(ctx.fleet, threadId)!;
  expect(view.providerDriver ?? view.providerInstanceId).toBe(harness.driver);
  expect(requestsTagged(ctx.model, tag(harness, "turn")).map((request) => request.answer)).toEqual(["text"]);
  expect(assistantTexts(await transcript(ctx, threadId))).toEqual([PLAIN_REPLY]);
  expect(await ctx.side.userMessages(threadId, text)).toBe(1);
}

/** Each decision the fleet offers for this harness's approval, carried out and checked at the model server. */
export async function approvalDecisions(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  await Promise.all(
    harness.decisions.map(async (decision) => {
      const scenario = `approval-${decision}`;
      const threadId = await newAgent(ctx, harness, `Approval ${decision} ${harness.name}`, "approval-required");
      await send(ctx, threadId, `run the approval command ${tag(harness, scenario)}`);
      await until(
        ctx.fleet,
        () => agent(ctx.fleet, threadId)?.status === "needs-approval" && agent(ctx.fleet, threadId)!.pending.length === 1,
        `${decision}: needs approval`,
        TURN_MS,
      );
      await ctx.truthful(`${harness.name} ${decision}: the approval pending`, [threadId]);
      const key = keyOf(ctx.fleet, threadId);
      const request = agent(ctx.fleet, threadId)!.pending[0]!;
      expect(request.kind === "approval" && request.decisions.map((option) => option.decision), `${harness.name}: decisions offered`).toEqual(
        harness.decisions,
      );
      const delivery = (await ctx.fleet.service.request("agent.respondApproval", { key, requestId: request.requestId, decision })) as Delivery;
      await until(ctx.fleet, () => ctx.fleet.service.delivery(delivery.commandId)?.state === "delivered", `${decision} delivered`, TURN_MS);
      await untilSettled(ctx, threadId, `${decision}: the turn ends`);
      await ctx.truthful(`${harness.name} ${decision}: answered, the turn ended`, [threadId]);
      const results = requestsTagged(ctx.model, tag(harness, scenario)).filter((seen) => seen.conversation?.endsWithToolResult);
      const ran = results.some((seen) => seen.conversation!.toolResult.includes(SHELL_MARKER));
      if (decision === "accept" || decision === "acceptForSession") {
        // The command ran, and its output went back to the model; whether it could write is the harness's sandbox.
        expect(ran, `${harness.name} ${decision}: the command's output reached the model`).toBe(true);
        const output = results.find((seen) => seen.conversation!.toolResult.includes(SHELL_MARKER))!.conversation!.toolResult;
        if (harness.acceptedCommandWrites !== null)
          expect(/read-only file system/i.test(output), `${harness.name} ${decision}: sandboxed read-only (${output})`).toBe(!harness.acceptedCommandWrites);
      } else {
        expect(ran, `${harness.name} ${decision}: the command did not run`).toBe(false);
        for (const seen of results) expect(seen.conversation!.toolResult).toMatch(/reject|declin|cancel|denied/i);
      }
    }),
  );
  // The workspace shows the change where the harness lets an accepted command write.
  if (harness.acceptedCommandWrites !== null) expect(existsSync(join(ctx.workspaceOf(harness), WRITTEN_FILE))).toBe(harness.acceptedCommandWrites);
}

/** A question where the harness asks one, answered from the fleet; the answer reaches the model. */
export async function question(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Question ${harness.name}`);
  await send(ctx, threadId, `ask me a question ${tag(harness, "question")}`);
  if (!harness.asks) {
    // What the harness itself answered its model: it cannot ask in T3's default mode.
    const refused = await ctx.model.waitFor(
      (seen) => seen.text.includes(tag(harness, "question")) && seen.conversation?.endsWithToolResult === true,
      "the tool's answer",
      TURN_MS,
    );
    expect(refused.conversation!.toolResult).toMatch(/unavailable/i);
    const view = await untilSettled(ctx, threadId, "the turn ends");
    await ctx.truthful(`${harness.name}: a question's turn ended`, [threadId]);
    expect(view.status).not.toBe("needs-input");
    return;
  }
  await until(
    ctx.fleet,
    () => agent(ctx.fleet, threadId)?.status === "needs-input" && agent(ctx.fleet, threadId)!.pending.length === 1,
    "needs input",
    TURN_MS,
  );
  await ctx.truthful(`${harness.name}: a question pending`, [threadId]);
  const key = keyOf(ctx.fleet, threadId);
  const request = agent(ctx.fleet, threadId)!.pending[0]!;
  if (request.kind !== "input") throw new Error(`expected a question, got ${request.kind}`);
  expect(request.questions[0]).toMatchObject({ question: "Which colour should the button be?", options: [{ label: "Blue" }, { label: "Green" }] });
  const answers = { [request.questions[0]!.id]: "Green" };
  const delivery = (await ctx.fleet.service.request("agent.respondInput", { key, requestId: request.requestId, answers })) as Delivery;
  await until(ctx.fleet, () => ctx.fleet.service.delivery(delivery.commandId)?.state === "delivered", "answer delivered", TURN_MS);
  const answered = await ctx.model.waitFor(
    (seen) => seen.text.includes(tag(harness, "question")) && seen.conversation?.endsWithToolResult === true,
    "the answer at the model",
    TURN_MS,
  );
  expect(answered.conversation!.toolResult).toContain("Green");
  await untilSettled(ctx, threadId, "the turn ends");
  await ctx.truthful(`${harness.name}: answered, the turn ended`, [threadId]);
}

/** How long a held reply waits after T3 holds a message sent mid-reply, for the message to reach the harness. */
export const MESSAGE_REACHES_HARNESS_MS = 25_000;

/**
 * A message sent while the model streams its reply: the fleet says first what this harness does
 * with it, then what was observed, and the model server and T3 agree.
 */
export async function messageWhileRunning(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Busy ${harness.name}`);
  const key = keyOf(ctx.fleet, threadId);
  const marker = tag(harness, "running");
  await send(ctx, threadId, `tell a slow held story ${marker}`);
  const first = await ctx.model.waitFor((seen) => seen.api !== null && seen.text.includes(marker), "the slow reply's request", TURN_MS);
  // Protocol 2 offers a steer only once the provider's turn runs (docs/t3-protocols.md), a moment after the run does.
  await until(
    ctx.fleet,
    () => agent(ctx.fleet, threadId)?.status === "running" && ctx.fleet.service.intent(key).kind === harness.whileRunning,
    () => `running, and the composer offering ${harness.whileRunning} (it offers ${ctx.fleet.service.intent(key).kind})`,
    TURN_MS,
  );
  await ctx.truthful(`${harness.name}: mid-turn, before the message`, [threadId]);
  const intent = ctx.fleet.service.intent(key);
  const text = `steer: and one more thing ${marker}`;
  const delivery = await send(ctx, threadId, text, intent.kind as "steer" | "queue");
  // The slow reply holds halfway (script.ts) and goes on a while after T3 holds the message: time for it to reach
  // the harness (on a loaded two-core machine T3 0.0.42 took up to ~15 s to pass it to Codex), so a harness that
  // takes a message into the running reply closes the stream, and one that waits finishes it.
  await until(
    ctx.fleet,
    () => ["delivered", "answered"].includes(ctx.fleet.service.delivery(delivery.commandId)?.state ?? ""),
    () => `delivered (${ctx.fleet.service.delivery(delivery.commandId)?.state})`,
    TURN_MS,
  );
  await ctx.truthful(`${harness.name}: mid-turn, the message delivered`, [threadId]);
  ctx.model.release(first, MESSAGE_REACHES_HARNESS_MS);
  const releasedAt = Date.now() + MESSAGE_REACHES_HARNESS_MS;
  await until(
    ctx.fleet,
    () => ctx.fleet.service.delivery(delivery.commandId)?.state === "answered",
    () => `answered (${ctx.fleet.service.delivery(delivery.commandId)?.state})`,
    TURN_MS,
  );
  // The model saw the message after the story in the same conversation.
  const after = await ctx.model.waitFor((seen) => seen.api !== null && seen.text.includes(text), "the message at the model", TURN_MS);
  expect(after.conversation!.userTexts.slice(-2)).toEqual([`tell a slow held story ${marker}`, text]);
  const ended = await ctx.model.streamEnded(first);
  const timeline = () =>
    [
      `reply asked ${first.at}, ended ${first.endedAt} (${ended})`,
      `released ${releasedAt}`,
      `message at the model ${after.at}`,
      `the fleet showed ${deliveryStates(ctx.fleet, delivery.commandId).join(" → ")}`,
    ].join("; ");
  expect(ended, timeline()).toBe(harness.runningMessage === "interrupts-reply" ? "aborted" : "completed");
  const turns = await ctx.side.assistantTurns(threadId);
  expect(turns, `${harness.name}: turns T3 shows`).toHaveLength(harness.turnsAfterRunningMessage);
  const observed = ctx.fleet.service.delivery(delivery.commandId)!.observed;
  expect(observed?.outcome, `${harness.name}: what the fleet observed`).toBe(harness.turnsAfterRunningMessage === 1 ? "steered" : "new-turn");
  expect(await ctx.side.userMessages(threadId, text)).toBe(1);
  // T3 says the turn ended, and so does the fleet: settled, and a message now starts a new turn (issue 39:
  // a steer newer than its turn's request was shown as a turn asked for, "starting" for ever).
  expect(await ctx.side.latestTurnState(threadId)).toBe("completed");
  await until(
    ctx.fleet,
    () => agent(ctx.fleet, threadId)?.status === "idle" && ctx.fleet.service.intent(key).kind === "new-turn",
    () => `${harness.name}: idle as T3 says (shown ${agent(ctx.fleet, threadId)?.status}: ${agent(ctx.fleet, threadId)?.reason})`,
  );
  await ctx.truthful(`${harness.name}: the turn with the message ended`, [threadId]);
}

/** Interrupt from the fleet: the harness closes its model stream and the agent is no longer running. */
export async function interrupt(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Interrupt ${harness.name}`);
  const marker = tag(harness, "interrupt");
  await send(ctx, threadId, `an endless story ${marker}`);
  const streaming = await ctx.model.waitFor((seen) => seen.api !== null && seen.text.includes(marker), "the endless reply's request", TURN_MS);
  await until(ctx.fleet, () => agent(ctx.fleet, threadId)?.status === "running", "running", TURN_MS);
  await ctx.truthful(`${harness.name}: mid-turn, before the interrupt`, [threadId]);
  const delivery = (await ctx.fleet.service.request("agent.interrupt", { key: keyOf(ctx.fleet, threadId) })) as Delivery;
  await until(ctx.fleet, () => ctx.fleet.service.delivery(delivery.commandId)?.state === "delivered", "interrupt delivered", TURN_MS);
  expect(await ctx.model.streamEnded(streaming)).toBe("aborted");
  const view = await untilSettled(ctx, threadId, "the turn ends");
  await ctx.truthful(`${harness.name}: interrupted`, [threadId]);
  const stored = await ctx.side.latestTurnState(threadId);
  expect(harness.afterInterrupt, `${harness.name}: after the interrupt (T3 recorded the turn ${stored})`).toContain(view.status);
  // Idle only where T3 itself recorded the interrupted turn as completed: never the fleet's guess.
  if (view.status === "idle") expect(stored).toBe("completed");
}

/** A model that refuses the request: failed, with T3's reason. */
export async function modelFailure(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Failing ${harness.name}`);
  await send(ctx, threadId, `this will fail ${tag(harness, "failure")}`);
  await until(
    ctx.fleet,
    () => agent(ctx.fleet, threadId)?.status === "failed",
    () => `failed (shown as ${agent(ctx.fleet, threadId)?.status})`,
    TURN_MS,
  );
  await ctx.truthful(`${harness.name}: failed`, [threadId]);
  const stored = await ctx.side.storedFailure(threadId);
  const reason = agent(ctx.fleet, threadId)!.reason;
  expect(reason, `${harness.name}: the reason shown`).toBeTruthy();
  if (stored) expect(reason).toBe(stored);
  expect(requestsTagged(ctx.model, tag(harness, "failure")).every((seen) => seen.answer === "400")).toBe(true);
}

/** A capacity limit the harness retries through: held up where T3 shows the retries, then the reply. */
export async function capacityLimit(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Limited ${harness.name}`);
  const shown: { status: string; heldUp: boolean }[] = [];
  const key = keyOf(ctx.fleet, threadId);
  const record = () => {
    const view = ctx.fleet.service.model.agent(key);
    if (view && (shown.at(-1)?.status !== view.status || shown.at(-1)?.heldUp !== view.heldUp)) shown.push({ status: view.status, heldUp: view.heldUp });
  };
  ctx.fleet.service.on("event", record);
  try {
    const delivery = await send(ctx, threadId, `hit the capacity limit x3 ${tag(harness, "capacity")}`);
    await until(
      ctx.fleet,
      () => ctx.fleet.service.delivery(delivery.commandId)?.state === "answered",
      () => `answered after the limit lifted (${JSON.stringify(shown)})`,
      TURN_MS,
    );
  } finally {
    ctx.fleet.service.off("event", record);
  }
  await ctx.truthful(`${harness.name}: the capacity limit lifted, answered`, [threadId]);
  expect(requestsTagged(ctx.model, tag(harness, "capacity")).map((seen) => seen.answer)).toEqual(["429", "429", "429", "text"]);
  expect(
    shown.some((step) => step.status === "failed"),
    `${harness.name}: never shown failed (${JSON.stringify(shown)})`,
  ).toBe(false);
  expect(
    shown.some((step) => step.heldUp),
    `${harness.name}: held up while it retried (${JSON.stringify(shown)})`,
  ).toBe(harness.showsRetries);
  expect(assistantTexts(await transcript(ctx, threadId))).toEqual([PLAIN_REPLY]);
}

/** Native subagents (Claude's Agent tool): rows under their thread, from T3's task activities. */
export async function nativeSubagents(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Delegating ${harness.name}`);
  await send(ctx, threadId, `delegate to a subagent ${tag(harness, "subagent")}`);
  await ctx.model.waitFor((seen) => seen.conversation?.userTexts.at(-1) === "say hello from the subagent", "the subagent's own request", TURN_MS);
  // T3 titles the finished task with its summary: the subagent's own reply.
  await until(
    ctx.fleet,
    () => agent(ctx.fleet, threadId)?.subagents.some((subagent) => subagent.kind === "local_agent" && subagent.status === "completed") === true,
    () => `a completed subagent row (${JSON.stringify(agent(ctx.fleet, threadId)?.subagents)})`,
    TURN_MS,
  );
  await ctx.truthful(`${harness.name}: a native subagent completed`, [threadId]);
}

/** Token use as T3 reports it matches what the model reported; `reported` reads it from T3. */
export async function tokenUsage(
  ctx: ScenarioContext,
  harness: HarnessUnderTest,
  reported: (threadId: string) => Promise<{ inputTokens: number; outputTokens: number } | null>,
): Promise<void> {
  const threadId = await newAgent(ctx, harness, `Usage ${harness.name}`);
  const delivery = await send(ctx, threadId, `say hello ${tag(harness, "usage")}`);
  await until(ctx.fleet, () => ctx.fleet.service.delivery(delivery.commandId)?.state === "answered", "answered", TURN_MS);
  await ctx.truthful(`${harness.name}: a turn's usage`, [threadId]);
  const [request] = requestsTagged(ctx.model, tag(harness, "usage")) as [RecordedRequest];
  const usage = await reported(threadId);
  // The model reported its figures in every case; whether T3 passes them on is the observation.
  expect(request.usage?.outputTokens, "the model reported the turn's usage").toBeGreaterThan(0);
  if (!harness.reportsUsage) {
    // T3 reports no token use for this harness's threads: the fleet shows "not reported", never zero.
    expect(usage).toBeNull();
    return;
  }
  expect(usage, `${harness.name}: T3 reports the turn's usage`).not.toBeNull();
  expect(usage!.inputTokens).toBeGreaterThanOrEqual(request.usage!.inputTokens);
  // Codex reports the response's final figure; T3 takes Claude's from the stream's start (message_start says 1).
  expect(usage!.outputTokens).toBeGreaterThanOrEqual(1);
  expect(usage!.outputTokens).toBeLessThanOrEqual(request.usage!.outputTokens);
}

/** SIGKILL and restart of the server after every scenario: every row back, no message stored or sent to a model twice. */
export async function killAndRestart(ctx: ScenarioContext, server: RealT3Server, onlineWithinMs: number): Promise<void> {
  const before = await ctx.side.threadIds();
  const requestsBefore = ctx.model.requests.length;
  const userCounts = new Map<string, number>();
  for (const threadId of before) userCounts.set(threadId, await ctx.side.userMessageCount(threadId));
  await server.kill();
  await until(ctx.fleet, () => env(ctx.fleet)?.connection.phase === "offline", "offline");
  await server.restart();
  await until(ctx.fleet, () => env(ctx.fleet)?.connection.phase === "online", "online after the restart", onlineWithinMs);
  const after = await ctx.side.threadIds();
  expect(new Set(after)).toEqual(new Set(before));
  await until(ctx.fleet, () => after.every((threadId) => agent(ctx.fleet, threadId) !== undefined), "every row back");
  expect(new Set(rows(ctx.fleet).map((view) => view.threadId))).toEqual(new Set(after));
  await ctx.truthful("every thread, T3 back after SIGKILL");
  for (const threadId of after) expect(await ctx.side.userMessageCount(threadId), `user messages of ${threadId}`).toBe(userCounts.get(threadId));
  // No harness was asked anything again: nothing was resent to a model after the restart.
  expect(ctx.model.requests.slice(requestsBefore).filter((request) => request.api !== null)).toEqual([]);
  await recoverServer(server);
}

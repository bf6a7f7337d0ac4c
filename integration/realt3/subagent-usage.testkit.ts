// Issue 39 with the real harness: Claude Code's native subagent (its `Agent` tool, run in the
// background) that completes and one that fails inside its own conversation (the scripted model
// refuses the subagent's request), and the token totals as T3 reports them. Each claim is read where
// it happens: the model server (the subagent's request, Claude's follow-up turn after it), T3's store
// (no user message for that turn) and the fleet (needs, roll-up, notifications, words).
import { expect } from "vitest";
import { compactCount, contextTotalWords, totalWords, usageTotals } from "../../shared/fleet/changes-usage";
import { needsYou, tallyNeeds } from "../../shared/fleet/needs";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import { failedSubagentWords } from "../../shared/fleet/subagents";
import { FAILING_SUBAGENT_PROMPT, SLOW_SUBAGENT_PROMPT } from "../model/script";
import type { RecordedRequest } from "../model/scripted-model-server";
import { type Fleet, agent, keyOf, rows, until } from "./fleet.testkit";
import { type HarnessUnderTest, type ScenarioContext, TURN_MS, newAgent, send, tag } from "./harness-scenarios.testkit";

/** The fleet's notifications about one agent. */
const notificationsAbout = (fleet: Fleet, key: string): NotificationIntent[] =>
  fleet.events.flatMap((event) => (event.type === "notification" && event.notification.agentKey === key ? [event.notification] : []));

const messages = (fleet: Fleet, key: string, role: "user" | "assistant") =>
  (fleet.service.detail(key)?.items ?? []).flatMap((item) => (item.type === "message" && item.role === role ? [item] : []));

/**
 * Delegates to a subagent and waits until the subagent ended, Claude Code started its follow-up turn
 * in the parent (the model's request after the subagent's, carrying the Agent call's result) and
 * the fleet shows that turn's reply with the parent at rest. The agent stays open (its transcript
 * followed) until `close`.
 */
async function delegate(ctx: ScenarioContext, harness: HarnessUnderTest, how: "lingering" | "failing") {
  const threadId = await newAgent(ctx, harness, `Delegating (${how}) ${harness.name}`);
  const key = keyOf(ctx.fleet, threadId);
  const marker = tag(harness, `subagent-${how}`);
  const text = `delegate to a ${how} subagent ${marker}`;
  await ctx.fleet.service.request("agent.open", { key });
  const delivery = await send(ctx, threadId, text);
  const prompt = how === "failing" ? FAILING_SUBAGENT_PROMPT : SLOW_SUBAGENT_PROMPT;
  const own = await ctx.model.waitFor((seen) => seen.conversation?.userTexts.at(-1) === prompt, "the subagent's own request", TURN_MS);
  // Claude's follow-up turn: a request of the parent's conversation that follows the Agent call's result, not a tool result itself.
  const followUp: RecordedRequest = await ctx.model.waitFor(
    (seen) =>
      seen.index > own.index && seen.text.includes(marker) && (seen.conversation?.toolResults ?? 0) > 0 && seen.conversation?.endsWithToolResult === false,
    "Claude's follow-up turn in the parent after its subagent ended",
    TURN_MS,
  );
  // At rest only once the follow-up turn's reply is whole in the fleet's transcript and the model's
  // answer ended: when the subagent fails after the parent's first turn ended, T3 shows the parent
  // ready in between, and the follow-up's first words can reach the fleet before T3 reports its turn
  // running (the likely cause of a CI run that read "idle" here, then "running").
  await until(
    ctx.fleet,
    () => {
      const replies = messages(ctx.fleet, key, "assistant");
      const last = replies.at(-1);
      const followUpWhole = followUp.endedAt !== null && last !== undefined && !last.streaming && last.runId !== replies[0]!.runId;
      return followUpWhole && agent(ctx.fleet, threadId)?.status === "idle" && ctx.fleet.service.delivery(delivery.commandId)?.state === "answered";
    },
    () =>
      `the follow-up turn's reply with the parent at rest (${agent(ctx.fleet, threadId)?.status}, ${JSON.stringify(agent(ctx.fleet, threadId)?.subagents)})`,
    TURN_MS,
  );
  await ctx.truthful(`${harness.name}: the ${how} subagent's parent at rest`, [threadId]);
  return { threadId, key, text, followUp, close: () => ctx.fleet.service.request("agent.close", { key }) };
}

/** The follow-up turn Claude starts after its subagent is the agent's own: T3 stores no user message for it, and neither does the fleet show one. */
async function followUpIsTheAgentsOwn(ctx: ScenarioContext, parent: Awaited<ReturnType<typeof delegate>>): Promise<void> {
  expect(await ctx.side.userMessageCount(parent.threadId), "user messages T3 stored").toBe(1);
  expect(messages(ctx.fleet, parent.key, "user").map((message) => message.text)).toEqual([parent.text]);
  const replies = messages(ctx.fleet, parent.key, "assistant");
  expect(new Set(replies.map((message) => message.runId)).size, "the subagent's turn and Claude's follow-up turn").toBeGreaterThanOrEqual(2);
  expect(replies.at(-1)!.createdAt > messages(ctx.fleet, parent.key, "user")[0]!.createdAt).toBe(true);
}

/** A native subagent that completes: a row under its parent, and nothing that needs the user. */
export async function nativeSubagentCompletes(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const parent = await delegate(ctx, harness, "lingering");
  try {
    const view = agent(ctx.fleet, parent.threadId)!;
    expect(view.subagents).toEqual([expect.objectContaining({ status: "completed", title: "Scripted subtask", kind: "local_agent", reason: null })]);
    expect(needsYou(view)).toBe(false);
    expect(tallyNeeds(ctx.fleet.service.model.agents()).needYou.map((shown) => shown.key)).not.toContain(parent.key);
    expect(ctx.fleet.service.model.rollup(ctx.fleet.environmentId, parent.threadId)).toBeNull();
    expect(notificationsAbout(ctx.fleet, parent.key)).toEqual([]);
    await followUpIsTheAgentsOwn(ctx, parent);
  } finally {
    await parent.close();
  }
}

/** A native subagent that fails: its parent's roll-up, the inbox naming it, every count, one notification opening the parent. */
export async function nativeSubagentFails(ctx: ScenarioContext, harness: HarnessUnderTest): Promise<void> {
  const parent = await delegate(ctx, harness, "failing");
  try {
    expect(ctx.model.requests.filter((seen) => seen.conversation?.userTexts.at(-1) === FAILING_SUBAGENT_PROMPT).every((seen) => seen.answer === "400")).toBe(
      true,
    );
    const view = agent(ctx.fleet, parent.threadId)!;
    // The parent itself went on and rests; its subagent's failure is what needs the user. Each claim on its own (soft), so a regression shows them all.
    expect(view.status).toBe("idle");
    expect.soft(ctx.fleet.service.model.rollup(ctx.fleet.environmentId, parent.threadId), "the parent's roll-up").toBe("failed");
    expect.soft(needsYou(view), "needs you").toBe(true);
    expect
      .soft(
        tallyNeeds(ctx.fleet.service.model.agents()).needYou.map((shown) => shown.key),
        "the inbox",
      )
      .toContain(parent.key);
    const counts = ctx.fleet.service.model.counts();
    expect.soft(counts.needsYou, "the one count").toBe(tallyNeeds(ctx.fleet.service.model.agents()).needYou.length);
    expect.soft(counts.failedNeedingYou, "failures that turn the tray and tab red").toBeGreaterThanOrEqual(1);
    expect
      .soft(notificationsAbout(ctx.fleet, parent.key), "one notification, opening the parent")
      .toEqual([
        expect.objectContaining({ reason: "subagent-failed", agentKey: parent.key, title: expect.stringContaining('"Scripted failing subtask" failed') }),
      ]);
    expect
      .soft(view.subagents, "the subagent, named, with why")
      .toEqual([
        expect.objectContaining({ status: "failed", title: "Scripted failing subtask", reason: expect.stringContaining("Scripted subagent failure") }),
      ]);
    expect.soft(failedSubagentWords(view), "the inbox's words").toMatch(/^subagent "Scripted failing subtask" failed: .*Scripted subagent failure/);
    await followUpIsTheAgentsOwn(ctx, parent);
    // Acknowledged, it leaves the count; the notification stays the only one.
    await ctx.fleet.service.request("agent.acknowledge", { key: parent.key });
    await until(ctx.fleet, () => agent(ctx.fleet, parent.threadId)?.acknowledged === true, "acknowledged");
    await ctx.truthful(`${harness.name}: the failed subagent acknowledged`, [parent.threadId]);
    expect(needsYou(agent(ctx.fleet, parent.threadId)!)).toBe(false);
    expect(notificationsAbout(ctx.fleet, parent.key)).toHaveLength(1);
  } finally {
    await parent.close();
  }
}

/** What the model server reported for a thread's requests (those carrying `marker`): input + output, the tokens processed. */
function modelProcessed(ctx: ScenarioContext, marker: string): { total: number; each: string } {
  const seen = ctx.model.modelRequestsContaining(marker);
  return {
    total: seen.reduce((sum, request) => sum + (request.usage ? request.usage.inputTokens + request.usage.outputTokens : 0), 0),
    each: seen.map((request) => `${request.answer}: ${request.usage?.inputTokens}+${request.usage?.outputTokens}`).join(", "),
  };
}

/** What T3 reported for a thread: its thread figure (the tokens processed), its newest context fill, and when. */
export interface ReportedUsage {
  thread: number | null;
  context: number | null;
  at: string;
}

/**
 * The token figures over turns and over the fleet: the token-usage scenario's threads (one per
 * harness) take a second turn; each thread's figure is then what T3 reported for it (`reported`),
 * which is no more than its model requests processed (the model server's own figures) and, over two
 * turns, more than the context it holds: use, never the fill. The fleet's total over those threads
 * is their sum and says over how many of them T3 reported one, with the context fill summed apart.
 */
export async function tokenTotals(
  ctx: ScenarioContext,
  harnesses: HarnessUnderTest[],
  reported: (threadId: string) => Promise<ReportedUsage | null>,
): Promise<void> {
  const threads = rows(ctx.fleet).filter((view) => harnesses.some((harness) => view.title === `Usage ${harness.name}`));
  expect(threads).toHaveLength(harnesses.length);
  let tokens = 0;
  let withTokens = 0;
  let context = 0;
  let withContext = 0;
  for (const harness of harnesses) {
    const threadId = threads.find((view) => view.title === `Usage ${harness.name}`)!.threadId;
    const delivery = await send(ctx, threadId, `say hello again ${tag(harness, "usage-again")}`);
    await until(ctx.fleet, () => ctx.fleet.service.delivery(delivery.commandId)?.state === "answered", "the second turn answered", TURN_MS);
    await ctx.truthful(`${harness.name}: the second turn answered`, [threadId]);
    const first = await reported(threadId);
    if (!harness.reportsUsage) {
      expect(first, `${harness.name}: T3 reports no tokens`).toBeNull();
      expect(agent(ctx.fleet, threadId)?.usage).toBeUndefined();
      continue;
    }
    // The fleet has read T3's newest report, then both say the same.
    await until(
      ctx.fleet,
      () => (agent(ctx.fleet, threadId)?.usage?.reportedAt ?? "") >= (first?.at ?? "~"),
      `${harness.name}: T3's newest token report in the fleet`,
      TURN_MS,
    );
    const report = (await reported(threadId))!;
    const view = agent(ctx.fleet, threadId)!;
    expect(view.usage?.thread?.total, `${harness.name}: the thread's tokens as T3 reported them`).toBe(report.thread);
    // T3's input and output figures are its newest model request's: never shown as the thread's.
    expect(view.usage!.thread).toMatchObject({ input: null, cachedInput: null, output: null, reasoning: null });
    // Both turns' requests carry the first turn's words.
    const processed = modelProcessed(ctx, `[${harness.name}:usage`);
    expect(report.thread!, `${harness.name}: no more than its requests processed (${processed.each})`).toBeLessThanOrEqual(processed.total);
    expect(report.thread!, `${harness.name}: over two turns, more than the context it holds`).toBeGreaterThan(report.context!);
    tokens += report.thread!;
    withTokens++;
    context += report.context!;
    withContext++;
  }
  const shown = rows(ctx.fleet).filter((view) => threads.some((thread) => thread.key === view.key));
  const { fleet } = usageTotals(shown, () => "T3");
  expect(fleet).toMatchObject({ tokens, reported: withTokens, agents: shown.length, context, contextReported: withContext });
  expect(totalWords(fleet)).toBe(`${compactCount(tokens)} tokens T3 reported over ${withTokens} of ${shown.length} agents`);
  expect(contextTotalWords(fleet)).toBe(`context now ${compactCount(context)} over ${withContext} of ${shown.length} agents`);
}

// The fleet window on a mixed fleet: a 0.0.24 fork-generation machine and an upstream machine on
// protocol 1, and a protocol-2 machine (T3 since 2026-10-03, sim/protocol2). Protocol 2 must look and act
// like protocol 1 to the user, plus what only it offers (steer or queue, accept for the session). It
// also plays the window scenario of the real-engine spec withdrawn in issue 38.
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { createV2Thread, sendV2Message } from "../sim/protocol2/fleet-hooks";
import type { V2SimServer } from "../sim/protocol2/server";
import { SCREENSHOTS, agentRow, envRow, expect, test, type Fleet } from "./fixtures";
import { SIZES } from "./sizes";

test.use({ generations: ["fork", "upstream", "v2"] });

const protocol2Machine = (fleet: Fleet): V2SimServer => fleet.sims.v2Servers[0]!;

async function openAgent(page: Page, environmentId: string, threadId: string) {
  await agentRow(page, environmentId, threadId).locator(".agent-title").click();
  await expect(page.getByTestId("agent-panel")).toBeVisible();
}

test("pairs a fork, an upstream and a protocol-2 machine by their links through the window", async ({ page, fleet }) => {
  const machines = [...fleet.sims.servers, ...fleet.sims.v2Servers];
  const threads = [
    fleet.sims.createThread(fleet.sims.servers[0]!, { title: "Fork task" }),
    fleet.sims.createThread(fleet.sims.servers[1]!, { title: "Upstream task" }),
    createV2Thread(protocol2Machine(fleet), { title: "Protocol-2 task" }),
  ];
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("empty-fleet")).toBeVisible();

  for (const sim of machines) {
    await page.getByTestId("open-pairing").click();
    await expect(page.getByTestId("pair-supported")).toContainText("0.0.24");
    await expect(page.getByTestId("pair-supported")).toContainText("v0.0.46-nightly.20261003");
    await page.getByTestId("pair-input").fill(sim.pairingUrl());
    await page.getByTestId("pair-submit").click();
    const preview = page.getByTestId("pair-preview");
    await expect(preview).toContainText(sim.label);
    await expect(preview).toContainText(sim.environmentId);
    await expect(preview).toContainText(`T3 ${sim.serverVersion}`);
    if (sim.generation === "v2") await page.getByTestId("pairing-dialog").screenshot({ path: join(SCREENSHOTS, "pairing-dialog-protocol2.png") });
    await page.getByTestId("pair-submit").click();
    await expect(page.getByTestId("pairing-dialog")).toBeHidden();
  }

  for (const [i, sim] of machines.entries()) {
    await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
    await expect(agentRow(page, sim.environmentId, threads[i]!)).toHaveAttribute("data-status", "idle");
  }
  await expect(envRow(page, protocol2Machine(fleet).environmentId)).toContainText("T3 0.0.46-nightly.20261003 · protocol 2");
  await expect(page.getByTestId("fleet-summary")).toContainText("3 machines · 3 agents");
  await page.getByTestId("fleet-tree").screenshot({ path: join(SCREENSHOTS, "fleet-tree-mixed.png") });
});

// The window scenario of the real-engine spec withdrawn in issue 38, on the simulator: the same steps, checked against what it stored.
test("pairs a protocol-2 machine by link in the window, follows a live turn, nests a fork and sends a message once", async ({ page, fleet }) => {
  const v2 = protocol2Machine(fleet);
  const leadId = createV2Thread(v2, { title: "Lead", provider: "codex" });
  await page.goto(fleet.shell.url);
  await page.getByTestId("open-pairing").click();
  await page.getByTestId("pair-input").fill(v2.pairingUrl());
  await page.getByTestId("pair-submit").click();
  await expect(page.getByTestId("pair-preview")).toContainText(v2.environmentId);
  await page.getByTestId("pair-submit").click();
  await expect(page.getByTestId("pairing-dialog")).toBeHidden();
  await expect(envRow(page, v2.environmentId)).toHaveAttribute("data-phase", "online");
  const lead = agentRow(page, v2.environmentId, leadId);
  await expect(lead).toHaveAttribute("data-status", "idle");
  await expect(lead).toHaveAttribute("aria-level", "2");

  // A live run started in T3's own UI shows running, then idle with the reply (buffered until the provider's turn ends).
  sendV2Message(v2, leadId, "a slow task #hold");
  await expect(lead).toHaveAttribute("data-status", "running");
  await lead.locator(".agent-title").click();
  expect(v2.engine.release(leadId)).toBe(true);
  await expect(lead).toHaveAttribute("data-status", "idle");
  await expect(page.getByTestId("transcript")).toContainText("Codex reply to: a slow task");

  // A fork of the finished run is nested under it, from its lineage.
  const forkId = v2.engine.fork(leadId, "Lead's fork").thread.id;
  await expect(agentRow(page, v2.environmentId, forkId)).toHaveAttribute("aria-level", "3");

  // A message from the window: a new run, answered, stored once by the machine.
  const text = "now summarise it";
  await expect(page.getByTestId("intent")).toHaveAttribute("data-intent", "new-turn");
  await page.getByLabel("Message").fill(text);
  await page.getByLabel("Message").press("Enter");
  const delivery = page.locator('[data-testid="delivery"]').filter({ hasText: text });
  await expect(delivery).toHaveAttribute("data-state", "answered");
  await expect(delivery).toHaveAttribute("data-outcome", "new-turn");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Codex reply to: now summarise it");
  const messages = v2.engine.threads.get(leadId)!.messages;
  expect(messages.filter((message) => message.role === "user" && message.text === text)).toHaveLength(1);
  expect(messages.filter((message) => message.role === "assistant").map((message) => message.text)).toEqual([
    "Codex reply to: a slow task",
    "Codex reply to: now summarise it",
  ]);
  expect(v2.engine.threads.get(leadId)!.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
  expect(v2.engine.threads.get(forkId)!.thread.lineage).toMatchObject({ parentThreadId: leadId, relationshipToParent: "fork" });
});

test("protocol-2 statuses: blocked, running, waiting, failed with its reason, interrupted, queued with its position", async ({ page, fleet }) => {
  const v2 = protocol2Machine(fleet);
  const approval = createV2Thread(v2, { title: "Needs approval", provider: "claudeAgent", text: "deploy #approval" });
  const question = createV2Thread(v2, { title: "Has a question", provider: "claudeAgent", text: "plan #question" });
  const running = createV2Thread(v2, { title: "Long job", provider: "claudeAgent", text: "index #hold" });
  const waiting = createV2Thread(v2, { title: "Answered, still watching", provider: "codex", text: "watch #background" });
  const failed = createV2Thread(v2, { title: "Broke", provider: "codex", text: "fetch #fail:transport_error" });
  const interrupted = createV2Thread(v2, { title: "Stopped by someone", provider: "codex", text: "crawl #hold" });
  const queued = createV2Thread(v2, { title: "Behind a run", provider: "codex", text: "first #hold" });
  sendV2Message(v2, queued, "second");
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = (threadId: string) => agentRow(page, v2.environmentId, threadId);

  await expect(row(approval)).toHaveAttribute("data-status", "needs-approval");
  await expect(row(question)).toHaveAttribute("data-status", "needs-input");
  await expect(row(running)).toHaveAttribute("data-status", "running");
  await expect(row(waiting)).toHaveAttribute("data-status", "waiting");
  await expect(row(waiting)).toContainText("Background test watcher");
  await expect(row(failed)).toHaveAttribute("data-status", "failed");
  await expect(row(failed)).toContainText("failed: transport error");

  await expect(row(interrupted)).toHaveAttribute("data-status", "running");
  await fleet.service.request("agent.interrupt", { key: `${v2.environmentId}/${interrupted}` });
  await expect(row(interrupted)).toHaveAttribute("data-status", "interrupted");

  // A queued run waits only while nothing runs it: freeze the machine's runners (as T3's interrupt
  // with holdQueue freezes the queue), then end the active run; the queued one stays queued.
  await expect(row(queued)).toHaveAttribute("data-status", "running");
  v2.engine.halt();
  await fleet.service.request("agent.interrupt", { key: `${v2.environmentId}/${queued}` });
  await expect(row(queued)).toHaveAttribute("data-status", "queued");
  await expect(row(queued)).toContainText("Queued (position 1)");
  await expect(envRow(page, v2.environmentId).getByTestId("count-failed")).toHaveText("1 failed");
  await page.getByTestId("fleet-tree").screenshot({ path: join(SCREENSHOTS, "protocol2-statuses.png") });
});

test("on protocol 2 the composer steers or queues as chosen, says which before sending and what happened after", async ({ page, fleet }) => {
  const v2 = protocol2Machine(fleet);
  const threadId = createV2Thread(v2, { title: "Long job", provider: "claudeAgent", text: "migrate #hold" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "running");
  await openAgent(page, v2.environmentId, threadId);

  const intent = page.getByTestId("intent");
  await expect(intent).toHaveAttribute("data-intent", "steer");
  await expect(intent).toContainText("Steer the running turn");
  await expect(page.getByTestId("choose-steer")).toHaveAttribute("aria-checked", "true");
  await page.getByLabel("Message").fill("use the new API");
  await page.getByLabel("Message").press("Enter");
  const steer = page.locator('[data-testid="delivery"]').filter({ hasText: "use the new API" });
  await expect(steer).toHaveAttribute("data-state", "delivered");
  await expect(steer).toHaveAttribute("data-outcome", "steered");

  await page.getByTestId("choose-queue").click();
  await expect(page.getByTestId("choose-queue")).toHaveAttribute("aria-checked", "true");
  await expect(intent).toHaveAttribute("data-intent", "queue");
  await expect(intent).toContainText("Start a new turn after the running one");
  await page.getByLabel("Message").fill("then write the docs");
  await page
    .getByTestId("composer")
    .getByRole("button", { name: /^Queue to / })
    .click();
  const queue = page.locator('[data-testid="delivery"]').filter({ hasText: "then write the docs" });
  await expect(queue).toHaveAttribute("data-state", "delivered");
  await expect(queue).toHaveAttribute("data-outcome", "queued");
  await page.getByTestId("agent-panel").screenshot({ path: join(SCREENSHOTS, "protocol2-steer-and-queue.png") });

  // The agent finishes its run: the steer was answered in it, the queued message started the next one.
  expect(v2.engine.release(threadId)).toBe(true);
  await expect(steer).toHaveAttribute("data-state", "answered");
  await expect(steer).toHaveAttribute("data-outcome", "steered");
  await expect(queue).toHaveAttribute("data-state", "answered");
  await expect(queue).toHaveAttribute("data-outcome", "new-turn");
  await expect(page.getByTestId("transcript")).toContainText("reply to: then write the docs");
  await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "idle");
  const runs = v2.engine.threads.get(threadId)!.runs;
  expect(runs.map((run) => run.status)).toEqual(["completed", "completed"]);
});

test("on protocol 2 a message T3 queued behind the running turn reads queued in the transcript until it starts (the demo's Port the parser)", async ({
  page,
  fleet,
}) => {
  const v2 = protocol2Machine(fleet);
  // As on the demo's protocol-2 machine: a run that holds, and a message typed in T3 itself behind it.
  const threadId = createV2Thread(v2, { title: "Port the parser", provider: "claudeAgent", text: "Port the parser #hold" });
  sendV2Message(v2, threadId, "Then update the docs");
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "running");
  await openAgent(page, v2.environmentId, threadId);
  const transcript = page.getByTestId("transcript");
  const waiting = transcript.getByTestId("message-user").filter({ hasText: "Then update the docs" });
  await expect(waiting).toHaveAttribute("data-queue", "queued");
  await expect(waiting.getByTestId("message-queue")).toHaveText("Queued: starts after the running turn");
  const first = transcript.getByTestId("message-user").filter({ hasText: "Port the parser" });
  await expect(first.getByTestId("message-queue")).toHaveCount(0);

  // The running turn ends: the queued message starts its turn and reads like any other message.
  expect(v2.engine.release(threadId)).toBe(true);
  await expect(transcript).toContainText("reply to: Then update the docs");
  await expect(waiting).not.toHaveAttribute("data-queue", /.*/);
  await expect(waiting.getByTestId("message-queue")).toHaveCount(0);
});

for (const size of SIZES) {
  test(`on protocol 2 interrupting asks first when messages are queued: they start next, or are held to send or discard at ${size.name}`, async ({
    page,
    fleet,
  }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    const v2 = protocol2Machine(fleet);
    const threadId = createV2Thread(v2, { title: "Port the parser", provider: "claudeAgent", text: "Port the parser #hold" });
    sendV2Message(v2, threadId, "Then update the docs");
    sendV2Message(v2, threadId, "And cut a release");
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "running");
    await openAgent(page, v2.environmentId, threadId);
    // The agent's status as its panel shows it (narrow windows show the panel instead of the list).
    const status = page.getByTestId("agent-panel").locator(".chip[data-status]").first();
    await expect(page.getByTestId("transcript").locator('[data-testid="message-user"][data-queue="queued"]')).toHaveCount(2);

    // The key asks first, as the button does, and says what happens to the queue.
    await page.getByTestId("agent-panel").locator("h2").focus();
    await page.keyboard.press("i");
    const confirm = page.getByTestId("interrupt-confirm");
    await expect(page.getByTestId("interrupt-confirm-text")).toContainText("2 queued messages then start next: “Then update the docs” and “And cut a release”");
    await page.getByRole("button", { name: "Keep running" }).click();
    await expect(confirm).toHaveCount(0);
    await expect(status).toHaveAttribute("data-status", "running");

    await page.getByTestId("interrupt").click();
    await page.getByTestId("interrupt-hold").click();
    await expect(status).toHaveAttribute("data-status", "interrupted");
    const held = page.locator('[data-testid="delivery"][data-state="held"]');
    await expect(held).toHaveCount(2);
    await expect(held.first()).toContainText("Then update the docs");
    await expect(held.first()).toContainText("held, not sent");
    // One receipt per message, showing where it is now, in the buttons' words; each on one line.
    const receipts = page.getByTestId("delivery");
    await expect(receipts).toHaveCount(3);
    await expect(receipts.filter({ hasText: "Then update the docs" })).toHaveCount(1);
    await expect(receipts.filter({ hasText: "the run was interrupted" })).toHaveCount(1);
    await expect(page.getByTestId("deliveries")).not.toContainText("Withdrawing");
    await expect(page.getByTestId("deliveries")).not.toContainText("Release");
    for (const box of await receipts.evaluateAll((lines) => lines.map((line) => line.getBoundingClientRect().height))) expect(box).toBeLessThanOrEqual(32);
    await page.getByTestId("deliveries").screenshot({ path: join(SCREENSHOTS, `receipts-held-${size.name}.png`) });
    // T3's transcript keeps the cancelled messages, saying they never ran.
    await expect(page.getByTestId("transcript").locator('[data-testid="message-user"][data-queue="cancelled"]')).toHaveCount(2);
    expect(v2.engine.threads.get(threadId)!.runs.map((run) => run.status)).toEqual(["interrupted", "cancelled", "cancelled"]);

    // Send one now (once), discard the other.
    await held.filter({ hasText: "Then update the docs" }).getByTestId("release-held").click();
    const released = page.locator('[data-testid="delivery"]').filter({ hasText: "Then update the docs" });
    await expect(released).toHaveAttribute("data-state", "answered");
    await expect(released).toHaveCount(1);
    await held.filter({ hasText: "And cut a release" }).getByTestId("discard-held").click();
    await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "And cut a release" })).toHaveAttribute("data-state", "discarded");
    await expect(held).toHaveCount(0);
    const texts = v2.engine.threads
      .get(threadId)!
      .messages.filter((message) => message.role === "user")
      .map((message) => message.text);
    expect(texts.filter((text) => text === "Then update the docs")).toHaveLength(2); // the cancelled original and the one release
    expect(texts.filter((text) => text === "And cut a release")).toHaveLength(1);
  });
}

test("on protocol 2 a message waiting in the queue can be withdrawn before its turn starts", async ({ page, fleet }) => {
  const v2 = protocol2Machine(fleet);
  const threadId = createV2Thread(v2, { title: "Busy", provider: "claudeAgent", text: "refactor #hold" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "running");
  await openAgent(page, v2.environmentId, threadId);

  // Protocol 2 has no session stop: it is not offered; interrupting the run is.
  await expect(page.getByTestId("stop")).toHaveCount(0);
  await expect(page.getByTestId("interrupt")).toBeEnabled();
  await page.getByTestId("choose-queue").click();
  await page.getByLabel("Message").fill("and rename the module");
  await page
    .getByTestId("composer")
    .getByRole("button", { name: /^Queue to / })
    .click();
  const queued = page.locator('[data-testid="delivery"]').filter({ hasText: "and rename the module" });
  await expect(queued).toHaveAttribute("data-outcome", "queued");
  await expect(queued).toContainText("(position 1)");

  await queued.getByTestId("cancel-queued").click();
  await expect(queued).toHaveAttribute("data-outcome", "cancelled");
  await expect(queued).toContainText("withdrawn from the queue");
  await expect(queued.getByTestId("cancel-queued")).toHaveCount(0);
  // The withdrawal is part of the message's one receipt, not a line of its own.
  await expect(page.getByTestId("delivery")).toHaveCount(1);

  // The running turn ends; the withdrawn message never starts one.
  expect(v2.engine.release(threadId)).toBe(true);
  await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "idle");
  expect(v2.engine.threads.get(threadId)!.runs.map((run) => run.status)).toEqual(["completed", "cancelled"]);
  await expect(page.getByTestId("transcript")).not.toContainText("reply to: and rename the module");
});

test("an approval on protocol 2 offers every decision and is accepted for the session", async ({ page, fleet }) => {
  const v2 = protocol2Machine(fleet);
  const threadId = createV2Thread(v2, { title: "Test runner", provider: "claudeAgent", text: "run the suite #approval" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, v2.environmentId, threadId);
  await expect(row).toHaveAttribute("data-status", "needs-approval");
  await openAgent(page, v2.environmentId, threadId);
  const card = page.getByTestId("approval-card");
  await expect(card).toContainText("npm test");
  // The command the card asks about has not run: the transcript says it awaits approval, not "running".
  const command = page.getByTestId("transcript").getByTestId("activity-command").filter({ hasText: "npm test" });
  await expect(command).toHaveAttribute("data-status", "awaiting-approval");
  await expect(command).toContainText("awaiting your approval");
  await expect(command).not.toContainText("running");
  // The composer says what to do first, calmly, not as an error; the message can be written meanwhile.
  await expect(page.getByTestId("intent")).toHaveText("Answer the approval above first; your message can be sent after.");
  await expect(page.getByTestId("intent")).toHaveAttribute("data-wait", "true");
  await expect(page.getByTestId("composer").getByRole("textbox")).toBeEnabled();
  await expect(page.getByTestId("send")).toBeDisabled();
  await expect(card.locator("button[data-decision]")).toHaveCount(4);
  expect(await card.locator("button[data-decision]").evaluateAll((buttons) => buttons.map((button) => (button as HTMLElement).dataset.decision))).toEqual([
    "accept",
    "acceptForSession",
    "decline",
    "cancel",
  ]);
  await card.screenshot({ path: join(SCREENSHOTS, "protocol2-approval.png") });
  await card.locator('button[data-decision="acceptForSession"]').click();
  await expect(page.getByTestId("approval-card")).toHaveCount(0);
  await expect(row).toHaveAttribute("data-status", "idle");
  await expect(page.locator('[data-testid="delivery"][data-state="delivered"]')).toContainText("approval");
  // T3's engine resolves a request without saying how; the simulator keeps what it was answered with.
  const request = v2.engine.threads.get(threadId)!.requests[0]!;
  expect(request.status).toBe("resolved");
  expect(v2.engine.responses.get(request.id)).toEqual({ decision: "acceptForSession" });
});

test("several questions on protocol 2: a required one must be answered, then all answers reach the agent", async ({ page, fleet }) => {
  const v2 = protocol2Machine(fleet);
  const threadId = createV2Thread(v2, { title: "Planner", provider: "claudeAgent", text: "plan the release #question" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, v2.environmentId, threadId);
  await expect(row).toHaveAttribute("data-status", "needs-input");
  await openAgent(page, v2.environmentId, threadId);
  const card = page.getByTestId("input-card");
  await expect(card.getByTestId("question")).toHaveCount(2);

  await card.getByLabel("Answer to: Anything else?").fill("keep it small");
  await card.getByRole("button", { name: "Answer", exact: true }).click();
  await expect(card.getByTestId("question-missing")).toHaveCount(1);
  await expect(card.getByTestId("question").first()).toHaveAttribute("aria-invalid", "true");
  await card.screenshot({ path: join(SCREENSHOTS, "protocol2-questions.png") });
  await expect(row).toHaveAttribute("data-status", "needs-input");
  expect(v2.engine.threads.get(threadId)!.requests[0]).toMatchObject({ status: "pending" });

  await card.getByLabel("api").check();
  await card.getByLabel("web").check();
  await card.getByRole("button", { name: "Answer", exact: true }).click();
  await expect(page.getByTestId("input-card")).toHaveCount(0);
  await expect(row).toHaveAttribute("data-status", "idle");
  const request = v2.engine.threads.get(threadId)!.requests[0]!;
  expect(request.status).toBe("resolved");
  expect(v2.engine.responses.get(request.id)).toEqual({ answers: { scope: ["api", "web"], note: "keep it small" } });
});

test("a machine upgraded in place from protocol 1 to 2 keeps its row and its agents, without duplicates", async ({ page, fleet }) => {
  const upstream = fleet.sims.servers[1]!;
  const lead = fleet.sims.createThread(upstream, { title: "Lead", provider: "claudeAgent" });
  const worker = fleet.sims.spawnChild(upstream, lead, "worker", "warm up");
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const env = envRow(page, upstream.environmentId);
  await expect(env).toHaveAttribute("data-phase", "online");
  await expect(agentRow(page, upstream.environmentId, worker)).toHaveAttribute("data-status", "idle");
  await expect(agentRow(page, upstream.environmentId, worker)).toHaveAttribute("aria-level", "3");
  const rowsBefore = await page.locator('[data-testid="agent-row"]').count();
  const upstreamVersion = upstream.serverVersion;

  const upgraded = await fleet.sims.upgradeToV2(upstream.environmentId);
  expect(upgraded.environmentId).toBe(upstream.environmentId);
  await expect(env).toContainText(`T3 ${upgraded.serverVersion}`);
  await expect(env).not.toContainText(`T3 ${upstreamVersion}`);
  await expect(env).toHaveAttribute("data-phase", "online");

  // New work after the upgrade (its event sequence starts below protocol 1's) is seen.
  sendV2Message(upgraded, lead, "review #approval");
  await expect(agentRow(page, upstream.environmentId, lead)).toHaveAttribute("data-status", "needs-approval");
  await expect(page.locator('[data-testid="env-row"]')).toHaveCount(3);
  await expect(page.locator(`[data-testid="env-row"][data-environment="${upstream.environmentId}"]`)).toHaveCount(1);
  await expect(page.locator('[data-testid="agent-row"]')).toHaveCount(rowsBefore);
  await expect(agentRow(page, upstream.environmentId, lead)).toHaveCount(1);
  await expect(agentRow(page, upstream.environmentId, worker)).toHaveCount(1);
  await expect(agentRow(page, upstream.environmentId, worker)).toHaveAttribute("aria-level", "3");
  await expect(page.getByTestId("fleet-summary")).toContainText("3 machines");
  await page.getByTestId("fleet-tree").screenshot({ path: join(SCREENSHOTS, "protocol2-upgraded-in-place.png") });
});

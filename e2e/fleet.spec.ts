// The fleet window in Chromium against the headless shell and simulated T3 machines.
import { join } from "node:path";
import { SimServer } from "../sim/protocol1/server";
import { SCREENSHOTS, agentRow, envRow, expect, test } from "./fixtures";

test("pairs three machines through pairing URLs and merges them into one fleet", async ({ page, fleet }) => {
  const threads = fleet.sims.servers.map((sim, i) => fleet.sims.createThread(sim, { title: `Task ${i + 1} on ${sim.label}` }));
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("empty-fleet")).toBeVisible();

  for (const [i, sim] of fleet.sims.servers.entries()) {
    await page.getByTestId("open-pairing").click();
    await page.getByTestId("pair-input").fill(sim.pairingUrl());
    await page.getByTestId("pair-submit").click();
    const preview = page.getByTestId("pair-preview");
    await expect(preview).toContainText(sim.label);
    await expect(preview).toContainText(sim.environmentId);
    await expect(preview).toContainText(`T3 ${sim.serverVersion}`);
    if (i === 0) await page.getByTestId("pairing-dialog").screenshot({ path: join(SCREENSHOTS, "pairing-dialog.png") });
    await page.getByTestId("pair-submit").click();
    await expect(page.getByTestId("pairing-dialog")).toBeHidden();
  }

  for (const [i, sim] of fleet.sims.servers.entries()) {
    await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
    await expect(agentRow(page, sim.environmentId, threads[i]!)).toHaveAttribute("data-status", "idle");
  }
  await expect(page.getByTestId("fleet-summary")).toContainText("3 machines · 3 agents");
  expect(page.url()).not.toContain("token="); // the launch token is kept out of history
  await page.getByTestId("fleet-tree").screenshot({ path: join(SCREENSHOTS, "fleet-tree.png") });
});

test("pairing explains a used link, an unreachable host and a server that is not T3", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const url = sim.pairingUrl();
  await fleet.service.request("pair.confirm", { input: url });
  await page.goto(fleet.shell.url);
  const tryPair = async (input: string) => {
    await page.getByTestId("open-pairing").click();
    await page.getByTestId("pair-input").fill(input);
    await page.getByTestId("pair-submit").click();
    await expect(page.getByTestId("pair-preview").or(page.getByTestId("pair-error"))).toBeVisible();
    if (await page.getByTestId("pair-preview").isVisible()) await page.getByTestId("pair-submit").click();
  };
  await tryPair(url);
  await expect(page.getByTestId("pair-error")).toContainText("already used or has expired");
  await page.keyboard.press("Escape");
  await tryPair("http://127.0.0.1:9/pair#token=ABCDEFGHJKLM");
  await expect(page.getByTestId("pair-error")).toContainText("No server answered");
  await page.keyboard.press("Escape");
  await tryPair(`${fleet.shell.origin}/pair#token=ABCDEFGHJKLM`);
  await expect(page.getByTestId("pair-error")).toContainText(/not a T3 server|did not answer like a T3 server/);
  await page.keyboard.press("Escape");
  // Protocols 1 and 2 pair; a newer one says which side to update.
  const future = await new SimServer({ generation: "upstream", label: "future-box", orchestrationProtocolVersion: 3 }).start();
  try {
    await tryPair(future.pairingUrl());
    await expect(page.getByTestId("pair-error")).toContainText("speaks orchestration protocol 3");
  } finally {
    await future.stop();
  }
});

test("a child that fails changes its chip, its parent's roll-up and the counts", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const parent = fleet.sims.createThread(sim, { title: "Planner" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, parent)).toHaveAttribute("data-status", "idle");
  await expect(page.getByTestId("needs-you-count")).toHaveText("0 need you");

  const child = fleet.sims.spawnChild(sim, parent, "worker1", "compile #fail");
  const childRow = agentRow(page, sim.environmentId, child);
  await expect(childRow).toHaveAttribute("data-status", "failed");
  await expect(childRow).toHaveAttribute("aria-level", "3");
  await expect(agentRow(page, sim.environmentId, parent).getByTestId("rollup")).toHaveAttribute("data-rollup", "failed");
  await expect(page.getByTestId("needs-you-count")).toHaveText("1 needs you");
  await expect(envRow(page, sim.environmentId).getByTestId("count-failed")).toHaveText("1 failed");
  await expect(page.getByTestId("notice")).toContainText("failed");
});

test("an approval answered in the UI unblocks the simulated agent", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[1]!; // the 0.0.24 generation
  const threadId = fleet.sims.createThread(sim, { title: "Deployer", text: "ship it #approval" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row).toHaveAttribute("data-status", "needs-approval");
  await row.getByRole("button", { name: "Deployer" }).click();
  const card = page.getByTestId("approval-card");
  await expect(card).toContainText("npm test");
  await card.getByRole("button", { name: "Allow once", exact: true }).click();
  await expect(row).toHaveAttribute("data-status", "idle");
  await expect(page.getByTestId("approval-card")).toHaveCount(0);
  await expect(page.locator('[data-testid="delivery"][data-state="delivered"]')).toContainText("approval");
  expect(sim.engine.threads.get(threadId)!.activities.some((a) => a.kind === "approval.resolved" && a.payload.decision === "accept")).toBe(true);
});

test("a message to a running child shows steer, and the reply lands in the same turn", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const parent = fleet.sims.createThread(sim, { title: "Lead" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, parent)).toBeVisible();
  // The child's turn runs for about 2 s: it starts once the window is up, so the message lands inside it.
  const child = fleet.sims.spawnChild(sim, parent, "worker", "refactor #slow", "opencode");
  const row = agentRow(page, sim.environmentId, child);
  await expect(row).toHaveAttribute("data-status", "running");
  await row.locator(".agent-title").click();
  const intent = page.getByTestId("intent");
  await expect(intent).toHaveAttribute("data-intent", "steer");
  await expect(intent).toContainText("Steer the running turn");
  await expect(intent).toContainText("OpenCode reads it when its current reply ends, in this same turn.");
  await page.getByLabel("Message").fill("also rename the module");
  await page.getByLabel("Message").press("Enter");
  const delivery = page.locator('[data-testid="delivery"]').filter({ hasText: "also rename the module" });
  await expect(delivery).toHaveAttribute("data-state", "answered", { timeout: 15_000 });
  await expect(delivery).toHaveAttribute("data-outcome", "steered");
  // As real T3 0.0.42 does with a steering provider: one turn, one reply that covers both messages.
  const replies = page.getByTestId("message-assistant");
  await expect(replies).toHaveCount(1);
  await expect(replies).toContainText("refactor");
  await expect(replies).toContainText("also rename the module");
  const turn = await replies.getAttribute("data-turn");
  expect(turn).toBeTruthy();
  expect(
    sim.engine.threads
      .get(child)!
      .messages.filter((m) => m.role === "assistant")
      .map((m) => m.turnId),
  ).toEqual([turn]);
  await page.getByTestId("agent-panel").screenshot({ path: join(SCREENSHOTS, "agent-view.png") });
});

test("a message to an idle child starts a new turn", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[1]!;
  const parent = fleet.sims.createThread(sim, { title: "Lead" });
  await fleet.pairAll();
  const child = fleet.sims.spawnChild(sim, parent, "worker", "warm up");
  await page.goto(fleet.shell.url);
  const row = agentRow(page, sim.environmentId, child);
  await expect(row).toHaveAttribute("data-status", "idle");
  await row.locator(".agent-title").click();
  await expect(page.getByTestId("intent")).toHaveAttribute("data-intent", "new-turn");
  await page.getByLabel("Message").fill("now write the tests");
  await page.keyboard.press("Enter");
  const delivery = page.locator('[data-testid="delivery"]').filter({ hasText: "now write the tests" });
  await expect(delivery).toHaveAttribute("data-state", "answered");
  await expect(delivery).toHaveAttribute("data-outcome", "new-turn");
  await expect(page.getByTestId("transcript")).toContainText("reply to: now write the tests");
});

test("a killed machine shows offline as of its last confirmation within the bound, then returns online", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[2]!;
  const threadId = fleet.sims.createThread(sim, { title: "Night build", text: "#hang" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row).toHaveAttribute("data-status", "running");
  const killedAt = Date.now();
  await sim.kill();
  await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "offline", { timeout: 10_000 });
  expect(Date.now() - killedAt).toBeLessThan(10_000);
  await expect(row).toHaveAttribute("data-status", "unknown");
  await expect(row.getByTestId("as-of")).toContainText("was running · as of");
  await expect(envRow(page, sim.environmentId).getByTestId("env-phase")).toContainText("offline");
  await sim.start();
  await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
  await expect(page.locator(`[data-testid="agent-row"][data-key^="${sim.environmentId}/"]`)).toHaveCount(1);
});

test("hostile thread content stays inert", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: `<img src=x onerror="window.__pwned=1">` });
  fleet.sims.sendMessage(sim, threadId, `<script>window.__pwned=2</script> [click](javascript:window.__pwned=3) javascript:alert(1) https://example.com/docs`);
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row).toContainText(`<img src=x onerror="window.__pwned=1">`);
  await row.locator(".agent-title").click();
  const transcript = page.getByTestId("transcript");
  await expect(transcript).toContainText("<script>window.__pwned=2</script>");
  await expect(transcript.locator("script, img, iframe, a[href]")).toHaveCount(0);
  // Markdown: the HTML block stays text, the javascript: link is no link, only the parsed https URL is a button.
  await expect(transcript.getByTestId("message-user")).toContainText("[click](javascript:window.__pwned=3)");
  await expect(transcript.getByTestId("message-assistant").locator(".unsafe-link")).toHaveText("click");
  await expect(transcript.locator("button.link")).toHaveText(["https://example.com/docs"]);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  const refused = await page.evaluate(async () => {
    // The page's own session (sessionStorage) opens a second bridge socket, as the page's code would.
    const session = sessionStorage.getItem("t3fleet.session");
    const ws = new WebSocket(new URL("/bridge", location.href).href.replace("http", "ws"), ["t3fleet.bridge.v1", `t3fleet.session.${session}`]);
    await new Promise((resolve) => ws.addEventListener("open", resolve));
    const answer = new Promise<string>((resolve) => ws.addEventListener("message", (m) => String(m.data).includes('"id":77') && resolve(String(m.data))));
    ws.send(JSON.stringify({ type: "request", id: 77, method: "link.open", params: { url: "javascript:alert(1)" } }));
    return answer;
  });
  expect(refused).toContain("Only http and https links can be opened");
});

test("keyboard: move, search, jump to the next agent that needs you, open and go back", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  fleet.sims.createThread(sim, { title: "Alpha" });
  const blocked = fleet.sims.createThread(sim, { title: "Bravo", text: "#input" });
  fleet.sims.createThread(sim, { title: "Charlie" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, blocked)).toHaveAttribute("data-status", "needs-input");
  await page.keyboard.press("n");
  await expect(page.getByTestId("agent-panel")).toContainText("Bravo");
  await expect(page.getByTestId("input-card")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("agent-panel")).toHaveCount(0);
  // Triage order: the agent that needs you heads its machine; ↓/j and ↑/k move from there.
  await expect(page.locator('[data-testid="agent-row"]').first()).toContainText("Bravo");
  await page.keyboard.press("j");
  const selected = page.locator('[data-testid="agent-row"][aria-selected="true"]');
  await expect(selected).not.toContainText("Bravo");
  await page.keyboard.press("k");
  await page.keyboard.press("k");
  await expect(selected).toContainText("Bravo");
  await page.keyboard.press("/");
  await page.keyboard.type("char");
  await expect(page.locator('[data-testid="agent-row"]')).toHaveCount(1);
  await page.getByTestId("filter-needsMe").click();
  await expect(page.locator('[data-testid="agent-row"]')).toHaveCount(0);
});

test("renames, mutes and removes a machine from its row", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  fleet.sims.createThread(sim, { title: "Worker" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = envRow(page, sim.environmentId);
  // The machine's actions sit in one menu, so its counts keep their room.
  const menu = page.getByTestId("env-menu-list");
  await row.getByTestId("env-menu").click();
  await menu.getByRole("menuitem", { name: "Rename…" }).click();
  await row.getByLabel("Machine name").fill("Build farm");
  await row.getByLabel("Machine name").press("Enter");
  await expect(row).toContainText("Build farm");
  await row.getByTestId("env-menu").click();
  await menu.getByRole("menuitem", { name: "Mute notifications" }).click();
  await expect(row).toContainText("muted");
  await row.getByTestId("env-menu").click();
  await menu.getByRole("menuitem", { name: "Remove…" }).click();
  await expect(menu).toContainText("Its token is deleted from the keychain");
  // The question opens on its safe answer.
  await expect(menu.getByRole("menuitem", { name: "Keep" })).toBeFocused();
  await menu.getByRole("menuitem", { name: "Remove", exact: true }).click();
  await expect(envRow(page, sim.environmentId)).toHaveCount(0);
  await expect(page.getByTestId("fleet-summary")).toContainText("2 machines");
});

test("notification settings: pausing stops notices for new failures", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Worker" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "idle");
  await page.getByTestId("open-settings").click();
  await page.getByTestId("pause-notifications").check();
  await expect(page.getByTestId("pause-notifications")).toBeChecked();
  await page.keyboard.press("Escape");
  fleet.sims.sendMessage(sim, threadId, "#fail");
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "failed");
  await expect(page.getByTestId("notice")).toHaveCount(0);
  expect((await fleet.service.request("settings.update", {})) as { notificationsPaused: boolean }).toMatchObject({ notificationsPaused: true });
});

test("a first load asks the shell for nothing it cannot answer and logs no error to the console", async ({ page, fleet }) => {
  const failed: string[] = [];
  const consoleErrors: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("empty-fleet")).toBeVisible();
  // The tab's icon is the page's own from the first paint: the browser has no reason to ask for /favicon.ico.
  await expect(page.locator('link[rel="icon"]')).toHaveAttribute("href", /^data:image\/svg\+xml,/);
  await page.reload();
  await expect(page.getByTestId("empty-fleet")).toBeVisible();
  expect(failed, "requests the shell refused").toEqual([]);
  expect(consoleErrors, "console errors").toEqual([]);
});

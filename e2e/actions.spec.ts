// Actions leave a trace and snoozes can be found (issue 25 points 2-3): each triage action shows a
// brief confirmation naming the agent and its machine, with Undo where T3 allows it; only a
// decision that stops work asks first, on its safe answer; "handled today" lists what was done and
// survives a reload; the snoozed list says when each agent wakes and why, and wakes it.
import { tapBridge } from "./bridge-tap";
import { expect, test } from "./fixtures";

test.use({ startPane: "auto", generations: ["upstream"] }); // upstream protocol 1: T3 holds snoozes and settlements

const decisionsSent = (tap: Awaited<ReturnType<typeof tapBridge>>) =>
  tap.sent.filter((request) => request.method === "agent.respondApproval").map((request) => (request.params as { decision: string }).decision);

test("a plain approval goes at once with a confirmation naming the agent; deny-and-stop asks first, on its safe answer", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const deploy = fleet.sims.createThread(sim, { title: "Deploy", text: "#approval" });
  await expect.poll(() => sim.engine.threads.get(deploy)?.pendingApprovals.size).toBe(1);
  const cleanup = fleet.sims.createThread(sim, { title: "Cleanup", text: "#approval" });
  await expect.poll(() => sim.engine.threads.get(cleanup)?.pendingApprovals.size).toBe(1);
  await fleet.pairAll();
  const tap = await tapBridge(page);
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("inbox-row")).toHaveCount(2);
  const confirmation = page.getByTestId("action-confirmation-text");
  // The live region is on the page before anything is done, so the first confirmation is announced too.
  await expect(confirmation).toHaveAttribute("aria-live", "polite");
  await expect(confirmation).toHaveText("");

  await page.keyboard.press("n");
  const panel = page.getByTestId("agent-panel");
  await expect(panel.locator("h2")).toHaveText("Deploy");
  // Said before anything is sent: a decision cannot be taken back.
  await expect(page.getByTestId("decision-final")).toHaveText("Final once sent");
  await expect(page.getByTestId("decision-final")).toHaveAttribute("title", "A decision goes to T3 at once and T3 cannot take it back.");
  await page.keyboard.press("a");
  await expect(confirmation).toHaveText(`Approved “npm test” for Deploy on ${sim.label}`);
  expect(decisionsSent(tap)).toEqual(["accept"]);
  await expect(page.getByTestId("undo")).toHaveCount(0); // T3 cannot take a decision back

  // The next item opened; "Deny and stop" waits for its confirm, which opens on its safe answer, and nothing is sent meanwhile.
  await expect(panel.locator("h2")).toHaveText("Cleanup");
  const deny = page.getByTestId("approval-card").getByRole("button", { name: "Deny and stop" });
  await deny.click();
  const confirm = page.getByTestId("decision-confirm");
  await expect(confirm).toBeVisible();
  await expect(page.getByTestId("confirm-keep")).toBeFocused();
  await expect(page.getByTestId("confirm-action")).toContainText("The command is not run and the agent's turn ends.");
  expect(decisionsSent(tap)).toEqual(["accept"]);
  // Esc keeps things as they are, with focus back on the button that asked; Enter on the safe answer does too.
  await page.keyboard.press("Escape");
  await expect(confirm).toHaveCount(0);
  await expect(deny).toBeFocused();
  await expect(panel.locator("h2")).toHaveText("Cleanup");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("confirm-keep")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(confirm).toHaveCount(0);
  await expect(deny).toBeFocused();
  expect(decisionsSent(tap)).toEqual(["accept"]);
  // Sending it is a choice: the destructive button is one Tab away.
  await page.keyboard.press("Enter");
  await page.keyboard.press("Tab");
  await expect(confirm).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(confirmation).toHaveText(`Denied “npm test” and stopped the turn of Cleanup on ${sim.label}`);
  expect(decisionsSent(tap)).toEqual(["accept", "cancel"]);
  await expect(page.getByTestId("inbox-empty")).toBeVisible();
});

test("undo of a snooze and of an acknowledgement brings the item back, through T3 where T3 holds it", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const reviewer = fleet.sims.createThread(sim, { title: "Reviewer", text: "#approval" });
  await expect.poll(() => sim.engine.threads.get(reviewer)?.pendingApprovals.size).toBe(1);
  const nightly = fleet.sims.createThread(sim, { title: "Nightly", text: "#fail" });
  await expect.poll(() => sim.engine.threads.get(nightly)?.session?.status).toBe("error");
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const items = page.getByTestId("inbox-row");
  const confirmation = page.getByTestId("action-confirmation-text");
  const panel = page.getByTestId("agent-panel");
  await expect(items).toHaveCount(2);

  // Snoozed until it changes (the window's own): Undo brings it back and opens it.
  await page.keyboard.press("n");
  await expect(panel.locator("h2")).toHaveText("Reviewer");
  await page.keyboard.press("s");
  await expect(confirmation).toHaveText(`Snoozed Reviewer on ${sim.label} until it changes`);
  await expect(items).toHaveCount(1);
  await page.getByTestId("undo").click();
  await expect(items).toHaveCount(2);
  await expect(panel.locator("h2")).toHaveText("Reviewer");
  await expect(confirmation).toHaveText(`Woke Reviewer on ${sim.label}`);

  // Snoozed for an hour in T3 itself: z (Undo) wakes it in T3 too.
  await items.filter({ hasText: "Nightly" }).click();
  await expect(panel.locator("h2")).toHaveText("Nightly");
  await page.keyboard.press("S");
  await expect.poll(() => sim.engine.threads.get(nightly)?.snoozedUntil ?? null).not.toBeNull();
  await expect(items).toHaveCount(1);
  await expect(page.getByTestId("undo")).toBeVisible();
  await page.keyboard.press("z");
  await expect.poll(() => sim.engine.threads.get(nightly)?.snoozedUntil ?? null).toBeNull();
  await expect(items).toHaveCount(2);

  // Acknowledged: Undo brings the failure back into the inbox.
  await expect(panel.locator("h2")).toHaveText("Nightly");
  await page.keyboard.press("x");
  await expect(confirmation).toHaveText(`Acknowledged Nightly on ${sim.label}`);
  await expect(items).toHaveCount(1);
  await page.keyboard.press("z");
  await expect(items).toHaveCount(2);
  await expect(items.filter({ hasText: "Nightly" })).toHaveAttribute("data-status", "failed");
  await expect(confirmation).toHaveText(`Brought back Nightly on ${sim.label}: no longer acknowledged`);
});

test("handled today lists what was done, newest first, and survives a reload", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const deploy = fleet.sims.createThread(sim, { title: "Deploy", text: "#approval" });
  await expect.poll(() => sim.engine.threads.get(deploy)?.pendingApprovals.size).toBe(1);
  const nightly = fleet.sims.createThread(sim, { title: "Nightly", text: "#fail" });
  await expect.poll(() => sim.engine.threads.get(nightly)?.session?.status).toBe("error");
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("inbox-row")).toHaveCount(2);
  await page.keyboard.press("n");
  await page.keyboard.press("a");
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Nightly");
  await page.keyboard.press("x");
  await expect(page.getByTestId("inbox-empty")).toBeVisible();

  const expected = [`Acknowledged Nightly on ${sim.label}`, `Approved “npm test” for Deploy on ${sim.label}`];
  await page.keyboard.press("h");
  const list = page.getByTestId("handled-today");
  await expect(list.getByTestId("handled-entry")).toHaveCount(2);
  await expect(list.getByTestId("handled-entry")).toContainText(expected);
  await expect(list.getByTestId("handled-entry").first().locator("time")).toHaveText(/^\d\d:\d\d/);
  await page.keyboard.press("Escape");
  await expect(list).toHaveCount(0);

  await page.reload();
  // Nothing needs the user, so the window opens on the fleet; the list is a key away from anywhere.
  await expect(page.getByTestId("needs-you-count")).toHaveText("0 need you");
  await page.keyboard.press("h");
  await expect(list.getByTestId("handled-entry")).toContainText(expected);
});

test("the snoozed list says when each agent wakes and why, and Unsnooze brings it back", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const reviewer = fleet.sims.createThread(sim, { title: "Reviewer", text: "#approval" });
  await expect.poll(() => sim.engine.threads.get(reviewer)?.pendingApprovals.size).toBe(1);
  const nightly = fleet.sims.createThread(sim, { title: "Nightly", text: "#fail" });
  await expect.poll(() => sim.engine.threads.get(nightly)?.session?.status).toBe("error");
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const items = page.getByTestId("inbox-row");
  await expect(items).toHaveCount(2);
  await page.keyboard.press("n");
  await page.keyboard.press("s"); // Reviewer, until it changes
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Nightly");
  await page.keyboard.press("S"); // Nightly, for an hour in T3
  await expect.poll(() => sim.engine.threads.get(nightly)?.snoozedUntil ?? null).not.toBeNull();
  await expect(items).toHaveCount(0);

  await page.getByTestId("open-snoozed").click();
  const list = page.getByTestId("snoozed-list");
  const entries = list.getByTestId("snoozed-entry");
  await expect(entries).toHaveCount(2);
  // The soonest to wake first: a time kept by T3, then "until it changes" kept by T3 Fleet.
  await expect(entries.nth(0)).toContainText(`Nightly on ${sim.label}`);
  await expect(entries.nth(0).getByTestId("snoozed-wake")).toHaveText(/wakes at \d\d:\d\d( [AP]M)? \(kept by T3\)$/);
  await expect(entries.nth(1)).toContainText(`Reviewer on ${sim.label}`);
  await expect(entries.nth(1).getByTestId("snoozed-wake")).toHaveText(/until what it needs changes \(kept by T3 Fleet\)$/);

  await entries.nth(0).getByTestId("unsnooze").click();
  await expect.poll(() => sim.engine.threads.get(nightly)?.snoozedUntil ?? null).toBeNull();
  await expect(entries).toHaveCount(1);
  await entries.nth(0).getByTestId("unsnooze").click();
  await expect(list.getByTestId("snoozed-empty")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(items).toHaveCount(2);
});

test("a snooze T3 does not hold is kept by T3 Fleet: it survives a reload, is in the snoozed list, and Unsnooze ends it", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const reviewer = fleet.sims.createThread(sim, { title: "Reviewer", text: "#approval" });
  await expect.poll(() => sim.engine.threads.get(reviewer)?.pendingApprovals.size).toBe(1);
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const items = page.getByTestId("inbox-row");
  await expect(items).toHaveCount(1);
  await page.keyboard.press("n");
  await page.keyboard.press("s"); // until it changes: T3 has no such snooze
  await expect(items).toHaveCount(0);
  await expect(page.getByTestId("needs-you-count")).toHaveText("0 need you");

  await page.reload();
  await expect(page.getByTestId("needs-you-count")).toHaveText("0 need you");
  await page.getByTestId("view-inbox").click();
  await expect(page.getByTestId("open-snoozed")).toContainText("1 snoozed");
  expect(sim.engine.threads.get(reviewer)?.snoozedUntil ?? null).toBeNull();
  await page.getByTestId("open-snoozed").click();
  const entries = page.getByTestId("snoozed-list").getByTestId("snoozed-entry");
  await expect(entries).toHaveCount(1);
  await expect(entries.nth(0)).toContainText(`Reviewer on ${sim.label}`);
  await expect(entries.nth(0).getByTestId("snoozed-wake")).toHaveText(/until what it needs changes \(kept by T3 Fleet\)$/);
  await entries.nth(0).getByTestId("unsnooze").click();
  await expect(page.getByTestId("snoozed-list").getByTestId("snoozed-empty")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(items).toHaveCount(1);

  await page.reload();
  await expect(page.getByTestId("needs-you-count")).toHaveText("1 needs you");
});

// The page under attack, in Chromium: a launch link replayed from history or another browser, a
// paste too large for the bridge, and a hostile T3 server whose every text is HTML, script or a
// `javascript:` link, with a 2 MB message, a 20,000-character label, undecodable frames and
// sequences that go backwards. The page must stay inert, connected and fully usable.
import type { Locator, Page } from "@playwright/test";
import { MAX_BRIDGE_FRAME_BYTES } from "../shared/bridge/contract";
import { SimServer } from "../sim/protocol1/server";
import { HOSTILE } from "../shared/t3/hostile-text.testkit";
import { agentRow, envRow, expect, test } from "./fixtures";

/** Chromium's window state that any executed payload would set. */
const PWNED = "__pwned";
/** Markup that must only ever appear as text: every payload carries this attribute. */
const MARK = "data-hostile";
const html = (n: number) => `<img src=x ${MARK} onerror="window.${PWNED}=${n}"><script ${MARK}>window.${PWNED}=${n}</script><b ${MARK}>bold</b>`;

async function expectInert(page: Page, dialogs: string[]): Promise<void> {
  expect(await page.evaluate((name) => (window as unknown as Record<string, unknown>)[name], PWNED)).toBeUndefined();
  await expect(page.locator(`[${MARK}]`)).toHaveCount(0);
  await expect(page.locator('a[href^="javascript:" i], iframe, object, embed')).toHaveCount(0);
  expect(dialogs).toEqual([]);
}

/** Visible and inside the viewport horizontally: nothing pushed a control off the side. */
async function expectInView(page: Page, controls: Locator): Promise<void> {
  const width = page.viewportSize()!.width;
  const all = await controls.all();
  expect(all.length).toBeGreaterThan(0);
  for (const control of all) {
    await expect(control).toBeVisible();
    const box = (await control.boundingBox())!;
    expect(box.x, await control.innerText()).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, await control.innerText()).toBeLessThanOrEqual(width + 0.5);
  }
}

test("the launch link opens once: a copy from history or another browser opens nothing, a reload of the tab keeps working", async ({
  page,
  fleet,
  browser,
}) => {
  const frames: string[] = [];
  page.on("websocket", (socket) => {
    socket.on("framereceived", (frame) => frames.push(String(frame.payload)));
    socket.on("framesent", (frame) => frames.push(String(frame.payload)));
  });
  await fleet.pairAll();
  const link = fleet.shell.url;
  await page.goto(link);
  await expect(page.getByTestId("env-row")).toHaveCount(3);
  // No bearer token the machines issued to the fleet ever reaches the page.
  const bearerTokens = fleet.sims.servers.flatMap((server) => server.auth.issuedTokens());
  expect(bearerTokens.length).toBeGreaterThanOrEqual(3);
  expect(frames.length).toBeGreaterThan(0);
  for (const token of bearerTokens) expect(frames.join("\n")).not.toContain(token);
  // The code left the address bar; no cookie was set for any other server on 127.0.0.1 to receive.
  expect(page.url()).not.toContain("code=");
  expect(await page.context().cookies()).toEqual([]);
  await page.reload();
  await expect(page.getByTestId("env-row")).toHaveCount(3);
  await expect(page.getByText("Reconnecting to T3 Fleet")).toHaveCount(0);

  const elsewhere = await browser.newContext();
  try {
    const stranger = await elsewhere.newPage();
    await stranger.goto(link);
    await expect(stranger.getByText("This page has no access to T3 Fleet")).toBeVisible();
    await expect(stranger.getByTestId("env-row")).toHaveCount(0);
    // The same tab's history entry was rewritten without the code; a fresh tab with the bare page has nothing either.
    const bare = await elsewhere.newPage();
    await bare.goto(fleet.shell.origin);
    await expect(bare.getByText("This page has no access to T3 Fleet")).toBeVisible();
  } finally {
    await elsewhere.close();
  }
});

test("a 1.1 MB paste into the pairing dialog is refused in the page, and the page stays connected", async ({ page, fleet }) => {
  const sentSizes: number[] = [];
  page.on("websocket", (socket) => socket.on("framesent", (frame) => sentSizes.push(Buffer.byteLength(String(frame.payload)))));
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("fleet-summary")).toBeVisible();
  await page.getByTestId("open-pairing").click();
  // A paste: one input event carrying the whole text (typing it would take minutes).
  await page.getByTestId("pair-input").evaluate((input: HTMLTextAreaElement) => {
    const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!;
    setValue.call(input, `http://127.0.0.1:1/pair#token=${"pasted words and more words\n".repeat(40_000)}`);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
  // Refused by length (the form's limit, or the bridge's frame check when it is submitted), never by a dropped connection.
  const submit = page.getByTestId("pair-submit");
  if (await submit.isEnabled()) await submit.click();
  await expect(
    page
      .getByTestId("pairing-dialog")
      .getByText(/limit|too long|at most/i)
      .first(),
  ).toBeVisible();
  await expect(page.getByTestId("pairing-dialog")).not.toContainText("connection to T3 Fleet was lost");
  expect(sentSizes.length).toBeGreaterThan(0);
  expect(Math.max(...sentSizes)).toBeLessThanOrEqual(MAX_BRIDGE_FRAME_BYTES);
  await page.keyboard.press("Escape");
  await fleet.pairAll();
  await expect(page.getByTestId("env-row")).toHaveCount(3);
  await expect(page.getByText("Reconnecting to T3 Fleet")).toHaveCount(0);
});

test("a hostile T3 server stays inert text, and every control stays in view", async ({ page, fleet }) => {
  const dialogs: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  const hostileLabel = `${html(1)}${"W".repeat(20_000)}`;
  const sim = await new SimServer({ generation: "upstream", label: hostileLabel, tickMs: 40 }).start();
  try {
    const now = sim.engine.now();
    sim.engine.dispatch({
      type: "project.create",
      commandId: "p",
      projectId: "evil-project",
      title: html(2),
      workspaceRoot: `/tmp/${html(3)}`,
      createdAt: now,
    });
    const thread = (threadId: string, title: string, branch: string | null) =>
      sim.engine.dispatch({
        type: "thread.create",
        commandId: `create-${threadId}`,
        threadId,
        projectId: "evil-project",
        title,
        modelSelection: { instanceId: "codex", model: html(4) },
        runtimeMode: "full-access",
        interactionMode: "default",
        branch,
        worktreePath: null,
        createdAt: now,
      });
    const send = (threadId: string, text: string) =>
      sim.engine.dispatch({
        type: "thread.turn.start",
        commandId: `send-${threadId}-${text.length}`,
        threadId,
        message: { messageId: `m-${threadId}-${text.length}`, role: "user", text, attachments: [] },
        runtimeMode: "full-access",
        interactionMode: "default",
        createdAt: sim.engine.now(),
      });
    thread("evil", `${html(5)} [x](javascript:window.${PWNED}=6) ${"T".repeat(5_000)}`, html(7));
    send(
      "evil",
      `${html(8)}\n[click me](javascript:window.${PWNED}=9) <a href="javascript:window.${PWNED}=10" ${MARK}>a</a> javascript:alert(1) https://example.com/ok`,
    );
    thread("huge", "Two megabytes", null);
    send("huge", `${html(11)} ${"M".repeat(2 * 1024 * 1024)}`);

    await fleet.pairAll();
    await fleet.service.request("pair.confirm", { input: sim.pairingUrl() });
    await page.goto(fleet.shell.url);
    await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
    await expect(agentRow(page, sim.environmentId, "evil")).toBeVisible();
    await expect(agentRow(page, sim.environmentId, "huge")).toBeVisible();
    await expectInert(page, dialogs);
    await expectInView(page, page.getByTestId("env-menu"));
    await expectInView(page, page.locator('[data-testid="open-settings"], [data-testid="open-pairing"]'));
    // The hostile machine's actions, in its menu, stay in view beside its 20,000-character label.
    await envRow(page, sim.environmentId).getByTestId("env-menu").click();
    await expectInView(page, page.getByTestId("env-menu-list").getByRole("menuitem"));
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("env-menu-list")).toHaveCount(0);

    await agentRow(page, sim.environmentId, "evil").locator(".agent-title").click();
    const transcript = page.getByTestId("transcript");
    await expect(transcript).toContainText(`<script ${MARK}>`);
    // Clicking every link the transcript offers opens nothing in the page.
    for (const link of await transcript.locator("a, button.link").all()) await link.click();
    await expectInert(page, dialogs);
    await expectInView(page, page.getByTestId("composer").locator("button"));
    await expectInView(page, page.getByTestId("env-menu"));

    await agentRow(page, sim.environmentId, "huge").locator(".agent-title").click();
    await expect(transcript).toContainText("MMMM");
    await expectInert(page, dialogs);
    await expectInView(page, page.getByTestId("composer").locator("button"));

    // Frames a broken or hostile server sends: not JSON, unknown kinds, undecodable rows, and
    // sequences that go backwards. The page keeps working; the other machines stay online.
    sim.sendRawFrame("{not json");
    sim.sendRawFrame(JSON.stringify({ _tag: "Chunk", requestId: "999999", values: [html(12)] }));
    sim.injectShellItems(
      { kind: html(13), sequence: 1 },
      { kind: "thread-upserted", sequence: "NaN", thread: { id: html(14) } },
      { kind: "thread-upserted", sequence: 1, thread: { id: "evil", title: html(15) } },
      { kind: "project-upserted", sequence: 0, project: null },
    );
    for (const other of fleet.sims.servers) await expect(envRow(page, other.environmentId)).toHaveAttribute("data-phase", "online");
    // A frame that is not JSON is skipped and counted; the machine stays (or comes back) online
    // before its row's buttons are measured.
    await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
    await expect(agentRow(page, sim.environmentId, "evil")).toBeVisible();
    await expectInert(page, dialogs);
    await expectInView(page, page.getByTestId("env-menu"));
    await expect(page.getByText("Reconnecting to T3 Fleet")).toHaveCount(0);
  } finally {
    await sim.stop();
  }
});

/** Characters that steer a terminal or reorder text: none may reach the page from a server. */
// eslint-disable-next-line no-control-regex -- the page is checked for control characters
const CONTROL_OR_BIDI = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

test("server text is data: escape sequences, bidi overrides and a 5 MB error reach the page as bounded plain text", async ({ page, fleet }) => {
  const sim = await new SimServer({ generation: "upstream", label: `studio${HOSTILE.osc52}${HOSTILE.screenClear}`, tickMs: 40 }).start();
  try {
    const reversed = fleet.sims.createThread(sim, { threadId: "rlo", title: `Pay ${HOSTILE.rlo}` });
    const broken = fleet.sims.createThread(sim, { threadId: "broken", title: `Deploy ${HOSTILE.c1Csi}` });
    sim.scriptNextTurn(broken, { steps: [{ kind: "fail", message: `<b>${HOSTILE.forgedLine}</b>${HOSTILE.osc52}${HOSTILE.huge}` }] });
    await fleet.service.request("pair.confirm", { input: sim.pairingUrl() });
    await page.goto(fleet.shell.url);
    await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
    await expect(envRow(page, sim.environmentId)).toContainText("studiobuild doneok");
    const title = agentRow(page, sim.environmentId, reversed).locator(".agent-title");
    await expect(title).toHaveText("Pay invoice gnp.exe");
    await expect(title).toHaveAttribute("title", "Pay invoice gnp.exe");
    fleet.sims.sendMessage(sim, broken, "ship it");
    await expect(agentRow(page, sim.environmentId, broken)).toHaveAttribute("data-status", "failed");
    // The failure's reason is shown, cleaned and capped; so is the notice about it.
    await expect(page.getByText(/oops T3 Fleet is running\./).first()).toBeVisible();
    const text = await page.evaluate(
      () => document.body.innerText + [...document.querySelectorAll("[title]")].map((element) => element.getAttribute("title")).join("\n"),
    );
    expect(text).not.toMatch(CONTROL_OR_BIDI);
    // Markup in the page is shown as text (React escapes it, the first test checks it stays inert).
    expect(text.length).toBeLessThan(200_000);
    // Notices carry what the OS notification shows: plain text, the markup removed.
    const notices = page.getByTestId("notice");
    await expect(notices.filter({ hasText: "studiobuild doneok" }).first()).toBeVisible();
    for (const notice of await notices.all()) {
      const noticeText = await notice.innerText();
      expect(noticeText).not.toMatch(CONTROL_OR_BIDI);
      expect(noticeText).not.toContain("<b>");
    }
  } finally {
    await sim.stop();
  }
});

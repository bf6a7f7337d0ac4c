// A message whose answer was lost with the page's socket to T3 Fleet (issue 43): the composer says it
// may have been sent and holds Send until T3 Fleet's receipts are back; then it is its receipt, or it
// comes back to be sent again under the same commandId. Either way T3 has it once.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "@playwright/test";
import type { DeliveryJournal } from "../electron/fleet/delivery-journal";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { type HeadlessShell, startHeadlessShell } from "../electron/serve/server";
import { SimFleet } from "../sim/fleet";
import { tapBridge } from "./bridge-tap";
import { agentRow, expect, type Fleet, test } from "./fixtures";

test.use({ generations: ["upstream"] });

const LOST_SEND_WORDS = "This message may have been sent: see its receipt when T3 Fleet is back.";
const LOST_SEND_NOT_RECEIVED_WORDS = "T3 Fleet has no record of this message, so it was not sent. Send it again when ready.";

async function openIdleAgent(page: Page, fleet: Fleet) {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Writer" });
  await fleet.pairAll();
  const tap = await tapBridge(page);
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "idle");
  await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
  const atServer = (text: string) => sim.engine.threads.get(threadId)!.messages.filter((m) => m.role === "user" && m.text === text).length;
  const sends = () => tap.sent.filter((request) => request.method === "agent.send").map((request) => request.params as { commandId?: string });
  return { tap, atServer, sends, composer: page.getByTestId("composer") };
}

test("a send whose answer is lost with the page's socket may have been sent: Send waits for the receipts, then its receipt shows, at T3 once", async ({
  page,
  fleet,
}) => {
  const { tap, atServer, sends, composer } = await openIdleAgent(page, fleet);
  const text = "reached T3, answer lost";
  await composer.getByRole("textbox").fill(text);
  tap.deafAfter("agent.send");
  await composer.getByTestId("send").click();
  // The service has it and T3 took it; neither the answer nor the receipts reach the page, whose socket then drops.
  await expect.poll(() => atServer(text)).toBe(1);
  await tap.cut();
  await expect(composer.getByTestId("lost-send")).toHaveText(LOST_SEND_WORDS);
  await expect(composer.getByTestId("command-error")).toHaveCount(0);
  await expect(composer.getByRole("textbox")).toHaveValue(text);
  await expect(composer.getByTestId("send")).toBeDisabled();
  // Enter does not send it either.
  await composer.getByRole("textbox").press("Enter");
  expect(sends()).toHaveLength(1);

  tap.restore();
  const receipt = page.getByTestId("delivery").filter({ hasText: text });
  await expect(receipt).toHaveAttribute("data-state", /accepted|delivered|answered/);
  await expect(composer.getByTestId("lost-send")).toHaveCount(0);
  await expect(composer.getByRole("textbox")).toHaveValue("");
  expect(sends()).toHaveLength(1);
  expect(atServer(text)).toBe(1);
});

test("a send lost before it reached T3 Fleet comes back once the receipts are known, and goes again under the same commandId, at T3 once", async ({
  page,
  fleet,
}) => {
  const { tap, atServer, sends, composer } = await openIdleAgent(page, fleet);
  const text = "never reached the service";
  await composer.getByRole("textbox").fill(text);
  // The request is on the wire when the socket drops: the page cannot know it never arrived.
  tap.hold("agent.send");
  await composer.getByTestId("send").click();
  await expect.poll(() => sends().length).toBe(1);
  await tap.cut();
  await expect(composer.getByTestId("lost-send")).toHaveText(LOST_SEND_WORDS);
  await expect(composer.getByTestId("send")).toBeDisabled();

  tap.release("agent.send");
  tap.restore();
  await expect(composer.getByTestId("lost-send")).toHaveText(LOST_SEND_NOT_RECEIVED_WORDS);
  await expect(composer.getByRole("textbox")).toHaveValue(text);
  await expect(composer.getByTestId("send")).toBeEnabled();
  expect(atServer(text)).toBe(0);
  await composer.getByTestId("send").click();
  const receipt = page.getByTestId("delivery").filter({ hasText: text });
  await expect(receipt).toHaveAttribute("data-state", /accepted|delivered|answered/);
  await expect(composer.getByTestId("lost-send")).toHaveCount(0);
  await expect(composer.getByRole("textbox")).toHaveValue("");
  const [first, again] = sends();
  expect(again?.commandId).toBe(first?.commandId);
  expect(first?.commandId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(sends()).toHaveLength(2);
  expect(atServer(text)).toBe(1);
});

test("a send in flight when T3 Fleet is killed: held while it is down, its restored receipt in the tab that opens the new link, at T3 once", async ({
  page,
}) => {
  // Its own fleet (the fixture's cannot restart): one simulated machine, the service and the shell on a fixed port.
  const rendererDir = join(resolve(dirname(fileURLToPath(import.meta.url)), ".."), "out/renderer");
  const sims = await SimFleet.start({ envs: 1, generations: ["upstream"], tickMs: 40 });
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-e2e-"));
  const secrets = new MemorySecretStore();
  const startService = () =>
    FleetService.start({
      dataDir,
      secrets,
      socket: { pingIntervalMs: 1_000, openTimeoutMs: 2_000 },
      timing: { baseBackoffMs: 100, maxBackoffMs: 500, stableAfterMs: 2_000, probeTimeoutMs: 500 },
    });
  let service = await startService();
  let shell: HeadlessShell = await startHeadlessShell({ service, rendererDir });
  try {
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Writer" });
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    const tap = await tapBridge(page);
    await page.goto(shell.newLaunchUrl());
    await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "idle");
    await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
    const composer = page.getByTestId("composer");
    const text = "sent as T3 Fleet was killed";
    await composer.getByRole("textbox").fill(text);
    // T3 takes the message and never answers; the service is killed with the dispatch in flight, and
    // nothing it said after the request left reached the page.
    sim.dropNextDispatch = "unanswered";
    tap.deafAfter("agent.send");
    await composer.getByTestId("send").click();
    const atServer = () => sim.engine.threads.get(threadId)!.messages.filter((m) => m.role === "user" && m.text === text).length;
    await expect.poll(atServer).toBe(1);
    // A kill writes nothing more to the data folder (the message was recorded before it was dispatched).
    (service as unknown as { journal: DeliveryJournal }).journal.halt();
    const port = new URL(shell.origin).port;
    await shell.close();
    await service.stop();
    await tap.cut();
    await expect(composer.getByTestId("lost-send")).toHaveText(LOST_SEND_WORDS);
    await expect(composer.getByTestId("send")).toBeDisabled();

    // T3 Fleet again, on the same data folder and port; the tab opens the new link (same origin: its sessionStorage is kept).
    service = await startService();
    shell = await startHeadlessShell({ service, rendererDir, port: Number(port) });
    tap.restore();
    await page.goto("about:blank");
    await page.goto(shell.newLaunchUrl());
    await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
    const receipt = page.getByTestId("delivery").filter({ hasText: text });
    await expect(receipt).toHaveAttribute("data-state", /uncertain|delivered|answered/);
    await expect(composer.getByTestId("lost-send")).toHaveCount(0);
    await expect(composer.getByRole("textbox")).toHaveValue("");
    await expect(receipt).toHaveAttribute("data-state", /delivered|answered/);
    expect(atServer()).toBe(1);
    expect(await page.evaluate(() => sessionStorage.getItem("t3fleet.lostSends"))).toBeNull();
  } finally {
    await page.close();
    await shell.close();
    await service.stop();
    await sims.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});

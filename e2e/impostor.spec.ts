// A server that answers with a paired machine's environmentId at another address: the window asks
// the user whether the machine moved, keeps the old address unless they say so, and the real
// machine's token never reaches the impostor.
import type { Page } from "@playwright/test";
import { SimServer } from "../sim/protocol1/server";
import { type Fleet, envRow, expect, test } from "./fixtures";

test.use({ generations: ["upstream"] });

/**
 * Pairs the fleet's machine, starts a second server that answers with its environmentId and label at
 * another address, and offers that server's pairing link in the window's dialog; then `scenario`.
 */
async function offerServerClaimingPairedMachine(page: Page, fleet: Fleet, scenario: (real: SimServer, claimant: SimServer) => Promise<void>): Promise<void> {
  const real = fleet.sims.servers[0]!;
  await fleet.pairAll();
  const claimant = await new SimServer({ generation: "upstream", environmentId: real.environmentId, label: real.label }).start();
  try {
    await page.goto(fleet.shell.url);
    await expect(envRow(page, real.environmentId)).toHaveAttribute("data-phase", "online");
    await page.getByTestId("open-pairing").click();
    await page.getByTestId("pair-input").fill(claimant.pairingUrl());
    await page.getByTestId("pair-submit").click();
    await scenario(real, claimant);
  } finally {
    await claimant.stop();
  }
}

test("an impostor claiming a paired machine's identity is shown as exactly that, and gets nothing", async ({ page, fleet }) => {
  await offerServerClaimingPairedMachine(page, fleet, async (real, impostor) => {
    const question = page.getByTestId("pair-impostor");
    await expect(question).toContainText(`This server claims to be ${real.label}, which you paired at ${real.baseUrl}: same machine moved, or an impostor?`);
    // Unanswered, the dialog will not pair; cancelling keeps the machine where it was.
    await expect(page.getByTestId("pair-submit")).toBeDisabled();
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByTestId("pairing-dialog")).toBeHidden();
    await expect(envRow(page, real.environmentId)).toHaveAttribute("data-phase", "online");
    expect(fleet.service.model.environment(real.environmentId)?.baseUrl).toBe(real.baseUrl);
    expect(impostor.bearersSeen.size).toBe(0);
    expect(impostor.auth.activeSessions).toHaveLength(0);
  });
});

test("a machine that really moved is re-pointed once the user says so, without its old token going to the new address", async ({ page, fleet }) => {
  await offerServerClaimingPairedMachine(page, fleet, async (real, moved) => {
    await page.getByTestId("pair-moved").check();
    await page.getByTestId("pair-submit").click();
    await expect(page.getByTestId("pairing-dialog")).toBeHidden();
    await expect.poll(() => fleet.service.model.environment(real.environmentId)?.baseUrl).toBe(moved.baseUrl);
    await expect(envRow(page, real.environmentId)).toHaveAttribute("data-phase", "online");
    const oldTokens = real.auth.activeSessions.map((session) => session.token);
    expect(oldTokens).toHaveLength(1);
    expect(moved.bearersSeen.has(oldTokens[0]!)).toBe(false);
  });
});

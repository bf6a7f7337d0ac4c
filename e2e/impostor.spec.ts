// A server that answers with a paired machine's environmentId at another address: the window asks
// the user whether the machine moved, keeps the old address unless they say so, and the real
// machine's token never reaches the impostor.
import { SimServer } from "../sim/server";
import { envRow, expect, test } from "./fixtures";

test.use({ generations: ["upstream"] });

test("an impostor claiming a paired machine's identity is shown as exactly that, and gets nothing", async ({ page, fleet }) => {
  const real = fleet.sims.servers[0]!;
  await fleet.pairAll();
  const impostor = await new SimServer({ generation: "upstream", environmentId: real.environmentId, label: real.label }).start();
  try {
    await page.goto(fleet.shell.url);
    await expect(envRow(page, real.environmentId)).toHaveAttribute("data-phase", "online");
    await page.getByTestId("open-pairing").click();
    await page.getByTestId("pair-input").fill(impostor.pairingUrl());
    await page.getByTestId("pair-submit").click();
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
  } finally {
    await impostor.stop();
  }
});

test("a machine that really moved is re-pointed once the user says so, without its old token going to the new address", async ({ page, fleet }) => {
  const real = fleet.sims.servers[0]!;
  await fleet.pairAll();
  const moved = await new SimServer({ generation: "upstream", environmentId: real.environmentId, label: real.label }).start();
  try {
    await page.goto(fleet.shell.url);
    await expect(envRow(page, real.environmentId)).toHaveAttribute("data-phase", "online");
    await page.getByTestId("open-pairing").click();
    await page.getByTestId("pair-input").fill(moved.pairingUrl());
    await page.getByTestId("pair-submit").click();
    await page.getByTestId("pair-moved").check();
    await page.getByTestId("pair-submit").click();
    await expect(page.getByTestId("pairing-dialog")).toBeHidden();
    await expect.poll(() => fleet.service.model.environment(real.environmentId)?.baseUrl).toBe(moved.baseUrl);
    await expect(envRow(page, real.environmentId)).toHaveAttribute("data-phase", "online");
    const oldTokens = real.auth.activeSessions.map((session) => session.token);
    expect(oldTokens).toHaveLength(1);
    expect(moved.bearersSeen.has(oldTokens[0]!)).toBe(false);
  } finally {
    await moved.stop();
  }
});

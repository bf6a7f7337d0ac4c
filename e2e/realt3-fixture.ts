// The fleet window in Chromium, through the headless shell, against a real T3 server
// (integration/realt3/harness.testkit.ts): the fixture of the real-server browser specs, which
// scripts/realt3.sh runs inside a private network namespace (playwright.realt3.config.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Page, test as base, expect } from "@playwright/test";
import { ScriptedModelServer } from "../integration/model/scripted-model-server";
import { RealT3Server, type ServerKind } from "../integration/realt3/harness.testkit";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { type HeadlessShell, startHeadlessShell } from "../electron/serve/server";
import { envRow } from "./fixtures";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface RealFleet {
  server: RealT3Server;
  service: FleetService;
  shell: HeadlessShell;
}

/**
 * A test whose `real` fixture is a fresh real server of `kind` running the real Codex against the
 * scripted model server (integration/model), a fleet service and the headless shell serving the window.
 */
export function realFleetTest(kind: ServerKind) {
  return base.extend<{ real: RealFleet }>({
    real: async ({ page }, use) => {
      const model = await ScriptedModelServer.start();
      const server = await RealT3Server.start({ kind, harnesses: { names: ["codex"], modelUrl: model.url } });
      const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-real-e2e-"));
      try {
        const service = await FleetService.start({
          dataDir,
          secrets: new MemorySecretStore(),
          socket: { pingIntervalMs: 1_000, openTimeoutMs: 2_000 },
          timing: { baseBackoffMs: 100, maxBackoffMs: 500, stableAfterMs: 2_000, probeTimeoutMs: 500 },
        });
        const shell = await startHeadlessShell({ service, rendererDir: join(root, "out/renderer") });
        const pageErrors: string[] = [];
        page.on("pageerror", (error) => pageErrors.push(error.message));
        await use({ server, service, shell });
        await shell.close();
        await service.stop();
        expect(pageErrors, "uncaught errors in the page").toEqual([]);
      } finally {
        await server.stop();
        await model.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  });
}

/** Pairs `real.server` by a fresh link in the window, as a user would, and returns its environment id once it shows online. */
export async function pairInWindow(page: Page, real: RealFleet): Promise<string> {
  const { server } = real;
  const link = await server.pairingLink();
  const { environmentId } = await server.descriptor();

  await page.goto(real.shell.url);
  await page.getByTestId("open-pairing").click();
  await page.getByTestId("pair-input").fill(link.url);
  await page.getByTestId("pair-submit").click();
  const preview = page.getByTestId("pair-preview");
  await expect(preview).toContainText(environmentId);
  await expect(preview).toContainText(`T3 ${server.kind.serverVersion}`);
  await page.getByTestId("pair-submit").click();
  await expect(page.getByTestId("pairing-dialog")).toBeHidden();
  await expect(envRow(page, environmentId)).toHaveAttribute("data-phase", "online");
  return environmentId;
}

/** Sends `text` from the open transcript of an idle agent: a new turn, answered with `reply` within `timeout`. */
export async function sendNewTurnFromWindow(page: Page, text: string, reply: string, timeout: number): Promise<void> {
  await expect(page.getByTestId("intent")).toHaveAttribute("data-intent", "new-turn");
  await page.getByLabel("Message").fill(text);
  await page.getByLabel("Message").press("Enter");
  const delivery = page.locator('[data-testid="delivery"]').filter({ hasText: text });
  await expect(delivery).toHaveAttribute("data-state", "answered", { timeout });
  await expect(delivery).toHaveAttribute("data-outcome", "new-turn");
  await expect(page.getByTestId("message-assistant").last()).toContainText(reply);
}

/** The server stored `text` once as the user's and `reply` as its last assistant message. */
export function expectStoredOnce(messages: readonly { role: string; text: string }[], text: string, reply: string): void {
  expect(messages.filter((message) => message.role === "user" && message.text === text)).toHaveLength(1);
  expect(messages.filter((message) => message.role === "assistant").at(-1)?.text).toBe(reply);
}

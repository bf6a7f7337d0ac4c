// The fleet window in Chromium, through the headless shell, against a real T3 server of either kind
// (electron/fleet/realt3/harness.testkit.ts): the fixture of the real-server browser specs, which
// scripts/realt3.sh runs inside a private network namespace (playwright.realt3.config.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test as base, expect } from "@playwright/test";
import { RealT3Server, type ServerKind } from "../electron/fleet/realt3/harness.testkit";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { type HeadlessShell, startHeadlessShell } from "../electron/serve/server";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface RealFleet {
  server: RealT3Server;
  service: FleetService;
  shell: HeadlessShell;
}

/** A test whose `real` fixture is a fresh real server of `kind`, a fleet service and the headless shell serving the window. */
export function realFleetTest(kind: ServerKind, codexReply: string) {
  return base.extend<{ real: RealFleet }>({
    real: async ({ page }, use) => {
      const server = await RealT3Server.start({ kind, codexReply });
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
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  });
}

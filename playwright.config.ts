import { defineConfig } from "@playwright/test";

/** Debian's Chromium: Playwright's own browser builds cannot be downloaded on our machines. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export default defineConfig({
  testDir: "e2e",
  testMatch: "**/*.spec.ts",
  // The real-server and discovery specs run inside network namespaces (playwright.realt3.config.ts, playwright.discovery.config.ts).
  testIgnore: [/realt3(-[a-z0-9]+)?\.spec\.ts$/, /discovery\.spec\.ts$/],
  timeout: 60_000,
  expect: { timeout: 10_000 },
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  outputDir: "test-results/e2e",
  globalSetup: "./e2e/global-setup.ts",
  reporter: [["list"], ["./e2e/summary-reporter.ts"]],
  use: {
    viewport: { width: 1400, height: 900 },
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});

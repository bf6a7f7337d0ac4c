import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

/** The browser spec against the real T3 0.0.42 server; scripts/realt3.sh runs it inside the network namespace. */
export default defineConfig({
  ...base,
  testMatch: /realt3(-[a-z0-9]+)?\.spec\.ts$/,
  testIgnore: [],
  outputDir: "test-results/e2e-realt3",
});

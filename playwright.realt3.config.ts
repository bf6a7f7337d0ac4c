import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

/** The browser specs against the real T3 servers (0.0.42 and the V2 engine); scripts/realt3.sh runs them inside the network namespace. */
export default defineConfig({
  ...base,
  testMatch: /realt3(-[a-z0-9]+)?\.spec\.ts$/,
  testIgnore: [],
  outputDir: "test-results/e2e-realt3",
});

import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

/** Find machines in the window, against the discovery suite's namespaces (scripts/discovery-netns.sh). */
export default defineConfig({
  ...base,
  testMatch: "discovery.spec.ts",
  testIgnore: [],
  outputDir: "test-results/e2e-discovery",
});

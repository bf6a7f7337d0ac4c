import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["shared/**/*.test.ts", "electron/**/*.test.ts", "sim/**/*.test.ts", "renderer/**/*.test.{ts,tsx}"],
    // The real-server suite runs on its own, inside a network namespace (vitest.realt3.config.ts).
    exclude: ["electron/fleet/realt3/**", "electron/fleet/discovery/netns/**", "**/node_modules/**"],
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Two cores: keep workers bounded so socket-heavy suites do not starve each other.
    maxWorkers: 2,
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "shared/**/*.test.ts",
      "electron/**/*.test.ts",
      "sim/**/*.test.ts",
      "renderer/**/*.test.{ts,tsx}",
      "integration/model/**/*.test.ts",
      "bench/**/*.test.ts",
    ],
    // integration/ runs on its own (real servers and namespaces: vitest.realt3.config.ts, vitest.discovery.config.ts), all but the loopback-only scripted model.
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Two cores: keep workers bounded so socket-heavy suites do not starve each other.
    maxWorkers: 2,
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});

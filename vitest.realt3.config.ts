import { defineConfig } from "vitest/config";

/**
 * The real-server suite (integration/realt3): the released T3 executable (protocol 1) with the real
 * harness CLIs on loopback, run by scripts/realt3.sh inside a private network namespace. One file at a time: each
 * file starts one server for its scenarios, and two at once would starve a small machine.
 */
export default defineConfig({
  test: {
    include: ["integration/realt3/**/*.test.ts"],
    environment: "node",
    testTimeout: 90_000,
    hookTimeout: 90_000,
    fileParallelism: false,
    maxWorkers: 1,
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});

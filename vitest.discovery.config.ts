import { defineConfig } from "vitest/config";

/**
 * The discovery suite (integration/discovery): real T3 servers and sshd in network
 * namespaces it creates, run by scripts/discovery-netns.sh inside its own `unshare --net`.
 */
export default defineConfig({
  test: {
    include: ["integration/discovery/**/*.test.ts"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 900_000,
    fileParallelism: false,
    maxWorkers: 1,
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});

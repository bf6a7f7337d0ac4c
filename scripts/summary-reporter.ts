// Prints the plain closing line CI reads ("N passed, N failed, N skipped") after Vitest's own output.
import type { Reporter, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") counts.failed++;
        else counts.skipped++;
      }
      // A file that failed outside its tests (a hook, an import) counts as a failure, never only as skips.
      if (module.state() === "failed" && ![...module.children.allTests()].some((test) => test.result().state === "failed")) counts.failed++;
    }
    console.log(`\nunit: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}

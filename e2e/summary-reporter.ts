// Prints the plain closing line CI reads ("N passed, N failed, N skipped") after Playwright's list.
import type { FullResult, Reporter, TestCase, TestResult } from "@playwright/test/reporter";

export default class SummaryReporter implements Reporter {
  private readonly counts = { passed: 0, failed: 0, skipped: 0 };

  onTestEnd(test: TestCase, result: TestResult): void {
    if (result.retry < test.retries && result.status !== "passed") return;
    if (result.status === "passed") this.counts.passed++;
    else if (result.status === "skipped") this.counts.skipped++;
    else this.counts.failed++;
  }

  onEnd(_result: FullResult): void {
    console.log(`\ne2e: ${this.counts.passed} passed, ${this.counts.failed} failed, ${this.counts.skipped} skipped`);
  }
}

// `npm run bench -- flapping [--minutes 10] [--every 60] [--outage 15]`: the demo fleet, whose build
// machine drops off the network every minute and comes back, with T3 Fleet's page open in Debian's
// Chromium. Prints every change of the "needs you" count in the top bar, the Inbox badge, the tab's
// title and its icon, beside the needs the service reports (bench/flapping/verdict.ts), and fails
// when a count changed without a need changing (issue 25's done-line).
import { parseArgs } from "node:util";
import { startDemoFleet } from "../sim/demo-fleet";
import { FlappingMeasurement } from "./flapping/measure";
import { recordSurfaces } from "./flapping/page";
import { startPageRig } from "./page-rig";

const { values } = parseArgs({
  options: { minutes: { type: "string", default: "10" }, every: { type: "string", default: "60" }, outage: { type: "string", default: "15" } },
});
const minutes = Number(values.minutes);
const everyMs = Number(values.every) * 1000;
const outageMs = Number(values.outage) * 1000;
if (!(minutes > 0) || !(everyMs > 0) || !(outageMs > 0) || outageMs >= everyMs) {
  console.error("flapping: --minutes, --every and --outage must be positive numbers, the outage shorter than the cycle");
  process.exit(2);
}

const demo = await startDemoFleet({ outageEveryMs: everyMs, outageMs });
const { service, shell, browser, close } = await startPageRig(demo.sims, "flapping");
let measurement: FlappingMeasurement | undefined;
try {
  for (const url of demo.pairingUrls) await service.request("pair.confirm", { input: url });
  measurement = new FlappingMeasurement(service, demo.flaky, demo.flaps);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await recordSurfaces(page, (surface, value) => measurement!.reading(surface, value));
  await page.goto(shell.url);
  console.log(`flapping: ${minutes} min of the demo fleet; ${demo.flaky.label} drops off every ${everyMs / 1000} s for ${outageMs / 1000} s`);
  await new Promise((resolve) => setTimeout(resolve, minutes * 60_000));
  // Ends with the machine back and the page caught up, so the last values compare with the truth.
  await measurement.until(() => measurement!.flakyOnline(), everyMs + 30_000, `${demo.flaky.label} online again`);
  await measurement.until(() => measurement!.settled(), 10_000, "the page showing the service's needs").catch(() => undefined);
  const verdict = measurement.verdict();
  for (const line of measurement.report(verdict)) console.log(line);
  if (verdict.failures.length) process.exitCode = 1;
} finally {
  measurement?.stop();
  await demo.stop();
  await close();
}

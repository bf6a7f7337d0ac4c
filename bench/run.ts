// `npm run bench`: runs every benchmark in this folder in its own process and prints its figures.
// Figures are measured, never asserted by timed tests (DEVELOPERS.md).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildRenderer } from "./renderer-build";

const here = dirname(fileURLToPath(import.meta.url));
// `npm run bench -- <names…> --option value…`: names choose the benches; options go to each of them.
const args = process.argv.slice(2);
const firstOption = args.findIndex((arg) => arg.startsWith("--"));
const only = firstOption < 0 ? args : args.slice(0, firstOption);
const options = firstOption < 0 ? [] : args.slice(firstOption);
const benches = readdirSync(here)
  .filter((name) => name.endsWith(".bench.ts"))
  .filter((name) => only.length === 0 || only.some((filter) => name.includes(filter)));
// The page benches measure the built renderer: build it once from the current sources for all of them.
if (benches.some((bench) => readFileSync(join(here, bench), "utf8").includes('from "./page-rig"'))) {
  buildRenderer();
}
let failed = 0;
for (const bench of benches) {
  console.log(`\n=== ${bench}`);
  const result = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", join(here, bench), ...options], { stdio: "inherit" });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);

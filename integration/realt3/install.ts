// Installs the pinned T3 executable and the pinned harness CLIs into the cache folder (needs the npm
// registry, so it runs before scripts/realt3.sh enters its network namespace).
import { HARNESSES, ensureHarnessesInstalled } from "../harnesses/install";
import { ensureT3Installed } from "./harness.testkit";

const log = (line: string) => console.log(`realt3: ${line}`);
const [executable, harnesses] = await Promise.all([ensureT3Installed(log), ensureHarnessesInstalled(log)]);
log(`T3 executable ready at ${executable}`);
for (const [name, path] of Object.entries(harnesses)) log(`${HARNESSES[name as keyof typeof HARNESSES].launcher} ready at ${path}`);

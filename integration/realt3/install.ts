// Installs the pinned T3 executable into the cache folder (needs the npm registry, so it runs
// before scripts/realt3.sh enters its network namespace).
import { ensureT3Installed } from "./harness.testkit";

const executable = await ensureT3Installed((line) => console.log(`realt3: ${line}`));
console.log(`realt3: T3 executable ready at ${executable}`);

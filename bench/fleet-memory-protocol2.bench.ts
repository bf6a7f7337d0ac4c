// Fleet service memory at 10 environments × 5,000 protocol-2 threads, in a fresh process. Prints figures.
import { serviceBench } from "./fleet-helpers";

await serviceBench(5_000, false, "v2");
process.exit(0);

// Fleet service memory at 10 environments × 5,000 protocol-1 threads, in a fresh process. Prints figures.
import { serviceBench } from "./fleet-helpers";

await serviceBench(5_000, false, "fork");
process.exit(0);

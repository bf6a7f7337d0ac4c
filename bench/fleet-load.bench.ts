// Cold start (10 × 1,000), event-to-model latency under load, bytes vs naive polling, idle CPU,
// offline detection without a FIN, and O(changed) application. Prints figures; asserts nothing.
import { modelBench, serviceBench } from "./fleet-helpers";

modelBench();
await serviceBench(1_000, true);
process.exit(0);

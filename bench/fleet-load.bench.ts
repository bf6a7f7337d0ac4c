// Cold start (10 × 1,000), event-to-model latency under load, bytes vs naive polling and to UIs,
// idle CPU, offline detection without a FIN, and O(changed) application, on protocol 1 and
// protocol 2 machines. Prints figures; asserts nothing.
import { modelBench, serviceBench } from "./fleet-helpers";

modelBench();
await serviceBench(1_000, true, "fork");
await serviceBench(1_000, true, "v2");
process.exit(0);

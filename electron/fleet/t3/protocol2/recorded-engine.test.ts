// The protocol-2 adapter against what T3's real V2 engine sent (../shared/fixtures/t3-v2dev), played
// back frame by frame: the shell stream keeps every row through enrichment snapshots and resumes,
// and a failed turn gets its reason from the thread's error item.
import { afterEach, describe, expect, it } from "vitest";
import type { AgentFacts } from "../../../../shared/fleet/facts";
import { EnvironmentDescriptor } from "../../../../shared/t3/schemas";
import { T3EnvironmentClient } from "../client";
import { Protocol2Adapter } from "./adapter";
import { FleetRecorder } from "./recorders.testkit";
import { type RecordedExchange, ReplayServer, boundedSnapshotAfter, readV2Recording, recordedExchanges, recordedValues } from "./replay.testkit";
import { OriginToken } from "../origin-token";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function descriptor() {
  const http = readV2Recording("00-handshake.json").frames.find((entry) => entry.dir === "http" && entry.url?.endsWith("/.well-known/t3/environment"));
  return EnvironmentDescriptor.parse(http?.body);
}

/** Counts rows after every callback, so a moment with fewer rows cannot pass unseen. */
class RowCounter extends FleetRecorder {
  fewest = Number.POSITIVE_INFINITY;
  readonly upserts: AgentFacts[] = [];
  override upsert(agent: AgentFacts): void {
    this.upserts.push(agent);
    super.upsert(agent);
  }
  protected override changed(): void {
    if (this.snapshots > 0) this.fewest = Math.min(this.fewest, this.agents.size);
    super.changed();
  }
}

async function replay(exchanges: RecordedExchange[]) {
  const server = await new ReplayServer(exchanges).start();
  cleanups.push(() => server.stop());
  const client = new T3EnvironmentClient(server.baseUrl, { clientLabel: "T3 Fleet on test" });
  const adapter = new Protocol2Adapter({ client, generation: "upstream", descriptor: descriptor() });
  const credentials = { token: OriginToken.issuedBy(server.baseUrl, "replay-bearer"), generation: "upstream" as const };
  const fleet = new RowCounter();
  const subscribe = async () => {
    const session = await adapter.connect(credentials);
    cleanups.push(() => session.close());
    fleet.ended = undefined;
    const subscription = session.subscribeFleet(fleet);
    return { session, subscription };
  };
  return { server, adapter, fleet, subscribe };
}

/** The threads a shell recording shows: the first complete snapshot's rows plus every thread.updated. */
function threadsIn(name: string): Set<string> {
  const ids = new Set<string>();
  for (const value of recordedValues(name) as {
    kind: string;
    snapshot?: { threads: { id: string }[] };
    thread?: { id: string };
    resolvedRepositoryIdentityRoots?: unknown;
  }[]) {
    if (value.kind === "snapshot" && value.snapshot && value.resolvedRepositoryIdentityRoots === undefined)
      for (const row of value.snapshot.threads) ids.add(row.id);
    if (value.kind === "thread.updated" && value.thread) ids.add(value.thread.id);
  }
  return ids;
}

/** The threads whose last recorded row is failed. */
function failedThreadsIn(name: string): Set<string> {
  const status = new Map<string, string>();
  for (const value of recordedValues(name) as {
    kind: string;
    snapshot?: { threads: { id: string; status: string }[] };
    thread?: { id: string; status: string };
  }[]) {
    if (value.kind === "snapshot" && value.snapshot) for (const row of value.snapshot.threads) status.set(row.id, row.status);
    if (value.kind === "thread.updated" && value.thread) status.set(value.thread.id, value.thread.status);
  }
  return new Set([...status].filter(([, value]) => value === "failed").map(([id]) => id));
}

const shellOnly = (name: string) => recordedExchanges(name).filter((exchange) => exchange.tag === "orchestration.subscribeShell");

describe("the real engine's shell stream, played back", () => {
  it("keeps every row through mid-stream enrichment snapshots with no threads (09)", async () => {
    const { adapter, fleet, subscribe } = await replay(shellOnly("09-shell-stream.json"));
    await subscribe();
    const expected = threadsIn("09-shell-stream.json");
    await fleet.until(() => adapter.shell?.sequence === 414, "the last recorded thread.updated");
    expect(fleet.snapshots).toBe(1);
    expect(fleet.synced).toBe(1);
    expect(fleet.agents.size).toBe(expected.size);
    expect(fleet.agents.size).toBeGreaterThan(12);
    expect(fleet.fewest).toBe(12);
    expect(fleet.removed).toEqual([]);
    // The project created mid-stream (its update, then its enrichment snapshot) names its rows.
    const created = [...fleet.agents.values()].filter((agent) => agent.projectId.startsWith("proj-aa8fb63b"));
    expect(created.length).toBeGreaterThan(0);
    expect(created.every((agent) => agent.projectTitle === "realv2 beta")).toBe(true);
  });

  it("keeps all 33 rows when a resume starts with a metadata-only snapshot (10)", async () => {
    const { server, adapter, fleet, subscribe } = await replay(shellOnly("10-shell-resume.json"));
    const first = await subscribe();
    await fleet.until(() => fleet.synced === 1, "the fresh subscription is synchronized");
    const before = fleet.agents.size;
    expect(before).toBe(33);

    // The engine restarts: the socket drops, the fleet connects again and resumes by sequence.
    first.subscription.close();
    server.dropConnections();
    await subscribe();
    await fleet.until(() => fleet.synced === 2, "the resumed subscription is synchronized");
    expect(server.requests.filter((request) => request.tag === "orchestration.subscribeShell").at(-1)?.payload).toEqual({
      afterSequence: 872,
      requestCompletionMarker: true,
    });
    expect(fleet.agents.size).toBe(before);

    // A second resume replays two rows the fleet already has; nothing is lost or doubled.
    await subscribe();
    await fleet.until(() => fleet.synced === 3, "the second resume is synchronized");
    expect(fleet.agents.size).toBe(before);
    expect(fleet.fewest).toBe(before);
    expect(fleet.snapshots).toBe(1);
    expect(adapter.shell?.sequence).toBe(872);
  });
});

describe("a failed turn on the real engine, played back", () => {
  const FAILED = "thread-d8c2a52e-236d-410e-aae4-5a4d39f989d4";

  it("reads the reason from the thread's error item when the row's lastError is empty (05, 09)", async () => {
    const { server, fleet, subscribe } = await replay(shellOnly("09-shell-stream.json"));
    server.bounded.set(FAILED, boundedSnapshotAfter("05-fail.json", FAILED));
    await subscribe();
    const agent: AgentFacts = await fleet.untilAgent(FAILED, (row) => row.run.phase === "failed" && row.run.reason !== null, "the failed row with its reason");
    expect(agent.run).toEqual({ phase: "failed", reason: "Fake codex failure" });
    // The turn failed while the fleet watched: the row turned failed once, already with its reason.
    const failedUpserts = fleet.upserts.filter((row) => row.threadId === FAILED && row.run.phase === "failed");
    expect(failedUpserts.map((row) => row.run)).toEqual([{ phase: "failed", reason: "Fake codex failure" }]);
    // Only failed threads are read, each once: here the probe's failed thread and this one, of all rows.
    await fleet.until(
      () => server.httpReads.filter((read) => read.includes("/bounded")).length === failedThreadsIn("09-shell-stream.json").size,
      "every failed row read",
    );
    const reads = server.httpReads.filter((read) => read.includes("/bounded"));
    expect(new Set(reads)).toEqual(new Set([...failedThreadsIn("09-shell-stream.json")].map((id) => `GET /api/orchestration/threads/${id}/bounded`)));
    expect(reads.length).toBe(2);
    expect(fleet.agents.size).toBeGreaterThan(10);
  });
});

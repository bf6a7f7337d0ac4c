// The protocol-2 simulator against recordings of T3's real V2 engine (sim/recordings.ts,
// `t3-v2dev`), the shell stream: 09 one subscription over every flow (rows' states per flow), the
// shells beside 04b/06b/06c (no completion marker), 10 resumes, and a restart, which was never
// recorded: a client reconnecting after it gets what 10's resume and 02's thread resume show.
// T3 coalesces a thread's shell updates over 50 ms, so a recording shows some of a row's states
// only; this simulator paces its agent at that window (one shell update per step), and each flow's
// states, kept to those its recording shows, must be the recorded ones (asCoalesced), and every
// state it shows must be one the engine showed somewhere. The thread streams: recordings-conformance.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Exit, RawPeer } from "../raw-peer.testkit";
import { readV2Recording } from "../recordings";
import { untilEngine } from "./engine.testkit";
import {
  DISPATCH,
  RecordedFlows,
  SHELL,
  allShellStates,
  asCoalesced,
  collapseRepeats,
  envelopes,
  failureOf,
  label,
  liveLabels,
  payloadWords,
  recordedChunks,
  recordedThreadIds,
  rowState,
  shapeDifferences,
  type ShellRowLike,
  shellStates,
} from "./recordings.testkit";
import { SHELL_COALESCE_MS, type V2SimServer } from "./server";

let flows: RecordedFlows;
let sim: V2SimServer;
const peers: RawPeer[] = [];

beforeAll(async () => {
  // One agent step per shell update, so every state of a row reaches the shell: the agent's steps
  // and the shell's coalescing use timers of one duration, which Node runs in the order they were
  // set (a busy machine included), and a step's update is always set before the next step.
  flows = await RecordedFlows.start({ tickMs: SHELL_COALESCE_MS });
  ({ sim } = flows);
});

afterAll(async () => {
  for (const peer of peers) peer.close();
  await flows?.stop();
});

const recordedShell = (name: string, index = 0) => recordedChunks(readV2Recording(name), SHELL, index).flat();
const RECORDED_SHELLS = ["09-shell-stream.json", "04b-interrupt-running.json", "06b-steer-running.json", "06c-steer-supported.json"];
/** Every row state the engine's shells showed, of any thread. */
const ENGINE_STATES = new Set(RECORDED_SHELLS.flatMap((name) => [...allShellStates(recordedShell(name))]));

/** A shell subscription on its own connection, once its first snapshot arrived. */
async function watchShell(payload: Record<string, unknown> = { requestCompletionMarker: true }): Promise<{ peer: RawPeer; shell: string }> {
  const peer = await RawPeer.connectProtocol2(sim);
  peers.push(peer);
  const shell = peer.request(SHELL, payload);
  await peer.untilValue(shell, (value) => label(value) === "snapshot");
  return { peer, shell };
}

/** The newest sequence of the thread's events on the server. */
const lastSequence = (threadId: string) =>
  sim.engine
    .eventsAfter(0)
    .filter((stored) => stored.event.threadId === threadId)
    .at(-1)?.sequence ?? 0;

/** Resolves once the shell has a row of the thread at least as new as its last event. */
function untilRowCaughtUp(peer: RawPeer, shell: string, threadId: string): Promise<void> {
  return peer.until(() =>
    peer
      .values(shell)
      .some((value) => (value as { thread?: { id: string } }).thread?.id === threadId && (value as { sequence: number }).sequence >= lastSequence(threadId)),
  );
}

const runsSettled = (threadId: string, count: number) =>
  untilEngine(
    sim.engine,
    () => {
      const runs = sim.engine.threads.get(threadId)!.runs;
      return runs.length === count && runs.every((run) => ["completed", "failed", "interrupted"].includes(run.status));
    },
    `${count} runs over`,
  );

/** A thread whose idle row the shell has shown, as every recorded flow's thread existed before its message. */
async function threadShown(peer: RawPeer, shell: string, options: { runtimeMode?: string } = {}): Promise<string> {
  const threadId = await flows.createThread(options);
  await untilRowCaughtUp(peer, shell, threadId);
  return threadId;
}

/** The simulator's states of one flow's thread against its recorded states. */
function expectStatesLike(simulated: string[], recorded: string[], name: string): void {
  expect(recorded.length, `${name}: the recording shows the thread`).toBeGreaterThan(0);
  expect(asCoalesced(simulated, recorded), `${name}: ${simulated.join(" > ")}`).toEqual(recorded);
  expect(
    simulated.filter((state) => !ENGINE_STATES.has(state)),
    `${name}: states the engine never showed`,
  ).toEqual([]);
}

/** A new connection after a restart; a pooled HTTP connection to the old process fails once, as it would for any client. */
async function reconnect(attempts = 3): Promise<RawPeer> {
  try {
    const peer = await RawPeer.connectProtocol2(sim);
    peers.push(peer);
    return peer;
  } catch (error) {
    if (attempts <= 1) throw error;
    return reconnect(attempts - 1);
  }
}

const refuse = async (exit: Promise<Exit>) => expect(failureOf(await exit)?._tag).toBe("OrchestrationV2DispatchCommandError");

describe("the protocol-2 simulator against the real V2 engine's recordings: the shell", () => {
  it("09 a fresh subscription: the full snapshot, a metadata refresh (threads: []) and synchronized; a refresh after a project is created", async () => {
    const recorded = recordedShell("09-shell-stream.json");
    const { peer, shell } = await watchShell();
    const labels = () => peer.values(shell).map(label);
    await peer.until(() => labels().includes("snapshot(metadata)") && labels().includes("synchronized"));
    expect(labels().sort()).toEqual(recorded.slice(0, 3).map(label).sort());
    const metadata = peer.values(shell).find((value) => label(value) === "snapshot(metadata)") as { snapshot: Record<string, unknown> };
    expect(metadata.snapshot).toMatchObject({ threads: [], archivedThreads: [] });
    await peer.call("projects.mutate", {
      type: "project.create",
      commandId: flows.fresh("cmd"),
      projectId: flows.fresh("proj"),
      title: "later",
      workspaceRoot: "/work/later",
      createWorkspaceRootIfMissing: true,
    });
    await peer.until(() => labels().filter((entry) => entry === "snapshot(metadata)").length >= 2);
    // After a project is created: its row, then a metadata refresh.
    expect(collapseRepeats(labels()).join(" ")).toContain("project.updated snapshot(metadata)");
    expect(collapseRepeats(recorded.map(label)).join(" ")).toContain("project.updated snapshot(metadata)");
    const threadId = await threadShown(peer, shell);
    const first = (kind: string, list: unknown[]) => list.find((value) => label(value) === kind);
    for (const kind of ["snapshot", "snapshot(metadata)", "project.updated", "thread.updated"])
      expect(shapeDifferences(first(kind, peer.values(shell)), first(kind, recorded), kind)).toEqual([]);
    expect(shellStates(peer.values(shell), threadId)).toEqual(shellStates(recorded, recordedThreadIds(readV2Recording("02-turn-plain.json"))[0]!).slice(0, 1));
  });

  it("09 each flow's row goes through the recorded states: 02 a turn, 03 an approval, 04/06 refusals, 05 a failure (lastError null), 07/08 a queued run", async () => {
    const recorded = recordedShell("09-shell-stream.json");
    const { peer, shell } = await watchShell();
    const plain = async () => {
      const threadId = await threadShown(peer, shell);
      await flows.followThread(threadId);
      await flows.dispatchMessage(threadId, "Hello there, please reply");
      await runsSettled(threadId, 1);
      return threadId;
    };
    const approval = async () => {
      const threadId = await threadShown(peer, shell, { runtimeMode: "approval-required" });
      const stream = await flows.followThread(threadId);
      await flows.dispatchMessage(threadId, "Please run a command that needs #approval");
      await flows.hasLabel(stream, "turn-item.updated:approval_request/waiting");
      // The row waits on the request before it is answered, as the recorded client's did.
      await untilRowCaughtUp(peer, shell, threadId);
      const request = sim.engine.threads.get(threadId)!.requests[0]!;
      expect(
        (await peer.call(DISPATCH, { type: "runtime-request.respond", commandId: flows.fresh("cmd"), threadId, requestId: request.id, decision: "accept" }))
          ._tag,
      ).toBe("Success");
      await runsSettled(threadId, 1);
      return threadId;
    };
    const refused = (what: "interrupt" | "steer") => async () => {
      const { threadId, runId } = await flows.waitingRun(await threadShown(peer, shell));
      if (what === "interrupt") {
        await refuse(flows.interrupt(threadId, runId, "sim"));
        await refuse(flows.interrupt(threadId, runId));
      } else await refuse(flows.dispatchMessage(threadId, "Steer: also mention bananas", { type: "steer_active", targetRunId: runId }));
      // The engine's checkpoint window outlasted its shell's 50 ms: the row showed the run waiting.
      await untilRowCaughtUp(peer, shell, threadId);
      sim.engine.release(threadId);
      await runsSettled(threadId, 1);
      return threadId;
    };
    const failed = async () => {
      const threadId = await threadShown(peer, shell);
      await flows.followThread(threadId);
      sim.scriptNextRun(threadId, [
        { kind: "reply", text: "Hello from the simulator." },
        { kind: "fail", failureClass: "provider_error", message: "Simulated failure" },
      ]);
      await flows.dispatchMessage(threadId, "Please fail this turn");
      await runsSettled(threadId, 1);
      return threadId;
    };
    const queued = (dispatchMode: { type: string }) => async () => {
      const { threadId } = await flows.heldRun([{ kind: "hold" }, { kind: "reply", text: "Hello from the simulator." }], await threadShown(peer, shell));
      await untilRowCaughtUp(peer, shell, threadId);
      expect((await flows.dispatchMessage(threadId, "Second message", dispatchMode))._tag).toBe("Success");
      await untilRowCaughtUp(peer, shell, threadId);
      sim.engine.release(threadId);
      await runsSettled(threadId, 2);
      return threadId;
    };
    const played: [string, () => Promise<string>][] = [
      ["02-turn-plain.json", plain],
      ["03-approval.json", approval],
      ["04-interrupt.json", refused("interrupt")],
      ["05-fail.json", failed],
      ["06-steer.json", refused("steer")],
      ["07-queue.json", queued({ type: "queue_after_active" })],
      ["08-start-immediately.json", queued({ type: "start_immediately" })],
    ];
    const threads = await Promise.all(played.map(([, flow]) => flow()));
    for (const threadId of threads) await untilRowCaughtUp(peer, shell, threadId);
    played.forEach(([name], index) => {
      const recordedThread = recordedThreadIds(readV2Recording(name))[0]!;
      expectStatesLike(shellStates(peer.values(shell), threads[index]!), shellStates(recorded, recordedThread), name);
    });
    // A row in each state the engine showed has the shape of the engine's row in that state (a
    // pending request's, a failed row's, a queued one's…).
    const rowsByState = (list: unknown[]) =>
      new Map(list.flatMap((value) => ((value as { thread?: ShellRowLike }).thread ? [[rowState((value as { thread: ShellRowLike }).thread), value]] : [])));
    const recordedRows = rowsByState(recorded);
    const simulatedRows = rowsByState(peer.values(shell).filter((value) => threads.includes((value as { thread?: { id: string } }).thread?.id ?? "")));
    const compared = [...simulatedRows].filter(([state]) => recordedRows.has(state));
    expect(compared.length).toBeGreaterThanOrEqual(8);
    for (const [state, row] of compared) expect(shapeDifferences(row, recordedRows.get(state), state)).toEqual([]);
  });

  it("04b, 06b, 06c: a shell without the completion marker beside a running turn: the snapshot, no synchronized, and the row's states as recorded", async () => {
    const played: [string, (threadId: string, runId: string) => Promise<Exit>][] = [
      ["04b-interrupt-running.json", (threadId, runId) => flows.interrupt(threadId, runId, "sim")],
      [
        "06b-steer-running.json",
        (threadId, runId) => flows.dispatchMessage(threadId, "Steer: mention bananas too", { type: "steer_active", targetRunId: runId }),
      ],
      [
        "06c-steer-supported.json",
        (threadId, runId) => flows.dispatchMessage(threadId, "Steer: mention bananas too", { type: "steer_active", targetRunId: runId }),
      ],
    ];
    const watched = await Promise.all(
      played.map(async ([name, act]) => {
        const { peer, shell } = await watchShell({});
        const script = name.startsWith("04b") ? [{ kind: "reply" as const, text: "Hello from " }, { kind: "hold" as const }] : [{ kind: "hold" as const }];
        const { threadId, runId } = await flows.heldRun([...script, { kind: "reply", text: "the simulator." }], await threadShown(peer, shell));
        await untilRowCaughtUp(peer, shell, threadId);
        expect((await act(threadId, runId))._tag).toBe("Success");
        await untilRowCaughtUp(peer, shell, threadId);
        if (!name.startsWith("04b")) sim.engine.release(threadId);
        await runsSettled(threadId, 1);
        await untilRowCaughtUp(peer, shell, threadId);
        return { name, peer, shell, threadId };
      }),
    );
    for (const { name, peer, shell, threadId } of watched) {
      const recorded = recordedShell(name);
      const values = peer.values(shell);
      // Rows aside, the stream is the snapshot and metadata refreshes; nothing says it is in sync.
      const others = (list: unknown[]) => collapseRepeats(list.map(label).filter((entry) => entry !== "thread.updated"));
      expect(others(values), name).toEqual(others(recorded));
      expect(values.map(label), name).not.toContain("synchronized");
      expectStatesLike(shellStates(values, threadId), shellStates(recorded, recordedThreadIds(readV2Recording(name))[0]!), name);
    }
  });

  it("10 a shell resume starts with a metadata-only snapshot (threads: []), then the changed rows, then synchronized", async () => {
    const recording = readV2Recording("10-shell-resume.json");
    const { peer: watcher, shell: full } = await watchShell();
    await watcher.untilValue(full, (value) => label(value) === "synchronized");
    expect(watcher.values(full).slice(0, 2).map(label)).toEqual(recordedChunks(recording, SHELL, 0).flat().slice(0, 2).map(label));
    watcher.interrupt(full);
    const head = sim.engine.sequence;
    const atHead = watcher.request(SHELL, { afterSequence: head, requestCompletionMarker: true });
    await watcher.untilValue(atHead, (value) => label(value) === "synchronized");
    expect(watcher.values(atHead).map(label)).toEqual(recordedChunks(recording, SHELL, 1).flat().map(label));
    const [a, b] = [await flows.createThread(), await flows.createThread()];
    for (const threadId of [a, b]) sim.engine.dispatch({ type: "thread.metadata.update", commandId: flows.fresh("cmd"), threadId, title: "renamed" });
    const behind = watcher.request(SHELL, { afterSequence: head, requestCompletionMarker: true });
    await watcher.untilValue(behind, (value) => label(value) === "synchronized");
    const recordedBehind = recordedChunks(recording, SHELL, 2).flat();
    expect(watcher.values(behind).map(label)).toEqual(recordedBehind.map(label));
    const metadata = watcher.values(behind)[0] as { snapshot: { threads: unknown[]; archivedThreads: unknown[] } };
    expect(metadata.snapshot).toMatchObject({ threads: [], archivedThreads: [] });
    for (const index of [0, 1]) expect(shapeDifferences(watcher.values(behind)[index], recordedBehind[index])).toEqual([]);

    // More than 1,000 events behind (T3's SHELL_RESUME_MAX_GAP): a full snapshot instead.
    const old = sim.engine.sequence;
    for (let i = 0; i <= 1000; i++) sim.engine.dispatch({ type: "thread.metadata.update", commandId: flows.fresh("cmd"), threadId: a, title: `renamed ${i}` });
    const far = watcher.request(SHELL, { afterSequence: old, requestCompletionMarker: true });
    await watcher.untilValue(far, (value) => label(value) === "synchronized");
    expect(watcher.values(far).map(label).slice(0, 2)).toEqual(["snapshot", "synchronized"]);
    expect((watcher.values(far)[0] as { snapshot: { threads: { id: string }[] } }).snapshot.threads.map((row) => row.id)).toEqual(
      expect.arrayContaining([a, b]),
    );
  });

  it("a restart (same port, same data): the reconnecting client resumes the shell as in 10 and each thread as in 02's resume; no row is lost, and a run the restart cut ends as 04b's interrupted one", async () => {
    const { peer: before, shell } = await watchShell();
    await before.untilValue(shell, (value) => label(value) === "synchronized");
    const done = await threadShown(before, shell);
    const doneStream = await flows.followThread(done, undefined, before);
    await flows.dispatchMessage(done, "Hello there, please reply");
    await runsSettled(done, 1);
    const { threadId: cut } = await flows.heldRun([{ kind: "reply", text: "Hello from " }, { kind: "hold" }, { kind: "reply", text: "the simulator." }]);
    const cutStream = await flows.followThread(cut, undefined, before);
    for (const threadId of [done, cut]) await untilRowCaughtUp(before, shell, threadId);
    // Where a client resumes from: the newest item's sequence, or its snapshot's.
    const seen = (stream: string) =>
      Math.max(
        ...before.values(stream).map((value) => {
          const item = value as { sequence?: number; snapshotSequence?: number; snapshot?: { snapshotSequence?: number } };
          return item.sequence ?? item.snapshotSequence ?? item.snapshot?.snapshotSequence ?? 0;
        }),
      );
    const rowsBefore = new Set(sim.engine.shellSnapshot().threads as { id: string }[]).size;
    const [shellAt, doneAt, cutAt] = [seen(shell), seen(doneStream), seen(cutStream)];

    await sim.restart();
    const after = await reconnect();
    const resumed = after.request(SHELL, { afterSequence: shellAt, requestCompletionMarker: true });
    await after.untilValue(resumed, (value) => label(value) === "synchronized");
    const values = after.values(resumed);
    const recordedResume = recordedShell("10-shell-resume.json", 2);
    expect(collapseRepeats(values.map(label))).toEqual(collapseRepeats(recordedResume.map(label)));
    for (const index of [0, 1]) expect(shapeDifferences(values[index], recordedResume[index])).toEqual([]);
    // The cut run's row, now interrupted as 04b's; every row the shell had is still there.
    expect(shellStates(values, cut).at(-1)).toBe(
      shellStates(recordedShell("04b-interrupt-running.json"), recordedThreadIds(readV2Recording("04b-interrupt-running.json"))[0]!).at(-1),
    );
    const fresh = after.request(SHELL, { requestCompletionMarker: true });
    await after.untilValue(fresh, (value) => label(value) === "synchronized");
    const rows = (after.values(fresh)[0] as { snapshot: { threads: { id: string }[] } }).snapshot.threads.map((row) => row.id);
    expect(rows).toHaveLength(rowsBefore);
    expect(rows).toEqual(expect.arrayContaining([done, cut]));

    // Threads resume by sequence, with no snapshot (02's second subscription): the finished one has
    // nothing new, the cut one the end of an interrupted run as 04b recorded it.
    const recorded02 = recordedChunks(readV2Recording("02-turn-plain.json"), "orchestration.subscribeThread", 1).flat();
    const doneAgain = await flows.followThread(done, doneAt, after);
    expect(after.values(doneAgain).map(label)).toEqual([recorded02.at(-1)].map(label));
    const cutAgain = await flows.followThread(cut, cutAt, after);
    const replay = after.values(cutAgain);
    expect(replay.at(-1)).toEqual({ kind: "synchronized" });
    const recorded04b = recordedChunks(readV2Recording("04b-interrupt-running.json"), "orchestration.subscribeThread").flat();
    const afterRequest = (list: unknown[]) => list.slice(list.findIndex((value) => label(value).includes("run_interrupt_request")) + 1);
    expect(liveLabels([{ kind: "synchronized" }, ...replay])).toEqual(liveLabels([{ kind: "synchronized" }, ...afterRequest(recorded04b)]));
    expect(envelopes(replay)).toEqual(envelopes(afterRequest(recorded04b)));
    expect(payloadWords(replay)).toEqual(payloadWords(afterRequest(recorded04b)));
  });
});

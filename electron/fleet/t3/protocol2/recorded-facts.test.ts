// What T3's real V2 engine sent (../shared/fixtures/t3-v2dev) decodes, and becomes honest facts:
// capabilities that follow the run's phase, a steer that is only "accepted", a reply T3 withholds
// until the turn ends, and the 006bb815 contract's newer request shapes accepted beside the engine's.
import { describe, expect, it } from "vitest";
import { decodeWith } from "../../../../shared/t3/decode";
import { applyThreadEvent, runTakesSteer, shellFromSnapshot } from "../../../../shared/t3/protocol2/projection";
import {
  DispatchResultV2,
  RuntimeRequest,
  ServerConfigV2,
  ShellSnapshotV2,
  ShellStreamItemV2Schema,
  ThreadBoundedSnapshotV2,
  type ThreadProjection,
  ThreadStreamItemV2Schema,
  TurnItemSchema,
} from "../../../../shared/t3/protocol2/schemas";
import { deliveryOutcomeWords, deliveryStateWords } from "../../../../shared/fleet/words";
import { REPLY_WITHHELD_NOTE, agentFactsOfRow, messageOutcomesOf, requestEndsOf, transcriptOf } from "../../../../shared/t3/protocol2/facts";
import { readV2Recording, recordedExchanges, v2RecordingFiles } from "./replay.testkit";
import { turnChangesOfProjection, usageOfProjection } from "../../../../shared/t3/protocol2/changes";

function decoded<T>(schema: Parameters<typeof decodeWith>[0], value: unknown, what: string): T {
  const result = decodeWith(schema, value, what);
  if (!result.ok) throw new Error(`${what}: ${result.error.path} ${result.error.message}`);
  return result.value as T;
}

/** A thread's projection after each chunk of its recorded stream, decoded and applied by the fleet's own code. */
function projectionsOf(name: string): ThreadProjection[] {
  const stream = recordedExchanges(name).find((exchange) => exchange.tag === "orchestration.subscribeThread")!;
  const states: ThreadProjection[] = [];
  let projection: ThreadProjection | undefined;
  for (const frame of stream.answers) {
    for (const raw of frame.values ?? []) {
      const item = decoded<{ kind: string; projection?: ThreadProjection; event?: Parameters<typeof applyThreadEvent>[1] }>(
        ThreadStreamItemV2Schema,
        raw,
        `${name} thread item`,
      );
      if (item.kind === "snapshot") projection = item.projection;
      else if (item.kind === "event" && projection) projection = applyThreadEvent(projection, item.event!);
      if (projection) states.push(projection);
    }
  }
  return states;
}

describe("every recording of the real engine decodes", () => {
  it.each(v2RecordingFiles())("%s", (name) => {
    let values = 0;
    for (const exchange of recordedExchanges(name)) {
      for (const frame of exchange.answers) {
        if (frame._tag === "Chunk") {
          const schema = exchange.tag === "orchestration.subscribeShell" ? ShellStreamItemV2Schema : ThreadStreamItemV2Schema;
          for (const value of frame.values ?? []) {
            const item = decoded<{ kind: string }>(schema, value, `${name} ${exchange.tag}`);
            expect(item.kind).not.toBe("unknown");
            values++;
          }
        } else if (frame._tag === "Exit" && (frame.exit as { _tag: string; value?: unknown })._tag === "Success") {
          const value = (frame.exit as { value?: unknown }).value;
          if (exchange.tag === "orchestration.dispatchCommand") decoded(DispatchResultV2, value, `${name} dispatch result`);
          if (exchange.tag === "server.getConfig")
            expect(decoded<ServerConfigV2>(ServerConfigV2, value, "config").settings?.enableLegacyTokenStreaming).toBe(false);
        }
      }
    }
    for (const entry of readV2Recording(name).frames) {
      if (entry.dir !== "http" || entry.status !== 200) continue;
      if (/\/api\/orchestration\/shell$/.test(entry.url ?? "")) expect(decoded<ShellSnapshotV2>(ShellSnapshotV2, entry.body, "shell").schemaVersion).toBe(3);
      if (/\/api\/orchestration\/threads\/[^/]+(\/bounded)?$/.test(entry.url ?? "")) decoded(ThreadBoundedSnapshotV2, entry.body, "thread snapshot");
    }
    if (name !== "00-handshake.json" && name !== "01-create-project-thread.json") expect(values).toBeGreaterThan(0);
  });

  it("an approval item without options and a resolved request without decision (03), and the contract's newer shapes", () => {
    const states = projectionsOf("03-approval.json");
    const last = states.at(-1)!;
    const item = last.turnItems.find((entry) => entry.type === "approval_request");
    expect(item?.type === "approval_request" && item.options).toBeUndefined();
    const request = last.runtimeRequests.at(-1)!;
    expect(request.status).toBe("resolved");
    expect(request.decision).toBeUndefined();
    // The contract at 006bb815 adds `decision` and `answers` to a resolved request: both decode too.
    expect(RuntimeRequest.parse({ ...request, decision: "accept" }).decision).toBe("accept");
    expect(RuntimeRequest.parse({ ...request, kind: "user_input", answers: { q1: "yes" } }).answers).toEqual({ q1: "yes" });
    expect(TurnItemSchema.parse({ ...item, options: [{ decision: "accept", label: "Allow" }] })).toMatchObject({ options: [{ decision: "accept" }] });
    // Composite ids of ~230 characters are ids like any other.
    expect(request.id.length).toBeGreaterThan(100);
  });

  it("a request's end as the engine recorded it (03): resolved, with no decision named; expired or cancelled is no answer taken (issue 39)", () => {
    const last = projectionsOf("03-approval.json").at(-1)!;
    const request = last.runtimeRequests.at(-1)!;
    expect(requestEndsOf(last)).toEqual({ [request.id]: { how: "resolved", decision: null } });
    expect(requestEndsOf({ ...last, runtimeRequests: [{ ...request, decision: "decline" }] })).toEqual({
      [request.id]: { how: "resolved", decision: "decline" },
    });
    for (const status of ["expired", "cancelled"] as const) {
      expect(requestEndsOf({ ...last, runtimeRequests: [{ ...request, status }] })[request.id]).toEqual({
        how: "failed",
        reason: `T3 recorded the request as ${status} before an answer reached the agent.`,
      });
    }
    expect(requestEndsOf({ ...last, runtimeRequests: [{ ...request, status: "pending" }] })).toEqual({});
  });
});

describe("facts from the real engine's recordings", () => {
  it("offers steer and interrupt while a run is running, only queue while it is finishing (09)", () => {
    const values = recordedExchanges("09-shell-stream.json")[0]!.answers.flatMap((frame) => frame.values ?? []);
    const items = values.map((value) =>
      decoded<{ kind: string; snapshot?: ShellSnapshotV2; thread?: ShellSnapshotV2["threads"][number] }>(ShellStreamItemV2Schema, value, "shell item"),
    );
    const shell = shellFromSnapshot(items[0]!.snapshot!);
    const rows = items.flatMap((item) => (item.kind === "thread.updated" ? [item.thread!] : []));
    const features = { settle: true, snooze: true };
    const finishing = rows.filter((row) => row.runStatus === "waiting");
    const running = rows.filter((row) => row.runStatus === "running");
    expect(finishing.length).toBeGreaterThan(0);
    expect(running.length).toBeGreaterThan(0);
    for (const row of finishing) {
      const facts = agentFactsOfRow(row, shell, features);
      expect(facts.run.phase).toBe("waiting");
      expect(facts.capabilities).toMatchObject({ whileRunning: ["queue"], interrupt: false });
    }
    for (const row of running) expect(agentFactsOfRow(row, shell, features).capabilities).toMatchObject({ whileRunning: ["steer", "queue"], interrupt: true });
  });

  it("a run takes a steer only once its provider turn runs, never while finishing (06b)", () => {
    const takes = projectionsOf("06b-steer-running.json").flatMap((projection) => {
      const run = projection.runs[0];
      return run ? [`${run.status}:${runTakesSteer(projection, run)}`] : [];
    });
    const distinct = takes.filter((entry, index) => entry !== takes[index - 1]);
    // Running a moment before its provider turn starts and a moment after it ended: no steer then; then finishing and done.
    expect(distinct).toEqual(["starting:false", "running:false", "running:true", "running:false", "waiting:false", "completed:false"]);
  });

  it("a steer is 'accepted as a steer', never 'joined' or 'answered' (06b: the provider dropped it, nothing shows)", () => {
    const last = projectionsOf("06b-steer-running.json").at(-1)!;
    const steer = last.turnItems.find((item) => item.type === "user_message" && item.inputIntent === "steer");
    expect(steer?.type).toBe("user_message");
    const outcome = messageOutcomesOf(last)[steer!.type === "user_message" ? steer.messageId : ""];
    expect(outcome?.how).toBe("joined");
    const delivered = { state: "delivered" as const, observed: { outcome: "steered" as const, turnId: outcome!.runId } };
    expect(deliveryOutcomeWords(delivered)).toBe("T3 accepted it as a steer of the running turn");
    const ended = { ...delivered, state: "answered" as const };
    expect(
      deliveryStateWords(ended, {
        sending: "s",
        accepted: "a",
        delivered: "delivered",
        answered: "answered",
        refused: "r",
        uncertain: "u",
        held: "h",
        discarded: "d",
      }),
    ).toBe("delivered");
    expect(deliveryOutcomeWords(ended)).toContain("does not show whether the agent used it");
  });

  it("says T3 withholds the reply until the turn ends while the run has none, only where the server buffers (02)", () => {
    const states = projectionsOf("02-turn-plain.json");
    const running = states.find((projection) => projection.runs.some((run) => run.status === "running"))!;
    const items = transcriptOf(running, false);
    const note = items.findIndex((item) => item.type === "activity" && item.summary === REPLY_WITHHELD_NOTE);
    expect(note).toBe(1);
    expect(items[0]).toMatchObject({ type: "message", role: "user" });
    expect(transcriptOf(running, true).some((item) => item.type === "activity" && item.kind === "reply-withheld")).toBe(false);
    expect(transcriptOf(running, undefined).some((item) => item.type === "activity" && item.kind === "reply-withheld")).toBe(false);
    const done = states.at(-1)!;
    expect(transcriptOf(done, false).some((item) => item.type === "activity" && item.kind === "reply-withheld")).toBe(false);
    expect(transcriptOf(done, false).some((item) => item.type === "message" && item.role === "assistant")).toBe(true);
  });
});

describe("changes and usage as the real engine reported them", () => {
  it("a turn in a folder that is not a git repository: its checkpoint is missing with no files; no token figures (not reported)", () => {
    const final = projectionsOf("02-turn-plain.json").at(-1)!;
    expect(turnChangesOfProjection(final)).toEqual([expect.objectContaining({ turnCount: 1, status: "missing", files: [] })]);
    expect(usageOfProjection(final)).toBeNull();
  });
});

describe("a queued run on the real engine, played back (07)", () => {
  it("keeps the first run's checkpoint as that run's turn when the engine re-captures it run-less for the queued run", () => {
    const states = projectionsOf("07-queue.json");
    const last = states.at(-1)!;
    expect(last.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(turnChangesOfProjection(last).map((turn) => turn.turnCount)).toEqual([1, 2]);
  });
});

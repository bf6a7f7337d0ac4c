// A turn of 100,000 files decodes to TURN_FILES_KEPT files with the whole list's counts, on both
// protocols, from a snapshot and from a live event (issue 43 point 2).
import { describe, expect, it } from "vitest";
import { turnTotals, unlistedFilesOf } from "../fleet/changes-usage";
import { decodeWith } from "./decode";
import { turnChangesOf } from "./protocol1/changes";
import { Checkpoint, OrchestrationEventSchema } from "./protocol1/schemas";
import { turnChangesOfProjection } from "./protocol2/changes";
import { CheckpointV2, DomainEventSchema } from "./protocol2/schemas";
import { TURN_FILES_KEPT } from "./turn-files";

const FILES = 100_000;
/** File i adds i % 7 lines and removes 1: 100,000 files add 299,997 lines and remove 100,000. */
const vendoredFiles = (count = FILES) =>
  Array.from({ length: count }, (_, index) => ({ path: `vendor/pkg-${index}/index.js`, kind: "added", additions: index % 7, deletions: 1 }));
const ADDED = vendoredFiles().reduce((sum, file) => sum + file.additions, 0);
const TOTALS = { files: FILES, additions: ADDED, deletions: FILES };

const v1Checkpoint = (files: unknown[], extra: object = {}) => ({
  turnId: "turn-1",
  checkpointTurnCount: 1,
  checkpointRef: "refs/t3/checkpoints/t/turn/1",
  status: "ready",
  files,
  assistantMessageId: null,
  completedAt: "2026-12-05T02:00:00.000Z",
  ...extra,
});

const v2Checkpoint = (files: unknown[], extra: object = {}) => ({
  id: "checkpoint-1",
  runId: "run-1",
  appRunOrdinal: 1,
  status: "ready",
  files,
  capturedAt: "2026-12-05T02:00:00.000Z",
  ...extra,
});

describe("protocol 1: a checkpoint's files are capped at decode, its counts kept", () => {
  it("a thread's checkpoint of 100,000 files keeps the first files and the true counts", () => {
    const decoded = decodeWith(Checkpoint, v1Checkpoint(vendoredFiles()), "checkpoint");
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(decoded.value.files).toHaveLength(TURN_FILES_KEPT);
    expect(decoded.value.files[0]).toEqual({ path: "vendor/pkg-0/index.js", kind: "added", additions: 0, deletions: 1 });
    const [turn] = turnChangesOf([decoded.value]);
    expect(turn!.files).toHaveLength(TURN_FILES_KEPT);
    expect(turnTotals(turn!)).toEqual(TOTALS);
    expect(unlistedFilesOf([turn!])).toBe(FILES - TURN_FILES_KEPT);
  });

  it("a live thread.turn-diff-completed of 100,000 files is capped the same way", () => {
    const decoded = decodeWith(
      OrchestrationEventSchema,
      {
        sequence: 7,
        eventId: "e-7",
        aggregateKind: "thread",
        aggregateId: "t",
        type: "thread.turn-diff-completed",
        occurredAt: "2026-12-05T02:00:00.000Z",
        commandId: null,
        payload: { threadId: "t", ...v1Checkpoint(vendoredFiles()) },
      },
      "event",
    );
    if (!decoded.ok) throw new Error(decoded.error.message);
    const payload = decoded.value.payload as Checkpoint;
    expect(payload.files).toHaveLength(TURN_FILES_KEPT);
    expect(payload.fileTotals).toEqual(TOTALS);
  });

  it("a list within the cap is the whole list with no totals, and totals a server sends itself are ignored", () => {
    const decoded = decodeWith(Checkpoint, v1Checkpoint(vendoredFiles(3), { fileTotals: { files: 9e15, additions: 1, deletions: 1 } }), "checkpoint");
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(decoded.value.files).toHaveLength(3);
    expect(decoded.value.fileTotals).toBeUndefined();
    expect(turnTotals(turnChangesOf([decoded.value])[0]!)).toEqual({ files: 3, additions: 3, deletions: 3 });
  });

  it("a count past the cap that is no count leaves that side not reported, the file still counted", () => {
    const files: unknown[] = vendoredFiles(500);
    files[400] = { path: "vendor/x.js", kind: "added", additions: -5, deletions: 1 };
    const decoded = decodeWith(Checkpoint, v1Checkpoint(files), "checkpoint");
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(decoded.value.fileTotals).toEqual({ files: 500, additions: null, deletions: 500 });
  });
});

describe("protocol 2: a checkpoint's files are capped at decode, its counts kept", () => {
  it("a projection's checkpoint of 100,000 files keeps the first files and the true counts", () => {
    const decoded = decodeWith(CheckpointV2, v2Checkpoint(vendoredFiles()), "checkpoint");
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(decoded.value.files).toHaveLength(TURN_FILES_KEPT);
    const [turn] = turnChangesOfProjection({ checkpoints: [decoded.value] });
    expect(turn!.files).toHaveLength(TURN_FILES_KEPT);
    expect(turnTotals(turn!)).toEqual(TOTALS);
    expect(unlistedFilesOf([turn!])).toBe(FILES - TURN_FILES_KEPT);
  });

  it("a live checkpoint.captured of 100,000 files is capped the same way", () => {
    const decoded = decodeWith(
      DomainEventSchema,
      { id: "e-1", type: "checkpoint.captured", threadId: "t", occurredAt: "2026-12-05T02:00:00.000Z", payload: v2Checkpoint(vendoredFiles()) },
      "event",
    );
    if (!decoded.ok || decoded.value.type !== "checkpoint.captured") throw new Error("not a checkpoint");
    expect(decoded.value.payload.files).toHaveLength(TURN_FILES_KEPT);
    expect(decoded.value.payload.fileTotals).toEqual(TOTALS);
  });

  it("a list within the cap is the whole list with no totals, and totals a server sends itself are ignored", () => {
    const decoded = decodeWith(CheckpointV2, v2Checkpoint(vendoredFiles(2), { fileTotals: { files: 1, additions: 0, deletions: 0 } }), "checkpoint");
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(decoded.value.files).toHaveLength(2);
    expect(turnChangesOfProjection({ checkpoints: [decoded.value] })[0]!.totals).toBeUndefined();
  });
});

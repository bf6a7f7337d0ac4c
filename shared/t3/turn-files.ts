// A turn's changed files as both protocols' checkpoints carry them, cut at decode: a turn that
// changes 100,000 files (a vendored tree, a checked-in node_modules) keeps TURN_FILES_KEPT of them
// and the whole list's counts (files, lines added and removed), so the fleet holds and shows "and
// 99,900 more files" instead of every one (issue 43 point 2). The rest are never decoded.
import { z } from "zod";
import { countOrNull, sumCounts } from "../fleet/counts";
import type { TurnFileTotals } from "../fleet/facts";
import { ReportedCount } from "./schemas";
import { ServerText } from "./text";

/** Files kept per turn; the rest are counted only. */
export const TURN_FILES_KEPT = 100;

export const ChangedFileWire = z.object({ path: ServerText.path, kind: ServerText.label, additions: ReportedCount, deletions: ReportedCount });

/** Set by capCheckpointFiles alone (a server's own `fileTotals` is dropped before decoding). */
export const FileTotalsField = z
  .object({ files: z.number().int().nonnegative(), additions: z.number().int().nonnegative().nullable(), deletions: z.number().int().nonnegative().nullable() })
  .optional();

/** As ReportedCount reads a count (a safe non-negative integer, else not reported), without a schema per file: a list may hold millions. */
function countOf(file: unknown, field: "additions" | "deletions"): number | null {
  if (typeof file !== "object" || file === null) return null;
  return countOrNull((file as Record<string, unknown>)[field]);
}

/** The whole list's counts: a side any file did not report, or a sum past the exact range, is not reported. */
export function fileTotalsOf(files: readonly unknown[]): TurnFileTotals {
  return {
    files: files.length,
    additions: sumCounts(files.map((file) => countOf(file, "additions"))),
    deletions: sumCounts(files.map((file) => countOf(file, "deletions"))),
  };
}

/**
 * A raw checkpoint with its `files` cut to TURN_FILES_KEPT before it is decoded, and the whole list's
 * counts in `fileTotals` when it was cut (none when it was not: `files` is then the whole list).
 */
export function capCheckpointFiles(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const { fileTotals: _fromServer, ...checkpoint } = raw as Record<string, unknown>;
  const files = checkpoint.files;
  if (!Array.isArray(files) || files.length <= TURN_FILES_KEPT) return checkpoint;
  return { ...checkpoint, files: files.slice(0, TURN_FILES_KEPT), fileTotals: fileTotalsOf(files) };
}

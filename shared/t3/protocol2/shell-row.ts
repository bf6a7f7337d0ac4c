// A protocol-2 shell row: its wire schema, and what the fleet keeps of it: only the fields the
// derivation of an agent's facts (shared/t3/protocol2/facts.ts) and later deltas read, in one fixed
// shape, with the strings that thousands of rows repeat shared. A decoded row carries ~30 fields and
// its own copy of every string; 10 environments × 5,000 rows of those were the protocol-2 adapter's memory.
import { z } from "zod";
import { StringPool, TIMESTAMP_POOL_LIMIT } from "../../fleet/string-pool";
import { ModelSelection, openEnum } from "../schemas";
import { ServerText } from "../text";
import { INTERACTION_MODES, PARENT_RELATIONSHIPS, RUNTIME_MODES, RUNTIME_REQUEST_KINDS, SHELL_THREAD_STATUSES } from "./enums";

const Id = z.string().min(1);
const IsoTime = z.string();
const NullableId = Id.nullable();

export const PendingRuntimeRequestSummary = z.object({ id: Id, kind: openEnum(RUNTIME_REQUEST_KINDS), createdAt: IsoTime });

/**
 * A shell row, as far as the fleet reads it: unknown fields are dropped, and so are the ones the
 * fleet never reads (branch, worktree, creation, pin, settlement and item-count fields,
 * the latest visible message's text), so 5,000 rows per environment do not carry them through the
 * decoder. Reading one of them later means adding it here and to `ShellRow` below.
 */
export const ThreadShellV2 = z.object({
  id: Id,
  projectId: Id,
  title: ServerText.title,
  providerInstanceId: z.string(),
  modelSelection: ModelSelection,
  runtimeMode: openEnum(RUNTIME_MODES),
  interactionMode: openEnum(INTERACTION_MODES),
  lineage: z.object({ parentThreadId: NullableId, relationshipToParent: openEnum(PARENT_RELATIONSHIPS).nullable() }),
  updatedAt: IsoTime,
  deletedAt: IsoTime.nullable().optional(),
  snoozedUntil: IsoTime.nullable().optional(),
  latestRunId: NullableId,
  latestRunRequestedAt: IsoTime.nullable().optional(),
  latestRunStartedAt: IsoTime.nullable().optional(),
  latestRunCompletedAt: IsoTime.nullable().optional(),
  activeRunId: NullableId,
  activityRunStatus: openEnum(["preparing", "starting", "running", "waiting"]).nullable().optional(),
  status: openEnum(SHELL_THREAD_STATUSES),
  lastError: ServerText.reason.nullable().optional(),
  pendingRuntimeRequest: PendingRuntimeRequestSummary.nullable(),
  latestUserMessageAt: IsoTime.nullable(),
  pendingBackgroundTasks: z.array(z.object({ description: ServerText.reason.optional() })).default([]),
});
export type ThreadShellV2 = z.infer<typeof ThreadShellV2>;

/** A shell row as the adapter keeps it: an active thread of the shell (projection.ts ShellState). */
export interface ShellRow {
  readonly id: string;
  readonly projectId: string;
  readonly title: string;
  /** The row's provider instance, else its model selection's. */
  readonly providerInstanceId: string;
  readonly model: string;
  /** The model selection's effort (or reasoning effort) option. */
  readonly effort: string | null;
  readonly runtimeMode: ThreadShellV2["runtimeMode"];
  readonly interactionMode: ThreadShellV2["interactionMode"];
  readonly parentThreadId: string | null;
  readonly relationshipToParent: ThreadShellV2["lineage"]["relationshipToParent"];
  readonly deleted: boolean;
  readonly latestRunId: string | null;
  readonly activeRunId: string | null;
  /** The run's status: T3's activity status while a run is active (it is the finer one), else the row's status. */
  readonly runStatus: ThreadShellV2["status"];
  /**
   * The time that goes with `runStatus`: when the run started (running), started or else was
   * requested or else the row changed (preparing, starting), completed (completed); else null.
   */
  readonly runAt: string | null;
  /** What explains `runStatus`: the row's `lastError` (failed), its first pending background task (waiting); else null. */
  readonly runNote: string | null;
  readonly pendingRuntimeRequest: ThreadShellV2["pendingRuntimeRequest"];
  readonly latestUserMessageAt: string | null;
  readonly updatedAt: string;
  /** When T3's own snooze ends (threadSnooze); null when the thread is not snoozed on the server. */
  readonly snoozedUntil: string | null;
}

/**
 * Shared by every environment: names (projects, providers, models, efforts) repeat across rows and
 * machines; timestamps repeat within a snapshot (rows created or restored together). Two pools, so
 * unique timestamps filling theirs never evict the names. Bounded (./string-pool.ts).
 */
const names = new StringPool();
const times = new StringPool(TIMESTAMP_POOL_LIMIT);

function effortOf(options: ThreadShellV2["modelSelection"]["options"]): string | null {
  const effort = options.find((option) => option.id === "effort" || option.id === "reasoningEffort");
  return effort ? String(effort.value) : null;
}

function runAtOf(row: ThreadShellV2, status: ShellRow["runStatus"]): string | null {
  switch (status) {
    case "preparing":
    case "starting":
      return row.latestRunStartedAt ?? row.latestRunRequestedAt ?? row.updatedAt;
    case "running":
      return row.latestRunStartedAt ?? null;
    case "completed":
      return row.latestRunCompletedAt ?? null;
    default:
      return null;
  }
}

function runNoteOf(row: ThreadShellV2, status: ShellRow["runStatus"]): string | null {
  if (status === "failed") return row.lastError ?? null;
  if (status === "waiting") return row.pendingBackgroundTasks[0]?.description ?? null;
  return null;
}

/** The compact row of a decoded one; every row gets the same hidden class (all fields, in one order). */
export function compactShellRow(row: ThreadShellV2): ShellRow {
  const runStatus = row.activityRunStatus && row.activityRunStatus !== "unknown" ? row.activityRunStatus : row.status;
  return {
    id: row.id,
    projectId: names.intern(row.projectId),
    title: row.title,
    providerInstanceId: names.intern(row.providerInstanceId || row.modelSelection.instanceId),
    model: names.intern(row.modelSelection.model),
    effort: names.intern(effortOf(row.modelSelection.options)),
    runtimeMode: row.runtimeMode,
    interactionMode: row.interactionMode,
    parentThreadId: row.lineage.parentThreadId,
    relationshipToParent: row.lineage.relationshipToParent,
    deleted: Boolean(row.deletedAt),
    latestRunId: row.latestRunId,
    activeRunId: row.activeRunId,
    runStatus,
    runAt: times.intern(runAtOf(row, runStatus)),
    runNote: runNoteOf(row, runStatus),
    pendingRuntimeRequest: row.pendingRuntimeRequest,
    latestUserMessageAt: times.intern(row.latestUserMessageAt),
    updatedAt: times.intern(row.updatedAt),
    snoozedUntil: times.intern(row.snoozedUntil ?? null),
  };
}

/** A shell row decoded straight into what the adapter keeps of it: the full row never outlives its decoding. */
export const ShellRowV2 = ThreadShellV2.transform(compactShellRow);

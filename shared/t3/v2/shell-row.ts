// What the fleet keeps of a protocol-2 shell row: only the fields the derivation of an agent's facts
// (electron/fleet/t3/protocol2/facts.ts) and later deltas read, in one fixed shape, with the
// strings that thousands of rows repeat shared. A decoded row carries ~30 fields and its own copy
// of every string; 10 environments × 5,000 rows of those were the protocol-2 adapter's memory.
import { StringPool } from "../../fleet/string-pool";
import type { ThreadShellV2 } from "./schemas";

/** A shell row as the adapter keeps it. `location` is the list the row is in (set by the shell state). */
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
  readonly snoozedUntil: string | null;
  readonly settledOverride: NonNullable<ThreadShellV2["settledOverride"]> | null;
  readonly latestRunId: string | null;
  readonly latestRunRequestedAt: string | null;
  readonly latestRunStartedAt: string | null;
  readonly latestRunCompletedAt: string | null;
  readonly activeRunId: string | null;
  readonly activityRunStatus: NonNullable<ThreadShellV2["activityRunStatus"]> | null;
  readonly status: ThreadShellV2["status"];
  readonly lastError: string | null;
  readonly pendingRuntimeRequest: ThreadShellV2["pendingRuntimeRequest"];
  readonly latestUserMessageAt: string | null;
  /** What the row's first pending background task says (shown while the run finishes). */
  readonly backgroundNote: string | null;
  readonly updatedAt: string;
  location: "active" | "archive";
}

/**
 * Shared by every environment: names (projects, providers, models, efforts) repeat across rows and
 * machines; timestamps repeat within a snapshot (rows created or restored together). Two pools, so
 * unique timestamps filling theirs never evict the names. Bounded (./string-pool.ts).
 */
const names = new StringPool();
const times = new StringPool();

function effortOf(options: ThreadShellV2["modelSelection"]["options"]): string | null {
  const effort = options.find((option) => option.id === "effort" || option.id === "reasoningEffort");
  return effort ? String(effort.value) : null;
}

/** The compact row of a decoded one; every row gets the same hidden class (all fields, in one order). */
export function compactShellRow(row: ThreadShellV2): ShellRow {
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
    snoozedUntil: row.snoozedUntil ?? null,
    settledOverride: row.settledOverride ?? null,
    latestRunId: row.latestRunId,
    latestRunRequestedAt: times.intern(row.latestRunRequestedAt ?? null),
    latestRunStartedAt: times.intern(row.latestRunStartedAt ?? null),
    latestRunCompletedAt: times.intern(row.latestRunCompletedAt ?? null),
    activeRunId: row.activeRunId,
    activityRunStatus: row.activityRunStatus ?? null,
    status: row.status,
    lastError: row.lastError ?? null,
    pendingRuntimeRequest: row.pendingRuntimeRequest,
    latestUserMessageAt: times.intern(row.latestUserMessageAt),
    backgroundNote: row.pendingBackgroundTasks[0]?.description ?? null,
    updatedAt: times.intern(row.updatedAt),
    location: "active",
  };
}

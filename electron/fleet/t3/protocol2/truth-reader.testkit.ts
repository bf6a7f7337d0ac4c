// What a protocol-2 server stored, for the truth oracle (electron/fleet/truth-oracle.testkit.ts),
// read over its own socket as T3's UI reads it (sim/protocol2/operator.testkit.ts): the shell's rows
// and each thread's projection, judged by the engine's own rules (docs/t3-protocols.md, "Protocol 2").
// Works on the simulator in this process or in its own, and on any protocol-2 server.
import type { SubagentStatus } from "../../../../shared/fleet/facts";
import { SUBAGENT_STATUS } from "../../../../shared/t3/protocol2/facts";
import type { T3V2Operator, V2Projection, V2ShellRow } from "../../../../sim/protocol2/operator.testkit";
import type { ServerTruth, StoredRequest, StoredState, StoredThreadTruth } from "../../truth-oracle.testkit";
import { CHILD_THREAD_ID } from "../protocol1/truth-reader.testkit";

interface Row extends V2ShellRow {
  activityRunStatus?: string | null;
  latestRunId?: string | null;
  pendingRuntimeRequest?: { id: string; kind: string } | null;
}

/** The row's state by the engine's rules: a pending request first, then the active run, then the latest run's end. */
function stateOf(row: Row, archived: boolean): StoredState {
  if (archived) return "archived";
  const pending = row.pendingRuntimeRequest;
  if (pending) return pending.kind === "user_input" ? "pending-input" : pending.kind === "auth_refresh" ? "pending-auth" : "pending-approval";
  const active = row.activityRunStatus ?? null;
  if (active === "preparing" || active === "starting") return "starting";
  if (active === "running" || active === "waiting") return "running";
  switch (row.status) {
    case "queued":
    case "preparing":
    case "starting":
      return "starting";
    case "running":
    case "waiting":
      return "running";
    case "failed":
      return "failed";
    case "interrupted":
    case "cancelled":
    case "rolled_back":
      return "interrupted";
    default:
      return "idle";
  }
}

/** The failed run's reason: its `error` item's words (the row's lastError is the provider session's, often empty). */
function failureOf(row: Row, projection: V2Projection): string | null {
  const item = projection.turnItems.findLast((candidate) => candidate.type === "error" && candidate.status === "failed" && candidate.runId === row.latestRunId);
  const failure = item?.["failure"] as { message?: string } | undefined;
  return failure?.message ?? row.lastError ?? null;
}

function requestsOf(projection: V2Projection): StoredRequest[] {
  return projection.runtimeRequests.map((request) => ({
    requestId: request.id,
    end: request.status === "resolved" ? "resolved" : request.status === "pending" ? "pending" : "refused",
    decision: typeof request["decision"] === "string" ? request["decision"] : null,
    // The fleet words an expired or cancelled request itself: the engine gives no words of its own.
    words: null,
  }));
}

function subagentsOf(projection: V2Projection): StoredThreadTruth["subagents"] {
  const out = new Map<string, SubagentStatus>();
  for (const item of projection.turnItems)
    if (item.type === "subagent" && typeof item["subagentId"] === "string") out.set(item["subagentId"], SUBAGENT_STATUS[item.status] ?? "running");
  for (const subagent of projection.subagents) out.set(subagent.id, SUBAGENT_STATUS[subagent.status] ?? "running");
  return [...out].map(([id, status]) => ({ id, status }));
}

/**
 * Every thread the server's shell lists (active and archived), and each of `alsoRead` it does not
 * (rows the fleet still shows): a thread the server no longer has is deleted.
 */
export async function readProtocol2Truth(operator: T3V2Operator, environmentId: string, alsoRead: Iterable<string> = []): Promise<ServerTruth> {
  const shell = await operator.shell();
  const rows = [
    ...shell.threads.map((row) => ({ row: row as Row, archived: false })),
    ...(shell.archivedThreads ?? []).map((row) => ({ row: row as Row, archived: true })),
  ];
  const threads: StoredThreadTruth[] = [];
  for (const { row, archived } of rows) {
    const projection = await operator.projection(row.id);
    const state = stateOf(row, archived);
    threads.push({
      threadId: row.id,
      // A thread without lineage (imported by an in-place upgrade) is a child by the `sub.<parent>.<suffix>` convention, as on protocol 1.
      parentThreadId: row.lineage.parentThreadId ?? CHILD_THREAD_ID.exec(row.id)?.[1] ?? null,
      state,
      error: state === "failed" ? failureOf(row, projection) : null,
      subagents: subagentsOf(projection),
      userMessages: projection.messages.filter((message) => message.role === "user").map((message) => message.text),
      requests: requestsOf(projection),
      imported: row["historyOrigin"] === "v1_import",
    });
  }
  const listed = new Set(threads.map((thread) => thread.threadId));
  for (const threadId of alsoRead) {
    if (listed.has(threadId)) continue;
    const projection = await operator.projection(threadId).catch(() => null);
    // A child a delegated task made stays out of the shell as it did on the engine; the fleet shows none.
    if (projection && (projection.thread as { deletedAt?: string | null }).deletedAt == null) continue;
    threads.push({ threadId, parentThreadId: null, state: "deleted", error: null, subagents: [], userMessages: [], requests: [] });
  }
  return { environmentId, threads };
}

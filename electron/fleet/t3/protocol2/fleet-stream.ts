// Protocol 2's fleet stream: the V2 shell stream (docs/t3-protocols.md, "Protocol 2") kept in the
// adapter's shell state and sent on as neutral facts, resumed after the adapter's shell cursor. The
// shell row of a failed run does not say why it failed: a row that just failed waits for its reason
// (one bounded read, ./failure-reasons.ts) so its notification carries it, and after a complete
// snapshot the reasons of the most recently updated failed rows are read within the read budget.
import type { AgentFacts } from "../../../../shared/fleet/facts";
import type { SkippedItem } from "../../../../shared/fleet/types";
import type { T3Error } from "../../../../shared/t3/errors";
import { type ServerFeatures, agentFactsOfRow } from "../../../../shared/t3/protocol2/facts";
import {
  type ShellState,
  agentStateOfRow,
  applyShellDelta,
  applyShellMetadata,
  isMetadataOnlySnapshot,
  shellFromSnapshot,
} from "../../../../shared/t3/protocol2/projection";
import { type ShellStreamItemV2, ShellStreamItemV2Schema } from "../../../../shared/t3/protocol2/schemas";
import type { ShellRow } from "../../../../shared/t3/protocol2/shell-row";
import type { FleetStreamListener, Subscription } from "../adapter";
import type { T3Credentials } from "../client";
import type { Protocol2Connection } from "./connection";
import type { FailureReasons } from "./failure-reasons";

/** What the fleet stream reads and keeps in its adapter, which holds it across connections (./adapter.ts). */
export interface FleetState {
  /** The shell as last applied; its sequence is the cursor a new subscription resumes after. */
  shell: ShellState | undefined;
  readonly features: ServerFeatures;
  /** Open fleet streams, told when something learned from a thread stream changes a row's facts. */
  readonly rowListeners: Set<(threadId: string) => void>;
  /** The reader of failure reasons, reading with these (the latest connection's) credentials. */
  failureReasons(credentials: T3Credentials): FailureReasons;
  /** The thread left the shell: what was learned about it goes too. */
  forgetThread(threadId: string): void;
  agentFacts(): AgentFacts[];
}

export class Protocol2FleetStream implements Subscription {
  /** Synchronized was reported (once per subscription). */
  private synced = false;
  /** The adapter holds a complete shell: a stream the server ends is resumed by sequence. */
  private snapshotSeen: boolean;
  /** Ended or closed: a row learned later is not sent. */
  private ended = false;
  private readonly failures: FailureReasons;
  private stream: Subscription | undefined;

  constructor(
    private readonly adapter: FleetState,
    private readonly connection: Protocol2Connection,
    credentials: T3Credentials,
    private readonly listener: FleetStreamListener,
  ) {
    this.snapshotSeen = adapter.shell !== undefined;
    this.failures = adapter.failureReasons(credentials);
  }

  start(): void {
    this.adapter.rowListeners.add(this.upsertRow);
    this.stream = this.connection.stream<ShellStreamItemV2>({
      tag: "orchestration.subscribeShell",
      schema: ShellStreamItemV2Schema,
      what: "shell stream item",
      payload: () => ({ ...(this.adapter.shell && { afterSequence: this.adapter.shell.sequence }), requestCompletionMarker: true }),
      resumable: () => this.snapshotSeen,
      apply: (item) => this.apply(item),
      chunkDone: () => {},
      skipped: (item) => this.skip(item),
      end: (error) => this.end(error),
    });
  }

  close(): void {
    this.stream?.close();
  }

  /** Sends a row's facts; a row whose run just failed waits for the reason first (one read), so its notification carries it. */
  private readonly upsertRow = (threadId: string): void => {
    const shell = this.adapter.shell;
    const row = shell?.threads.get(threadId);
    if (!shell || !row || this.ended) return;
    if (this.unexplained(row)) {
      this.failures.request(threadId, row.latestRunId, true, () => this.upsertRow(threadId));
      return;
    }
    this.listener.upsert(agentFactsOfRow(row, shell, this.adapter.features));
  };

  private unexplained(row: ShellRow): boolean {
    return agentStateOfRow(row).kind === "failed" && this.failures.reason(row.id, row.latestRunId) === undefined;
  }

  /** After a complete snapshot: reasons for the most recently updated failed rows, within the read budget. */
  private explainSnapshot(shell: ShellState): void {
    const failed = [...shell.threads.values()].filter((row) => this.unexplained(row));
    failed.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
    for (const row of failed.slice(0, this.failures.limits.perSnapshot)) this.failures.request(row.id, row.latestRunId, false, () => this.upsertRow(row.id));
  }

  private markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    this.listener.synchronized();
  }

  private apply(item: ShellStreamItemV2): void {
    const { adapter, listener } = this;
    switch (item.kind) {
      case "snapshot": {
        const shell = adapter.shell;
        if (isMetadataOnlySnapshot(shell, item)) {
          // Enrichment (and the start of a resume): project metadata only; every row stays.
          if (!shell) return;
          const changed = new Set(applyShellMetadata(shell, item.snapshot));
          if (changed.size > 0) for (const [threadId, row] of shell.threads) if (changed.has(row.projectId)) this.upsertRow(threadId);
          return;
        }
        const before = adapter.shell;
        adapter.shell = shellFromSnapshot(item.snapshot);
        for (const threadId of before?.threads.keys() ?? []) if (!adapter.shell.threads.has(threadId)) adapter.forgetThread(threadId);
        this.snapshotSeen = true;
        listener.snapshot(adapter.agentFacts());
        this.explainSnapshot(adapter.shell);
        this.markSynced();
        return;
      }
      case "synchronized":
        this.markSynced();
        return;
      case "unknown":
        return;
      default: {
        const shell = adapter.shell;
        if (!shell || item.sequence <= shell.sequence) return;
        applyShellDelta(shell, item);
        if (item.kind === "thread.updated" && item.location === "archive") {
          adapter.forgetThread(item.thread.id);
          listener.remove(item.thread.id, "archived");
        } else if (item.kind === "thread.updated") this.upsertRow(item.thread.id);
        else if (item.kind === "thread.removed") {
          adapter.forgetThread(item.threadId);
          listener.remove(item.threadId, "archived-or-deleted");
        } else if (item.kind === "project.updated") {
          for (const [threadId, row] of shell.threads) if (row.projectId === item.project.id) this.upsertRow(threadId);
        }
      }
    }
  }

  /** An item that did not decode: the cursor moves past it when its sequence was readable. */
  private skip(item: SkippedItem): void {
    const shell = this.adapter.shell;
    if (shell && item.sequence !== null) shell.sequence = Math.max(shell.sequence, item.sequence);
    this.listener.skipped?.(item);
  }

  private end(error?: T3Error): void {
    this.ended = true;
    this.failures.clearQueue();
    this.adapter.rowListeners.delete(this.upsertRow);
    this.listener.end(error);
  }
}

// Why a protocol-2 turn failed. A shell row's `lastError` is its provider session's error, empty
// when only the turn failed; the reason is the failed run's `error` turn item, which only the
// thread's projection holds. This reads it for failed rows only, a few at a time, once per run, and
// also takes it for free from followed threads' streams.
import { runFailure } from "../../../../shared/t3/protocol2/projection";
import type { Run, ThreadProjection } from "../../../../shared/t3/protocol2/schemas";

interface Job {
  threadId: string;
  runId: string | null;
  done: (() => void)[];
}

export interface FailureReasonLimits {
  /** Reads in flight at once. */
  concurrency: number;
  /** Failed rows of one complete snapshot that get a read (the most recently updated first). */
  perSnapshot: number;
}

export const DEFAULT_FAILURE_REASON_LIMITS: FailureReasonLimits = { concurrency: 2, perSnapshot: 16 };

const key = (threadId: string, runId: string | null) => `${threadId}\n${runId ?? ""}`;

/**
 * Failed runs' reasons kept per thread, the newest: a row shows its latest run's, and a thread that
 * fails again and again all day kept every one (issue 43: the service's heap rose with its age).
 */
export const REASONS_KEPT_PER_THREAD = 8;

export class FailureReasons {
  /** By thread, then run: the reason, or null when the thread was read and shows none. */
  private readonly known = new Map<string, Map<string | null, string | null>>();
  private readonly jobs = new Map<string, Job>();
  /** Threads forgotten while a read for them was in flight: what it finds is dropped. */
  private readonly forgotten = new Map<string, number>();
  private readonly queue: Job[] = [];
  private inFlight = 0;

  constructor(
    private readonly readThread: (threadId: string) => Promise<ThreadProjection>,
    readonly limits: FailureReasonLimits = DEFAULT_FAILURE_REASON_LIMITS,
  ) {}

  /** The reason of a failed run: a string, null when none was found, undefined when not read (yet). */
  reason(threadId: string, runId: string | null): string | null | undefined {
    return this.known.get(threadId)?.get(runId);
  }

  /** Whether any reason of this thread's runs is kept. */
  holds(threadId: string): boolean {
    return this.known.has(threadId);
  }

  /** Takes the reasons of the newest failed runs a projection holds; returns whether anything new was learned. */
  learn(projection: ThreadProjection): boolean {
    let learned = false;
    // Only the newest: an older one learned here would push out a newer one, and be news again next time.
    for (const run of projection.runs.filter((entry) => entry.status === "failed").slice(-REASONS_KEPT_PER_THREAD)) {
      const reason = runFailure(projection, run)?.message ?? null;
      if (reason === null || this.reason(projection.thread.id, run.id) === reason) continue;
      this.remember(projection.thread.id, run.id, reason);
      learned = true;
    }
    return learned;
  }

  /**
   * Reads the reason of a failed run unless known or already being read; `done` runs once when it
   * is known or the read gave up. Urgent requests (a turn that just failed) go before the others.
   */
  request(threadId: string, runId: string | null, urgent: boolean, done: () => void): void {
    const runKey = key(threadId, runId);
    if (this.reason(threadId, runId) !== undefined) return done();
    const existing = this.jobs.get(runKey);
    if (existing) {
      existing.done.push(done);
      const waiting = this.queue.indexOf(existing);
      if (urgent && waiting > 0) {
        this.queue.splice(waiting, 1);
        this.queue.unshift(existing);
      }
      return;
    }
    const job: Job = { threadId, runId, done: [done] };
    this.jobs.set(runKey, job);
    if (urgent) this.queue.unshift(job);
    else this.queue.push(job);
    this.pump();
  }

  /** Drops what is waiting (a connection ended); reads in flight finish. */
  clearQueue(): void {
    for (const job of this.queue.splice(0)) this.jobs.delete(key(job.threadId, job.runId));
  }

  private pump(): void {
    while (this.inFlight < this.limits.concurrency && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.inFlight++;
      void this.run(job).finally(() => {
        this.inFlight--;
        this.jobs.delete(key(job.threadId, job.runId));
        for (const done of job.done) done();
        this.pump();
      });
    }
  }

  /** The thread is gone: its reasons go too (a read still in flight for it is dropped when it lands). */
  forget(threadId: string): void {
    this.known.delete(threadId);
    for (const job of [...this.jobs.values()]) {
      if (job.threadId !== threadId) continue;
      const waiting = this.queue.indexOf(job);
      if (waiting < 0) this.forgotten.set(threadId, (this.forgotten.get(threadId) ?? 0) + 1);
      else {
        this.queue.splice(waiting, 1);
        this.jobs.delete(key(job.threadId, job.runId));
      }
    }
  }

  private remember(threadId: string, runId: string | null, reason: string | null): void {
    let runs = this.known.get(threadId);
    if (!runs) this.known.set(threadId, (runs = new Map()));
    runs.delete(runId);
    runs.set(runId, reason);
    if (runs.size > REASONS_KEPT_PER_THREAD) runs.delete(runs.keys().next().value!);
  }

  private async run(job: Job): Promise<void> {
    let projection: ThreadProjection | undefined;
    try {
      projection = await this.readThread(job.threadId);
    } catch {
      // No retry here (the supervisor owns retries): the row keeps what it had, "Turn failed".
    }
    const forgotten = this.forgotten.get(job.threadId);
    if (forgotten !== undefined) {
      if (forgotten > 1) this.forgotten.set(job.threadId, forgotten - 1);
      else this.forgotten.delete(job.threadId);
      return;
    }
    if (projection) this.learn(projection);
    if (this.reason(job.threadId, job.runId) !== undefined) return;
    const run: Run | undefined = projection?.runs.find((entry) => entry.id === job.runId);
    this.remember(job.threadId, job.runId, projection && run ? (runFailure(projection, run)?.message ?? null) : null);
  }
}

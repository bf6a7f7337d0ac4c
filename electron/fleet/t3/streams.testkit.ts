// Test helpers that record what a subscription delivers and resolve when a condition holds.
// They wait on the stream's own callbacks, never on timers.
import type { T3Error } from "../../../shared/t3/errors";
import type { ShellDelta, ShellSnapshot, ThreadDetailSnapshot, ThreadShell } from "../../../shared/t3/protocol1/schemas";
import type { ShellListener, ThreadEventItem, ThreadListener } from "./protocol1/connection";

type Waiter = { check: () => boolean; resolve: () => void; reject: (error: Error) => void; what: string };

/** What every stream recorder shares: the end of the stream, and waits that resolve on callbacks. */
export class StreamRecorder {
  private waiters: Waiter[] = [];
  ended: { error?: T3Error } | undefined;

  end(error?: T3Error): void {
    this.ended = { ...(error && { error }) };
    this.changed();
  }

  protected changed(): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (waiter.check()) {
        waiter.resolve();
        return false;
      }
      if (this.ended) {
        waiter.reject(new Error(`stream ended (${this.ended.error?.message ?? "cleanly"}) before: ${waiter.what}`));
        return false;
      }
      return true;
    });
  }

  /** Resolves as soon as `check` holds after a stream callback (or already holds). */
  until(check: () => boolean, what = "condition"): Promise<void> {
    if (check()) return Promise.resolve();
    if (this.ended) return Promise.reject(new Error(`stream already ended before: ${what}`));
    return new Promise((resolve, reject) => this.waiters.push({ check, resolve, reject, what }));
  }

  untilEnded(): Promise<T3Error | undefined> {
    return this.until(() => this.ended !== undefined, "end").then(() => this.ended?.error);
  }
}

class Recorder extends StreamRecorder {
  synchronizedAt: number | undefined;

  synchronized(lastSequence: number): void {
    this.synchronizedAt = lastSequence;
    this.changed();
  }
}

export class ShellRecorder extends Recorder implements ShellListener {
  readonly rows = new Map<string, ThreadShell>();
  readonly deltas: ShellDelta[] = [];
  snapshots = 0;

  snapshot(snapshot: ShellSnapshot): void {
    this.snapshots++;
    this.rows.clear();
    for (const row of snapshot.threads) this.rows.set(row.id, row);
    this.changed();
  }
  delta(delta: ShellDelta): void {
    this.deltas.push(delta);
    if (delta.kind === "thread-upserted") this.rows.set(delta.thread.id, delta.thread);
    if (delta.kind === "thread-removed") this.rows.delete(delta.threadId);
    this.changed();
  }
  row(threadId: string): ThreadShell | undefined {
    return this.rows.get(threadId);
  }
}

export class ThreadRecorder extends Recorder implements ThreadListener {
  snapshotValue: ThreadDetailSnapshot | undefined;
  readonly events: ThreadEventItem[] = [];

  snapshot(snapshot: ThreadDetailSnapshot): void {
    this.snapshotValue = snapshot;
    this.changed();
  }
  delta(event: ThreadEventItem): void {
    this.events.push(event);
    this.changed();
  }
  /** Assistant text folded from the events so far, per message id (the projector's message rule). */
  assistantTexts(): string[] {
    const texts = new Map<string, string>();
    for (const event of this.events) {
      if (event.type !== "thread.message-sent" || !event.known) continue;
      const payload = event.payload as { messageId: string; role: string; text: string; streaming: boolean };
      if (payload.role !== "assistant") continue;
      const before = texts.get(payload.messageId) ?? "";
      texts.set(payload.messageId, payload.streaming ? before + payload.text : payload.text || before);
    }
    return [...texts.values()];
  }
}

/** A listener a test waits on: `until` resolves on the listener's own callbacks (`notify`), never on timers. */
export class Waitable {
  private waiters: { check: () => boolean; resolve: () => void }[] = [];
  protected notify(): void {
    this.waiters = this.waiters.filter((waiter) => (waiter.check() ? (waiter.resolve(), false) : true));
  }
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }
}

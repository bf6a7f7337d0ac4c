// How many environments receive and decode their fleet snapshot at once. A protocol-1 snapshot of
// 5,000 threads is a frame of a few MB (3.2 MB in the simulator): its socket buffers, its text, the
// parsed JSON and the decoded copy live until the model has taken the facts. Ten environments doing that together at start-up peak
// at ten times as much, and the allocator keeps most of those pages long after the peak; two at a
// time still overlap one server's sending with the fleet's decoding.

/** Snapshots received and decoded at once. */
export const SNAPSHOT_SLOTS = 2;
/**
 * A slot is given back at the stream's synchronized mark, its end, or a teardown; a server that
 * stays silent after the subscription gives it back after this long, so it cannot hold others up.
 */
export const SNAPSHOT_SLOT_MS = 5_000;

/** Gives back a slot; calling it again does nothing. */
export type SnapshotSlotRelease = () => void;

export class SnapshotGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly slots = SNAPSHOT_SLOTS,
    private readonly holdMs = SNAPSHOT_SLOT_MS,
  ) {}

  /** Resolves when a slot is free; the caller gives it back once its snapshot is in. */
  acquire(): Promise<SnapshotSlotRelease> {
    return new Promise((resolve) => {
      const grant = () => {
        this.active++;
        let released = false;
        const timer = setTimeout(() => release(), this.holdMs);
        timer.unref?.();
        const release = () => {
          if (released) return;
          released = true;
          clearTimeout(timer);
          this.active--;
          this.waiting.shift()?.();
        };
        resolve(release);
      };
      if (this.active < this.slots) grant();
      else this.waiting.push(grant);
    });
  }
}

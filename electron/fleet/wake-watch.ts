// Noticing that the computer slept (or the process stood still) where no operating-system event says
// so: the headless shell, and the service under any shell. A periodic tick compares how far the wall
// clock moved with how far the monotonic clock moved: the monotonic clock does not run while the
// computer sleeps, and a wall clock set forward or back moves alone. A tick that arrives far later
// than scheduled by the monotonic clock means the event loop stood still (a debugger, a swap storm,
// SIGSTOP). Either way nothing seen before can be trusted: the service re-verifies every connection
// (supervisor.ts, `recheck`). Electron's own wake event is electron/main/wake.ts.

/** How often the clocks are compared. */
export const WAKE_CHECK_INTERVAL_MS = 5_000;
/** Wall and monotonic clocks disagreeing by more than this between two ticks: a sleep or a clock change. */
export const CLOCK_JUMP_THRESHOLD_MS = 30_000;
/** A tick arriving this much later than scheduled (monotonic): the event loop stood still. */
export const EVENT_LOOP_STALL_THRESHOLD_MS = 30_000;

export interface Wake {
  kind: "clock-jump" | "stall";
  /** How much time the fleet could not watch (ms): the jump, or the stall beyond the interval. */
  missedMs: number;
}

export interface WakeWatchOptions {
  intervalMs: number;
  /** Wall clock (ms since epoch). */
  wallNow: () => number;
  /** Monotonic clock (ms, any origin). */
  monotonicNow: () => number;
}

const DEFAULTS: WakeWatchOptions = { intervalMs: WAKE_CHECK_INTERVAL_MS, wallNow: Date.now, monotonicNow: () => performance.now() };

export class WakeWatch {
  private readonly options: WakeWatchOptions;
  private timer: NodeJS.Timeout | undefined;
  private lastWall: number;
  private lastMonotonic: number;

  constructor(
    private readonly onWake: (wake: Wake) => void,
    options: Partial<WakeWatchOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.lastWall = this.options.wallNow();
    this.lastMonotonic = this.options.monotonicNow();
  }

  start(): void {
    if (this.timer) return;
    this.mark();
    this.timer = setInterval(() => this.check(), this.options.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Compares the clocks since the last check; reports (and returns) a wake, or null. */
  check(): Wake | null {
    const wall = this.options.wallNow();
    const monotonic = this.options.monotonicNow();
    const wallElapsed = wall - this.lastWall;
    const monotonicElapsed = monotonic - this.lastMonotonic;
    this.lastWall = wall;
    this.lastMonotonic = monotonic;
    const jump = wallElapsed - monotonicElapsed;
    const stall = monotonicElapsed - this.options.intervalMs;
    const wake: Wake | null =
      Math.abs(jump) > CLOCK_JUMP_THRESHOLD_MS
        ? { kind: "clock-jump", missedMs: jump }
        : stall > EVENT_LOOP_STALL_THRESHOLD_MS
          ? { kind: "stall", missedMs: stall }
          : null;
    if (wake) this.onWake(wake);
    return wake;
  }

  private mark(): void {
    this.lastWall = this.options.wallNow();
    this.lastMonotonic = this.options.monotonicNow();
  }
}

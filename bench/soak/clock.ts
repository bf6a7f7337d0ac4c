// The soak's wall clock: a laptop that sleeps for an hour wakes to a wall clock an hour on while its
// monotonic clock (which does not run in sleep) barely moved. The fleet service and the simulated
// machines run under libfaketime (Debian package libfaketime) reading one offset file, so the soak
// can move every wall clock forward at once, monotonic clocks untouched, as the world moving on
// while the laptop slept. Without libfaketime the jump is skipped and the soak says so.
import { existsSync, writeFileSync } from "node:fs";

const LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

export class SoakClock {
  private offsetS = 0;
  readonly available = existsSync(LIBFAKETIME);

  constructor(private readonly offsetFile: string) {
    if (this.available) writeFileSync(this.offsetFile, "+0\n");
  }

  /** The environment that puts a child's wall clock under the offset file (none without libfaketime). */
  env(): NodeJS.ProcessEnv {
    if (!this.available) return {};
    return {
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_TIMESTAMP_FILE: this.offsetFile,
      // Re-read once a second: a jump lands within a second; reading on every call costs 7 µs each.
      FAKETIME_CACHE_DURATION: "1",
      FAKETIME_DONT_FAKE_MONOTONIC: "1",
    };
  }

  /** Moves every child's wall clock forward; returns the new total offset (s), or null without libfaketime. */
  jump(seconds: number): number | null {
    if (!this.available) return null;
    this.offsetS += seconds;
    writeFileSync(this.offsetFile, `+${this.offsetS}\n`);
    return this.offsetS;
  }
}

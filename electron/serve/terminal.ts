// Every line the headless shell writes to a terminal goes through here: each line passes through
// `terminalLine` (shared/t3/text.ts), so no text a T3 server sent (a label, a version, an error)
// can carry an escape sequence or start a line of its own; and problem reports are rate-limited, so a
// flood of failures cannot flood the terminal or a log file.
import { terminalLine } from "../../shared/t3/text";

export interface LineSink {
  write(text: string): unknown;
}

/** Writes each argument as one line; line breaks inside an argument are shown, never sent. */
export function writeLines(sink: LineSink, ...lines: string[]): void {
  sink.write(lines.map((line) => `${terminalLine(line)}\n`).join(""));
}

/** Standard output and error of this process, line-safe. */
export const terminal = {
  out: (...lines: string[]) => writeLines(process.stdout, ...lines),
  err: (...lines: string[]) => writeLines(process.stderr, ...lines),
};

export interface RateLimit {
  /** Lines let through per window. */
  lines: number;
  windowMs: number;
  now?: () => number;
}

export const DEFAULT_LOG_RATE: RateLimit = { lines: 20, windowMs: 60_000 };

/**
 * Lets `limit.lines` lines through per window and drops the rest; the first line of a later window
 * is preceded by how many were dropped. No timer: nothing is held back, nothing keeps the process up.
 */
export function rateLimited(write: (line: string) => void, limit: RateLimit = DEFAULT_LOG_RATE): (line: string) => void {
  const now = limit.now ?? Date.now;
  let windowStart = -Infinity;
  let written = 0;
  let dropped = 0;
  return (line) => {
    const at = now();
    if (at - windowStart >= limit.windowMs) {
      if (dropped > 0)
        write(
          `t3-fleet serve: ${dropped} more log line${dropped === 1 ? " was" : "s were"} dropped (over ${limit.lines} in ${Math.round(limit.windowMs / 1000)} s)`,
        );
      windowStart = at;
      written = 0;
      dropped = 0;
    }
    if (written >= limit.lines) {
      dropped += 1;
      return;
    }
    written += 1;
    write(line);
  };
}

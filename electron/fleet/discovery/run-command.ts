// Runs one external command (t3, ssh, tailscale) without a shell, bounded in time and output, and
// keeps what it printed in memory only: a pairing code printed on stdout never touches disk.
import { spawn } from "node:child_process";

export interface CommandResult {
  /** Exit code; null when killed by a signal (including the timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface CommandOptions {
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  /** Output beyond this is dropped (an honest `t3` or `tailscale` prints far less). */
  maxOutputBytes?: number;
}

export class CommandMissingError extends Error {
  constructor(readonly command: string) {
    super(`${command} is not installed or not on PATH`);
  }
}

export function runCommand(command: string, args: readonly string[], options: CommandOptions): Promise<CommandResult> {
  const limit = options.maxOutputBytes ?? 4 << 20;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: options.env ?? process.env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let timedOut = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (outBytes < limit) out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (errBytes < limit) err.push(chunk);
      errBytes += chunk.length;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutMs);
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error.code === "ENOENT" ? new CommandMissingError(command) : error);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), timedOut });
    });
  });
}

/** The last non-empty line of a command's error output, one line and bounded, for an error message. */
export function lastLine(text: string): string {
  const line = text
    .split(/\r?\n/)
    .map((entry) => entry.trim())
    .filter(Boolean)
    .pop();
  return [...(line ?? "")]
    .map((character) => (isControl(character) ? " " : character))
    .join("")
    .slice(0, 300);
}

function isControl(character: string): boolean {
  const code = character.codePointAt(0)!;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

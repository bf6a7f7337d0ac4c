// The soak's processes: each simulated machine and the fleet service run as child processes (so
// they can be frozen with SIGSTOP and the service SIGKILLed), and what /proc says about them.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, watch } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ResourceReport } from "../../electron/serve/resource-report";
import { TRACE_LINE_PREFIX } from "./object-stats";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Every child still running: killed when the soak ends in any way, so none outlives it. */
const running = new Set<Child>();
process.on("exit", () => {
  for (const child of running) {
    child.process.kill("SIGCONT");
    child.process.kill("SIGKILL");
  }
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130));

export interface Child {
  process: ChildProcess;
  pid: number;
  output: string[];
  /** Set where the soak itself stops or kills the process: any other exit is the soak's problem to report. */
  ending?: boolean;
}

/** Children that exited without the soak ending them (a crashed simulator), each with its last output. */
export const unexpectedExits: string[] = [];

/** Ends a child on purpose with `signal`, so its exit is not reported as unexpected. */
export function endChild(child: Child, signal: NodeJS.Signals): void {
  child.ending = true;
  child.process.kill(signal);
}

/** Added to every child's environment (the soak's clock, bench/soak/clock.ts). */
export const childEnvironment: NodeJS.ProcessEnv = {};

/**
 * Children started from now on write a V8 heap snapshot into `dir` (made absolute, created) when
 * `askHeapSnapshot` signals them: by signal, no inspector attached (one attached stays in the heap it
 * measures). Every child gets the flag; only the service is ever sent the signal.
 */
export function snapshotsInto(dir: string): string {
  const absolute = resolve(dir);
  mkdirSync(absolute, { recursive: true });
  childEnvironment.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --heapsnapshot-signal=SIGWINCH --diagnostic-dir=${absolute}`.trim();
  return absolute;
}

export function askHeapSnapshot(pid: number): void {
  process.kill(pid, "SIGWINCH");
}

export interface StartOptions {
  /**
   * The child's stdout goes to this file (appended) instead of a pipe: V8 prints its traces with C's
   * stdio on the same descriptor, and on a pipe (which Node makes non-blocking) it drops what the pipe
   * cannot take at once; a file takes every byte. `ready` is then read from the file too.
   */
  stdoutFile?: string;
}

/** Calls `onText` with what is appended to `path` (open as `fd`) after `from` bytes, until the returned stop is called. */
function followFile(path: string, fd: number, from: number, onText: (text: string) => void): () => void {
  let offset = from;
  const readNew = () => {
    const buffer = Buffer.alloc(Math.max(0, fstatSync(fd).size - offset));
    offset += readSync(fd, buffer, 0, buffer.length, offset);
    if (buffer.length > 0) onText(buffer.toString("utf8"));
  };
  const watcher = watch(path, readNew);
  readNew();
  return () => watcher.close();
}

/** A file the child appends to and the soak reads back from where it ended before the child started. */
function openForChild(path: string): { path: string; fd: number; from: number } {
  const fd = openSync(path, "a+");
  return { path, fd, from: fstatSync(fd).size };
}

/** Starts `script` under tsx and resolves with the first match of `ready` in its output. */
export async function startTsx(
  script: string,
  args: string[],
  ready: RegExp,
  env: NodeJS.ProcessEnv = {},
  options: StartOptions = {},
): Promise<{ child: Child; match: RegExpMatchArray }> {
  const stdoutFile = options.stdoutFile === undefined ? undefined : openForChild(options.stdoutFile);
  const process_ = spawn(process.execPath, ["--import", "tsx", join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...childEnvironment, ...env },
    stdio: ["ignore", stdoutFile?.fd ?? "pipe", "pipe"],
  });
  const child: Child = { process: process_, pid: process_.pid!, output: [] };
  running.add(child);
  process_.once("exit", () => running.delete(child));
  let stopFollowing = () => {};
  const match = await new Promise<RegExpMatchArray>((resolveMatch, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`${script} did not start in 90 s:\n${text}`)), 90_000);
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      const found = ready.exec(text);
      if (found) {
        clearTimeout(timer);
        resolveMatch(found);
      }
    };
    process_.stderr!.on("data", onData);
    if (!stdoutFile) process_.stdout!.on("data", onData);
    else {
      // Whole lines only, V8's trace left out: the link is one line among megabytes of it.
      let partial = "";
      stopFollowing = followFile(stdoutFile.path, stdoutFile.fd, stdoutFile.from, (appended) => {
        const lines = (partial + appended).split("\n");
        partial = lines.pop()!;
        for (const line of lines) if (!line.startsWith(TRACE_LINE_PREFIX)) onData(`${line}\n`);
      });
    }
    process_.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code ?? signal}) before it was ready:\n${text}`));
    });
  }).finally(() => {
    // The child holds its own copy of the descriptor.
    stopFollowing();
    if (stdoutFile) closeSync(stdoutFile.fd);
  });
  // Keep the last lines (errors the service printed) without growing for hours.
  const keep = (chunk: Buffer) => {
    child.output.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    if (child.output.length > 200) child.output.splice(0, child.output.length - 200);
  };
  process_.stdout?.on("data", keep);
  process_.stderr!.on("data", keep);
  // Logged at once: a machine that crashed hours before the end would otherwise only show as requests failing.
  process_.once("exit", (code, signal) => {
    if (child.ending) return;
    const text = `${script} ${args.join(" ")} exited by itself (${code ?? signal}); its last output:\n${child.output
      .slice(-40)
      .map((line) => `    ${line}`)
      .join("\n")}`;
    unexpectedExits.push(text);
    console.log(`soak: ${text}`);
  });
  return { child, match };
}

export function exited(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.process.once("exit", () => done()));
}

export interface ProcSample {
  rssBytes: number;
  /**
   * Of the RSS, the process's own anonymous pages: its heaps. The rest is mapped files (the node
   * binary's code and ICU data, paged in as they are first used, shared and dropped under pressure).
   */
  rssAnonBytes: number;
  fds: number;
  sockets: number;
}

/** The process's RSS and its anonymous part, from /proc: without the descriptors' walk procSample makes. */
export function rssOf(pid: number): Pick<ProcSample, "rssBytes" | "rssAnonBytes"> {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const bytesOf = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rssBytes: bytesOf("VmRSS"), rssAnonBytes: bytesOf("RssAnon") };
}

export function procSample(pid: number): ProcSample {
  let fds = 0;
  let sockets = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    fds++;
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) sockets++;
    } catch {
      // closed between the listing and the read
    }
  }
  return { ...rssOf(pid), fds, sockets };
}

/** Asks the service (SIGUSR2, electron/serve/resource-report.ts) for its heap and active handles. */
export async function serviceReport(pid: number, path: string): Promise<ResourceReport | undefined> {
  // The last report goes first: the service's clock is not the soak's (it jumps an hour when the
  // laptop "wakes", bench/soak/clock.ts), so its time cannot tell a new report from the last one.
  await rm(path, { force: true });
  process.kill(pid, "SIGUSR2");
  for (let tries = 0; tries < 50; tries++) {
    try {
      const report = JSON.parse(await readFile(path, "utf8")) as ResourceReport;
      if (report.pid === pid) return report;
    } catch {
      // not written yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return undefined;
}

/** Processes whose parent is `pid` (live ones; zombies are reaped by Node). */
export function childrenOf(pid: number): { pid: number; command: string }[] {
  const out: { pid: number; command: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid && fields[0] !== "Z")
        out.push({ pid: Number(entry), command: readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim() });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** TCP connections on loopback that touch one of `ports` and are still open (not TIME_WAIT). */
export function openConnections(ports: number[]): number {
  const wanted = new Set(ports);
  let count = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 4) continue;
      const local = parseInt(fields[1]!.split(":")[1]!, 16);
      const remote = parseInt(fields[2]!.split(":")[1]!, 16);
      const state = fields[3];
      // 01 ESTABLISHED, 08 CLOSE_WAIT, 04/05 FIN_WAIT, 0A LISTEN; 06 TIME_WAIT is the kernel's, not a leak.
      if (state === "06" || state === "07") continue;
      if (wanted.has(local) || wanted.has(remote)) count++;
    }
  }
  return count;
}

// The real T3 server for tests: the released `t3` executable (protocol 1; installed once, pinned,
// checksum verified, never an app dependency). No released T3 speaks protocol 2 yet, so protocol 2 is
// held against recordings and T3's contract instead (docs/t3-protocols.md). It runs
// `serve` on 127.0.0.1 with its own HOME and base directory, and the real harness CLIs a test asks
// for (integration/harnesses) on PATH; without any, the Codex stand-in (../shared/tools/fake-codex.mjs)
// answers T3's start-up probe, for suites that run no agent turn (integration/discovery). The
// harness mints pairing links, and kills, freezes and restarts it. Every test that uses it runs
// inside a private network namespace (scripts/realt3.sh).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { prepareHarnesses } from "../harnesses/harness-env";
import type { HarnessName } from "../harnesses/install";

const run = promisify(execFile);

export const T3_PACKAGE = "@t3code/t3-linux-x64";
export const T3_VERSION = "0.0.42";
/** npm's `dist.integrity` of the pinned tarball: a different tarball is refused. */
export const T3_INTEGRITY = "sha512-iRdhsW7qoQnTW+cChqMmuZwfakz90z5tpi3wA/Jg4AwljXF07o64Rhkf26TyMy0V3BWu5AAHTNFhK3znTMm1uA==";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The folder shared beside the repository (recordings, tools); override with T3_SHARED_DIR. */
export function sharedDir(): string {
  const dir = process.env.T3_SHARED_DIR ?? resolve(repoRoot, "../shared");
  if (!existsSync(join(dir, "tools/fake-codex.mjs"))) throw new Error(`The Codex stand-in was not found at ${dir}/tools/fake-codex.mjs; set T3_SHARED_DIR`);
  return dir;
}

export function t3InstallDir(): string {
  return join(process.env.T3_FLEET_CACHE ?? join(homedir(), ".cache/t3-fleet"), `t3-${T3_VERSION}`);
}

function t3Executable(): string {
  return join(t3InstallDir(), "package/t3");
}

/** What differs between the real servers the harness runs; everything else (CLI, auth, pairing) is T3's own. */
export interface ServerKind {
  /** For failure messages and test names. */
  readonly label: string;
  /** The `serverVersion` its descriptor reports. */
  readonly serverVersion: string;
  readonly protocol: 1;
  /** The executable that takes T3's CLI (`serve`, `auth …`); throws with a remedy when it is not installed. */
  executable(): string;
  /** Environment the executable needs besides the harness's own (which gives T3 a fresh HOME). */
  env(): Record<string, string>;
  /** Bound for the first start, which runs the database migrations. */
  readonly startTimeoutMs: number;
}

/** The released T3 0.0.42 executable from npm: protocol 1. */
export const RELEASED_T3: ServerKind = {
  label: `T3 ${T3_VERSION}`,
  serverVersion: T3_VERSION,
  protocol: 1,
  executable() {
    const executable = t3Executable();
    if (!existsSync(executable)) {
      throw new Error(
        `The T3 executable is not installed at ${executable}: run \`npx tsx integration/realt3/install.ts\` (needs the npm registry) before the real-server tests`,
      );
    }
    return executable;
  },
  env: () => ({}),
  // Usually under 5 s; on a machine loaded by parallel builds a first start took over 30 s.
  startTimeoutMs: 60_000,
};

async function sha512(file: string): Promise<string> {
  const hash = createHash("sha512");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest("base64")}`;
}

/**
 * Installs the pinned T3 executable into the cache folder unless it is already there, and returns
 * its path. Needs the npm registry: run it before entering the network namespace.
 */
export async function ensureT3Installed(log: (line: string) => void = () => undefined): Promise<string> {
  const dir = t3InstallDir();
  const stamp = join(dir, "integrity");
  if (existsSync(t3Executable()) && (await readFile(stamp, "utf8").catch(() => "")) === T3_INTEGRITY) return t3Executable();
  log(`installing ${T3_PACKAGE}@${T3_VERSION} into ${dir}`);
  await mkdir(dirname(dir), { recursive: true });
  const staging = await mkdtemp(`${dir}.partial-`);
  try {
    await run("npm", ["pack", `${T3_PACKAGE}@${T3_VERSION}`, "--pack-destination", staging, "--silent"], { maxBuffer: 16 << 20 });
    const tarball = (await readdir(staging)).find((name) => name.endsWith(".tgz"));
    if (!tarball) throw new Error(`npm pack left no tarball in ${staging}`);
    const integrity = await sha512(join(staging, tarball));
    if (integrity !== T3_INTEGRITY) throw new Error(`${T3_PACKAGE}@${T3_VERSION}: integrity ${integrity} is not the pinned ${T3_INTEGRITY}`);
    // Every dependency is bundled in the tarball: unpacking it is the whole install.
    await run("tar", ["-xzf", join(staging, tarball), "-C", staging]);
    await rm(join(staging, tarball));
    await writeFile(join(staging, "integrity"), T3_INTEGRITY);
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return t3Executable();
}

/** A free loopback port, asked of the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface RealT3Options {
  /** Which real server to run (the released executable unless told). */
  kind?: ServerKind;
  /** Bound for the server to start listening (the first start runs its migrations). */
  startTimeoutMs?: number;
  /**
   * The real harness CLIs to run instead of the Codex stand-in, each pointed at the scripted model
   * server at `modelUrl` (integration/harnesses/harness-env.ts).
   */
  harnesses?: { names: HarnessName[]; modelUrl: string };
}

export interface PairingLink {
  url: string;
  credential: string;
  id: string;
}

/** One real server process and its private folders; restartable on the same base dir and port. */
export class RealT3Server {
  private process: ChildProcess | undefined;
  private output = "";
  private exited: Promise<void> = Promise.resolve();
  /** Milliseconds from spawn to the "Listening on" log line, per start. */
  readonly startupMs: number[] = [];
  /** Date.now() when the server last logged that it listens. */
  listeningAt = 0;

  private constructor(
    readonly kind: ServerKind,
    readonly executable: string,
    readonly root: string,
    readonly port: number,
    private readonly options: RealT3Options,
    private readonly harnessEnv: Record<string, string> = {},
  ) {}

  static async start(options: RealT3Options = {}): Promise<RealT3Server> {
    const kind = options.kind ?? RELEASED_T3;
    const executable = kind.executable();
    const root = await mkdtemp(join(tmpdir(), "t3-real-"));
    for (const folder of ["home", "base", "bin", "work"]) await mkdir(join(root, folder));
    let harnessEnv: Record<string, string> = {};
    if (options.harnesses) {
      const { names, modelUrl } = options.harnesses;
      harnessEnv = (await prepareHarnesses({ home: join(root, "home"), binDir: join(root, "bin"), baseDir: join(root, "base"), modelUrl, harnesses: names }))
        .env;
    } else {
      // The Codex stand-in T3 spawns as `codex app-server`.
      const codex = join(root, "bin/codex");
      await writeFile(codex, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(sharedDir(), "tools/fake-codex.mjs"))} "$@"\n`);
      await chmod(codex, 0o755);
    }
    const server = new RealT3Server(kind, executable, root, await freePort(), options, harnessEnv);
    await server.launch();
    return server;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get baseDir(): string {
    return join(this.root, "base");
  }
  /** The folder projects are created in (a plain folder, not a git repository). */
  get workDir(): string {
    return join(this.root, "work");
  }
  get pid(): number | undefined {
    return this.process?.pid;
  }
  get log(): string {
    return this.output;
  }
  get running(): boolean {
    return this.process !== undefined;
  }

  private env(): NodeJS.ProcessEnv {
    return {
      PATH: `${join(this.root, "bin")}:${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: join(this.root, "home"),
      T3CODE_TELEMETRY_ENABLED: "false",
      // Every process T3 starts inherits this, so stop() can find the ones that outlive T3.
      [STRAY_MARKER]: this.root,
      T3CODE_PORT: String(this.port),
      FAKE_CODEX_LOG: join(this.root, "codex.log"),
      LANG: "C.UTF-8",
      ...this.kind.env(),
      ...this.harnessEnv,
    };
  }

  /** Starts `serve` and resolves once it logs that it listens and answers its descriptor. */
  private async launch(): Promise<void> {
    const started = Date.now();
    const child = spawn(this.executable, ["serve", "--host", "127.0.0.1", "--port", String(this.port), "--base-dir", this.baseDir, this.workDir], {
      cwd: this.workDir,
      env: this.env(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.process = child;
    this.exited = new Promise((done) =>
      child.once("exit", () => {
        if (this.process === child) this.process = undefined;
        done();
      }),
    );
    const marker = `Listening on http://127.0.0.1:${this.port}`;
    const timeoutMs = this.options.startTimeoutMs ?? this.kind.startTimeoutMs;
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => finish(new Error(`${this.kind.label} did not listen within ${timeoutMs} ms:\n${this.output.slice(-4000)}`)), timeoutMs);
      const onData = (chunk: Buffer) => {
        this.output += chunk.toString("utf8");
        if (this.output.includes(marker, this.output.length - chunk.length - marker.length)) finish();
      };
      const onExit = (code: number | null, signal: string | null) =>
        finish(new Error(`${this.kind.label} exited (${code ?? signal}) before listening:\n${this.output.slice(-4000)}`));
      const finish = (error?: Error) => {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        child.stderr!.off("data", onData);
        child.off("exit", onExit);
        // Keep collecting the log for assertions and failure reports.
        child.stdout!.on("data", (c: Buffer) => (this.output += c.toString("utf8")));
        child.stderr!.on("data", (c: Buffer) => (this.output += c.toString("utf8")));
        if (error) fail(error);
        else ready();
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
      child.once("exit", onExit);
    });
    this.listeningAt = Date.now();
    this.startupMs.push(this.listeningAt - started);
  }

  /** SIGKILL: the process vanishes, the kernel resets its sockets. */
  async kill(): Promise<void> {
    const child = this.process;
    if (!child) return;
    child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGSTOP: sockets stay open, nothing answers (a frozen or sleeping host). */
  freeze(): void {
    this.process?.kill("SIGSTOP");
  }

  thaw(): void {
    this.process?.kill("SIGCONT");
  }

  /** Starts the server again on the same base dir and port (after kill, or kills it first). */
  async restart(): Promise<void> {
    if (this.process) {
      this.thaw();
      await this.kill();
    }
    await this.launch();
  }

  async stop(): Promise<void> {
    this.thaw();
    await this.kill();
    await killStrays(this.root);
    await rm(this.root, { recursive: true, force: true });
  }

  /** Runs a `t3` CLI command against this server's base dir. */
  async cli(args: string[]): Promise<string> {
    const { stdout } = await run(this.executable, [...args, "--base-dir", this.baseDir], { env: this.env(), cwd: this.workDir, maxBuffer: 4 << 20 });
    return stdout;
  }

  /** The descriptor a client reads before pairing (`/.well-known/t3/environment`). */
  async descriptor(): Promise<{ environmentId: string; orchestrationProtocolVersion?: number }> {
    return (await (await fetch(`${this.baseUrl}/.well-known/t3/environment`)).json()) as { environmentId: string; orchestrationProtocolVersion?: number };
  }

  /** A fresh one-time pairing link, as `t3 auth pairing create` prints it. */
  async pairingLink(): Promise<PairingLink> {
    const minted = JSON.parse(await this.cli(["auth", "pairing", "create", "--json"])) as { id: string; credential: string };
    return { id: minted.id, credential: minted.credential, url: `${this.baseUrl}/pair#token=${minted.credential}` };
  }

  /** A bearer token for the test's own operator client (the T3 web stand-in). */
  async issueToken(label = "realt3 operator"): Promise<string> {
    return (await this.cli(["auth", "session", "issue", "--token-only", "--label", label])).trim();
  }

  async sessions(): Promise<AuthSessionListing[]> {
    return JSON.parse(await this.cli(["auth", "session", "list", "--json"])) as AuthSessionListing[];
  }

  async revokeSession(sessionId: string): Promise<void> {
    await this.cli(["auth", "session", "revoke", sessionId]);
  }
}

/** The environment variable that marks the processes of one server's folder. */
export const STRAY_MARKER = "T3_FLEET_REALT3_ROOT";

/**
 * SIGKILLs every process still carrying `root`'s marker. T3 starts each provider in a session of its
 * own and never reaps it when it dies: `codex app-server` and Claude Code exit once their stdin
 * closes, but OpenCode's `opencode serve` lives on (seen under T3 0.0.42), one ~400 MB process per start.
 */
async function killStrays(root: string): Promise<void> {
  const marker = `${STRAY_MARKER}=${root}\0`;
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  const strays: number[] = [];
  for (const pid of pids) {
    const environ = await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
    if (`${environ}\0`.includes(marker)) strays.push(Number(pid));
  }
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

export interface AuthSessionListing {
  sessionId: string;
  label?: string | null;
  [key: string]: unknown;
}

export const newId = (prefix: string) => `${prefix}-${randomUUID()}`;

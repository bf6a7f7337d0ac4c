// "The server under test" of the fleet scenarios (fleet-scenarios.testkit.ts): a simulated T3 machine
// of either protocol in a process of its own (sim/cli.ts, so SIGSTOP freezes exactly it, as
// bench/soak/machines.ts runs the soak's), reached only as the real suites reached real T3: its
// control API stands in for T3's CLI and other clients, and protocol 2's own socket for T3's UI
// (sim/protocol2/operator.testkit.ts). What it stored is read back from the server, never from the fleet.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FLEET_SCOPES, parsePairingInput } from "../../../shared/t3/pairing";
import type { LoggedRequest } from "../../../sim/host";
import { controlRequest } from "../../../sim/machine-control";
import { T3V2Operator } from "../../../sim/protocol2/operator.testkit";
import type { ServerTruth } from "../truth-oracle.testkit";
import { type Protocol1Activity, simulatedThreadTruth } from "./protocol1/truth-reader.testkit";
import { readProtocol2Truth } from "./protocol2/truth-reader.testkit";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** One agent step every 5 ms: the scenarios wait on events, so only the order of steps matters. */
const TICK_MS = 5;

/** Every machine process still running: none outlives the test process, even a frozen one. */
const machines = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of machines) {
    child.kill("SIGCONT");
    child.kill("SIGKILL");
  }
});

export type Provider = "codex" | "claudeAgent";

/** What a server stored of one thread, the same words for both protocols. */
export interface StoredThread {
  messages: { role: string; text: string; turnId: string | null }[];
  /** Its turns' ids (protocol 2: runs) in order. */
  turns: string[];
  /** The server's word for its last turn's end (protocol 1: latestTurn.state; protocol 2: the run's status). */
  lastTurnStatus: string | null;
  /** Whether the server still drives a turn of it. */
  active: boolean;
  /** Why its last turn failed, where the server keeps it (protocol 1: the session's lastError; protocol 2: the error item). */
  failure: string | null;
  /** Each approval the agent asked, as the server settled it (protocol 2's request says no decision: 03-approval.json). */
  approvals: { settled: boolean; decision: string | null }[];
  /** Whether the command an approval guarded ran. */
  commandRan: boolean;
}

/** A thread's row in the server's own list (protocol 1: its thread read; protocol 2: the shell). */
export interface StoredRow {
  snoozedUntil: string | null;
  /** The row's own error (protocol 2's shell keeps it null for a failed turn). */
  lastError: string | null;
}

export interface ServerUnderTest {
  readonly protocol: 1 | 2;
  readonly environmentId: string;
  readonly baseUrl: string;
  /** What the server reports as its version (its descriptor). */
  readonly serverVersion: string;
  pairingUrl(): Promise<string>;
  /** The labels of the sessions it holds, newest last. */
  sessions(): Promise<{ sessionId: string; label: string }[]>;
  /** A project, as T3's UI creates one. */
  createProject(title: string): Promise<string>;
  /** A thread, as T3's UI creates one (protocol 2 with the runtime mode given). */
  createThread(title: string, options?: { provider?: Provider; runtimeMode?: "full-access" | "approval-required" }): Promise<string>;
  /**
   * A child of `parentId` as a client can make one: protocol 1 by Model Router's id convention
   * `sub.<parent>.<suffix>`, protocol 2 by forking it (lineage is set only by T3: t3-protocol.md §16.9).
   */
  createChild(parentId: string, title: string): Promise<string>;
  /** A message typed into T3 itself; the simulator's scenario words (#hold, #approval, #fail) script the agent. */
  send(threadId: string, text: string): Promise<void>;
  /** Ends the `#hold` of the thread's running turn. */
  release(threadId: string): Promise<void>;
  stored(threadId: string): Promise<StoredThread>;
  storedRow(threadId: string): Promise<StoredRow>;
  /** The threads the server lists as active (neither archived nor deleted). */
  threadIds(): Promise<string[]>;
  /** What it stored of every thread it lists and of each of `alsoRead`, for the truth oracle (electron/fleet/truth-oracle.testkit.ts). */
  truth(alsoRead?: Iterable<string>): Promise<ServerTruth>;
  archive(threadId: string): Promise<void>;
  delete(threadId: string): Promise<void>;
  /** kill -9 of the server (its data stays, as T3's database does)… */
  kill(): Promise<void>;
  /** …and a start on the same port. */
  restart(): Promise<void>;
  readonly running: boolean;
  /** SIGSTOP and SIGCONT of the server's process. */
  freeze(): void;
  thaw(): void;
  readonly frozen: boolean;
  revokeSession(sessionId: string): Promise<void>;
  /** The requests the server was sent since `since` (ms), with the session each carried. */
  requestsSince(since: number): Promise<LoggedRequest[]>;
  stop(): Promise<void>;
}

/** A started sim/cli.ts with its one machine. */
interface MachineProcess {
  child: ChildProcess;
  controlUrl: string;
  label: string;
  environmentId: string;
  baseUrl: string;
  serverVersion: string;
}

/** A simulated machine in its own process (sim/cli.ts), driven through its control API. */
abstract class SimulatedMachine implements ServerUnderTest {
  abstract readonly protocol: 1 | 2;
  running = true;
  frozen = false;
  readonly environmentId: string;
  readonly baseUrl: string;
  readonly serverVersion: string;
  private readonly child: ChildProcess;
  private readonly controlUrl: string;
  private readonly label: string;

  protected constructor(machine: MachineProcess) {
    ({ child: this.child, controlUrl: this.controlUrl, label: this.label } = machine);
    ({ environmentId: this.environmentId, baseUrl: this.baseUrl, serverVersion: this.serverVersion } = machine);
  }

  /** Starts one machine of `generation` with no threads, and resolves once its control API answers. */
  protected static async spawn(generation: "upstream" | "v2"): Promise<MachineProcess> {
    const label = `machine-${randomUUID().slice(0, 6)}`;
    const args = ["--envs", generation, "--labels", label, "--threads", "0", "--tick", String(TICK_MS)];
    const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "sim/cli.ts"), ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    machines.add(child);
    child.once("exit", () => machines.delete(child));
    const controlUrl = await new Promise<string>((resolveUrl, reject) => {
      let output = "";
      const timer = setTimeout(() => reject(new Error(`sim/cli.ts did not start in 60 s:\n${output}`)), 60_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        const found = /Control API: (http:\/\/127\.0\.0\.1:\d+)\/envs/.exec(output);
        if (!found) return;
        clearTimeout(timer);
        resolveUrl(found[1]!);
      };
      child.stdout.on("data", read);
      child.stderr.on("data", read);
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`sim/cli.ts exited (${code ?? signal}) before it was ready:\n${output}`));
      });
    });
    const [described] = (await controlRequest(controlUrl, "GET", "/envs")) as { environmentId: string; baseUrl: string; serverVersion: string }[];
    return { child, controlUrl, label, environmentId: described!.environmentId, baseUrl: described!.baseUrl, serverVersion: described!.serverVersion };
  }

  protected control(method: "GET" | "POST", action: string, body?: unknown): Promise<unknown> {
    return controlRequest(this.controlUrl, method, `/envs/${encodeURIComponent(this.label)}/${action}`, body);
  }

  async pairingUrl(): Promise<string> {
    return ((await this.control("POST", "pairing", {})) as { pairingUrl: string }).pairingUrl;
  }

  async sessions(): Promise<{ sessionId: string; label: string }[]> {
    return (await this.control("GET", "sessions")) as { sessionId: string; label: string }[];
  }

  async threadIds(): Promise<string[]> {
    const { live, archived } = (await this.control("GET", "thread-list")) as { live: string[]; archived: string[] };
    return live.filter((threadId) => !archived.includes(threadId));
  }

  async archive(threadId: string): Promise<void> {
    await this.control("POST", `threads/${encodeURIComponent(threadId)}/archive`, {});
  }

  async delete(threadId: string): Promise<void> {
    await this.control("POST", `threads/${encodeURIComponent(threadId)}/delete`, {});
  }

  async release(threadId: string): Promise<void> {
    const { released } = (await this.control("POST", `threads/${encodeURIComponent(threadId)}/release`, {})) as { released: boolean };
    if (!released) throw new Error(`nothing held on ${threadId}`);
  }

  async kill(): Promise<void> {
    await this.control("POST", "kill", {});
    this.running = false;
  }

  async restart(): Promise<void> {
    await this.control("POST", "start", {});
    this.running = true;
  }

  freeze(): void {
    this.child.kill("SIGSTOP");
    this.frozen = true;
  }

  thaw(): void {
    this.child.kill("SIGCONT");
    this.frozen = false;
  }

  async revokeSession(sessionId: string): Promise<void> {
    const { revoked } = (await this.control("POST", "revoke", { sessionId })) as { revoked: number };
    if (revoked !== 1) throw new Error(`session ${sessionId} was not revoked`);
  }

  async requestsSince(since: number): Promise<LoggedRequest[]> {
    return ((await this.control("GET", "requests")) as LoggedRequest[]).filter((request) => request.at >= since);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((done) => this.child.once("exit", () => done()));
    this.child.kill("SIGCONT");
    this.child.kill("SIGKILL");
    await exited;
  }

  abstract createProject(title: string): Promise<string>;
  abstract createThread(title: string, options?: { provider?: Provider; runtimeMode?: "full-access" | "approval-required" }): Promise<string>;
  abstract createChild(parentId: string, title: string): Promise<string>;
  abstract send(threadId: string, text: string): Promise<void>;
  abstract stored(threadId: string): Promise<StoredThread>;
  abstract storedRow(threadId: string): Promise<StoredRow>;
  abstract truth(alsoRead?: Iterable<string>): Promise<ServerTruth>;
}

interface V1Detail {
  messages: { role: string; text: string; turnId: string | null }[];
  activities: (Protocol1Activity & { payload: { status?: string; decision?: string } })[];
  session: { status: string; activeTurnId: string | null; lastError: string | null } | null;
  latestTurn: { turnId: string; state: string } | null;
  snoozedUntil?: string | null;
}

/** The protocol-1 simulator (upstream auth, as T3 0.0.42): threads through its control API, as T3's CLI and UI would. */
export class Protocol1Machine extends SimulatedMachine {
  readonly protocol = 1 as const;

  static async start(): Promise<Protocol1Machine> {
    return new Protocol1Machine(await SimulatedMachine.spawn("upstream"));
  }

  async createProject(title: string): Promise<string> {
    return ((await this.control("POST", "projects", { title })) as { projectId: string }).projectId;
  }

  /** Protocol 1 has no per-thread runtime mode in the simulator: `#approval` asks on any thread. */
  async createThread(title: string, options: { provider?: Provider; threadId?: string } = {}): Promise<string> {
    return ((await this.control("POST", "threads", { title, ...options })) as { threadId: string }).threadId;
  }

  /** A child as Model Router makes one: the thread id `sub.<parent>.<suffix>`. */
  createChild(parentId: string, title: string): Promise<string> {
    return this.createThread(title, { threadId: `sub.${parentId}.worker-${randomUUID().slice(0, 6)}` });
  }

  async send(threadId: string, text: string): Promise<void> {
    await this.control("POST", `threads/${encodeURIComponent(threadId)}/message`, { text });
  }

  private async detail(threadId: string): Promise<V1Detail> {
    return (await this.control("GET", `threads/${encodeURIComponent(threadId)}`)) as V1Detail;
  }

  async stored(threadId: string): Promise<StoredThread> {
    const detail = await this.detail(threadId);
    const asked = detail.activities.filter((activity) => activity.kind === "approval.requested").length;
    const resolved = detail.activities.filter((activity) => activity.kind === "approval.resolved").map((activity) => String(activity.payload.decision));
    return {
      messages: detail.messages.map(({ role, text, turnId }) => ({ role, text, turnId })),
      turns: [...new Set(detail.messages.flatMap((message) => (message.turnId ? [message.turnId] : [])))],
      lastTurnStatus: detail.latestTurn?.state ?? null,
      active: detail.session?.status === "running" || detail.session?.status === "starting",
      failure: detail.session?.lastError ?? null,
      approvals: Array.from({ length: asked }, (_, index) => ({ settled: index < resolved.length, decision: resolved[index] ?? null })),
      commandRan: detail.activities.some((activity) => activity.kind === "tool.completed" && activity.payload.status === "completed"),
    };
  }

  async storedRow(threadId: string): Promise<StoredRow> {
    const detail = await this.detail(threadId);
    return { snoozedUntil: detail.snoozedUntil ?? null, lastError: detail.session?.lastError ?? null };
  }

  /** Each thread's own read (the simulator's, T3's thread shape) by T3's rules; one it no longer has is deleted. */
  async truth(alsoRead: Iterable<string> = []): Promise<ServerTruth> {
    const { live, archived } = (await this.control("GET", "thread-list")) as { live: string[]; archived: string[] };
    const threads = [];
    for (const threadId of new Set([...live, ...archived, ...alsoRead]))
      threads.push(simulatedThreadTruth(threadId, await this.detail(threadId).catch(() => null), archived.includes(threadId)));
    return { environmentId: this.environmentId, threads };
  }
}

/** The protocol-2 simulator: threads, messages and reads over its own socket, as T3's UI sends them. */
export class Protocol2Machine extends SimulatedMachine {
  readonly protocol = 2 as const;
  private projectId: string | undefined;

  private constructor(
    machine: MachineProcess,
    readonly operator: T3V2Operator,
  ) {
    super(machine);
  }

  static async start(): Promise<Protocol2Machine> {
    const machine = await SimulatedMachine.spawn("v2");
    // The operator's own session, from a pairing link of the server (as T3's CLI would issue one).
    const link = ((await controlRequest(machine.controlUrl, "POST", `/envs/${machine.label}/pairing`, {})) as { pairingUrl: string }).pairingUrl;
    const token = await exchange(machine.baseUrl, link);
    return new Protocol2Machine(machine, new T3V2Operator({ baseUrl: machine.baseUrl, workDir: "/home/user", token }));
  }

  async createProject(title: string): Promise<string> {
    return this.operator.createProject(title);
  }

  async createThread(title: string, options: { provider?: Provider; runtimeMode?: "full-access" | "approval-required" } = {}): Promise<string> {
    this.projectId ??= await this.operator.createProject("Fleet project");
    return this.operator.createThread(this.projectId, title, options.runtimeMode ?? "full-access", options.provider ?? "codex");
  }

  /** `thread.fork` of the thread's latest run: lineage "fork". */
  createChild(sourceThreadId: string, title: string): Promise<string> {
    return this.operator.fork(sourceThreadId, title);
  }

  async send(threadId: string, text: string): Promise<void> {
    await this.operator.send(threadId, text);
  }

  async stored(threadId: string): Promise<StoredThread> {
    const projection = await this.operator.projection(threadId);
    const failure = projection.turnItems.findLast((item) => item.type === "error") as { failure?: { message?: string } } | undefined;
    const runs = [...projection.runs].sort((a, b) => a.ordinal - b.ordinal);
    return {
      messages: projection.messages.map((message) => ({ role: message.role, text: message.text, turnId: message.runId })),
      turns: runs.map((run) => run.id),
      lastTurnStatus: runs.at(-1)?.status ?? null,
      active: runs.some((run) => ["starting", "preparing", "running", "waiting"].includes(run.status)),
      failure: failure?.failure?.message ?? null,
      approvals: projection.runtimeRequests.map((request) => ({ settled: request.status !== "pending", decision: null })),
      commandRan: projection.turnItems.some((item) => item.type === "command_execution" && item.status === "completed"),
    };
  }

  async storedRow(threadId: string): Promise<StoredRow> {
    const row = (await this.operator.shell()).threads.find((thread) => thread.id === threadId);
    if (!row) throw new Error(`${threadId} is not in the shell`);
    return { snoozedUntil: (row.snoozedUntil as string | null | undefined) ?? null, lastError: row.lastError };
  }

  truth(alsoRead: Iterable<string> = []): Promise<ServerTruth> {
    return readProtocol2Truth(this.operator, this.environmentId, alsoRead);
  }

  override async stop(): Promise<void> {
    this.operator.close();
    await super.stop();
  }
}

/** A bearer for a pairing link (T3's token exchange, as a client pairs). */
async function exchange(baseUrl: string, link: string): Promise<string> {
  const parsed = parsePairingInput(link);
  if (!parsed.ok || !parsed.target.pairingToken) throw new Error(`not a pairing link: ${link}`);
  const form = new URLSearchParams({
    grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
    subject_token: parsed.target.pairingToken,
    subject_token_type: "urn:t3:params:oauth:token-type:environment-bootstrap",
    scope: FLEET_SCOPES.join(" "),
    client_label: "scenario operator",
  });
  const answer = await fetch(`${baseUrl}/oauth/token`, { method: "POST", body: form, signal: AbortSignal.timeout(15_000) });
  if (!answer.ok) throw new Error(`token exchange: HTTP ${answer.status}`);
  return ((await answer.json()) as { access_token: string }).access_token;
}

// The soak's machines behind one interface: simulated ones (here, one sim/cli.ts child process
// each, driven through its control API) and real T3 servers (bench/soak/real-machines.ts). The soak
// pairs each, churns its threads, faults it, sends its agents messages, and at the end asks the
// server itself, read-only, what arrived and which threads it lists.
import { simulatedThreadTruth } from "../../electron/fleet/t3/protocol1/truth-reader.testkit";
import { readProtocol2Truth } from "../../electron/fleet/t3/protocol2/truth-reader.testkit";
import type { ServerTruth } from "../../electron/fleet/truth-oracle.testkit";
import { T3V2Operator } from "../../sim/protocol2/operator.testkit";
import type { ServerThreadList } from "../../sim/soak-hooks";
import { type Child, endChild, exited, startTsx } from "./processes";
import type { MachineFault, Rng } from "./schedule";

export interface SoakMachine {
  label: string;
  /** What runs there: a simulated generation, or a real server ("T3 0.0.42"). */
  generation: string;
  protocol: 1 | 2;
  /** A real T3 server (slower turns and starts; its own message words). */
  readonly real: boolean;
  /** Where the fleet reaches it, to count connections left open at the end. */
  readonly ports: number[];
  environmentId: string;
  /** Why the machine is not answering now (a fault in progress), if it is not. */
  fault: string | null;
  /** Threads the soak created and has not deleted (churn deletes only its own). */
  created: string[];
  /** The faults it takes: a real server is not upgraded in place (the simulated machines cover that). */
  readonly faults: readonly MachineFault[];
  /** A fresh one-time pairing link for the fleet's `pair.confirm`. */
  pairingUrl(): Promise<string>;
  /** A new thread, as another T3 client (the server's own UI) would create it. */
  createThread(title: string): Promise<string>;
  /** Archives or deletes a thread as another T3 client would; T3's refusal (a run going) is thrown. */
  changeThread(threadId: string, change: "archive" | "delete"): Promise<void>;
  kill(): Promise<void>;
  /** Starts it again after `kill`, on the same port and data. */
  start(): Promise<void>;
  freeze(): void;
  thaw(): void;
  restart(): Promise<void>;
  blackhole(on: boolean): Promise<void>;
  upgrade(): Promise<void>;
  /** Whether the soak sends this thread's agent messages (a real server's are few: each real turn costs seconds of CPU). */
  takesMessages(threadId: string): boolean;
  /** A message carrying `tag`, in words this server's agents act on (simulator scripts, or the scripted model's). */
  messageText(tag: string, rng: Rng): string;
  /** Every user message's text per thread id, as the server stored it (read-only). */
  userMessages(): Promise<Record<string, string[]>>;
  /** The threads the server lists itself (read-only). */
  threadList(): Promise<ServerThreadList>;
  /** What it stored of those threads and of `alsoRead`, for the truth oracle (bench/soak/truth.ts); null where it cannot be read. */
  truth(alsoRead: Iterable<string>): Promise<ServerTruth | null>;
  stop(): Promise<void>;
}

/** One simulated machine (sim/cli.ts) in its own process, so SIGSTOP freezes exactly it. */
export class SimulatedMachine implements SoakMachine {
  readonly real = false;
  fault: string | null = null;
  created: string[] = [];
  readonly faults: readonly MachineFault[] = ["kill", "freeze", "blackhole", "restart", "upgrade"];

  private constructor(
    readonly label: string,
    public generation: "fork" | "upstream" | "v2",
    private readonly child: Child,
    private readonly controlUrl: string,
    readonly baseUrl: string,
    public environmentId: string,
  ) {}

  static async start(label: string, generation: "fork" | "upstream" | "v2", threads: number, tickMs: number): Promise<SimulatedMachine> {
    const { child, match } = await startTsx(
      "sim/cli.ts",
      ["--envs", generation, "--labels", label, "--threads", String(threads), "--tick", String(tickMs)],
      /Control API: (http:\/\/127\.0\.0\.1:\d+)\/envs/,
    );
    const controlUrl = match[1]!;
    const [described] = (await control(controlUrl, "GET", "/envs")) as { environmentId: string; baseUrl: string }[];
    return new SimulatedMachine(label, generation, child, controlUrl, described!.baseUrl, described!.environmentId);
  }

  get protocol(): 1 | 2 {
    return this.generation === "v2" ? 2 : 1;
  }

  get ports(): number[] {
    return [Number(new URL(this.baseUrl).port)];
  }

  control(method: "GET" | "POST", action: string, body?: unknown): Promise<unknown> {
    return control(this.controlUrl, method, `/envs/${encodeURIComponent(this.label)}/${action}`, body);
  }

  async pairingUrl(): Promise<string> {
    return ((await this.control("POST", "pairing", {})) as { pairingUrl: string }).pairingUrl;
  }

  async createThread(title: string): Promise<string> {
    return ((await this.control("POST", "threads", { title })) as { threadId: string }).threadId;
  }

  async changeThread(threadId: string, change: "archive" | "delete"): Promise<void> {
    await this.control("POST", `threads/${encodeURIComponent(threadId)}/${change}`, {});
  }

  async kill(): Promise<void> {
    await this.control("POST", "kill", {});
  }

  async start(): Promise<void> {
    await this.control("POST", "start", {});
  }

  freeze(): void {
    this.child.process.kill("SIGSTOP");
  }

  thaw(): void {
    this.child.process.kill("SIGCONT");
  }

  async restart(): Promise<void> {
    await this.control("POST", "restart", {});
  }

  async blackhole(on: boolean): Promise<void> {
    await this.control("POST", "blackhole", { on });
  }

  async upgrade(): Promise<void> {
    await this.control("POST", "upgrade", {});
    this.generation = "v2";
  }

  takesMessages(): boolean {
    return true;
  }

  /** The simulator's scripts (sim/): a slow turn, an approval, a question, a failure. */
  messageText(tag: string, rng: Rng): string {
    const words = [rng() < 0.35 ? "#slow" : "", rng() < 0.12 ? "#approval" : "", rng() < 0.08 ? "#input" : "", rng() < 0.06 ? "#fail" : ""].filter(Boolean);
    return `${tag} soak message ${words.join(" ")}`.trim();
  }

  async userMessages(): Promise<Record<string, string[]>> {
    return (await this.control("GET", "user-messages")) as Record<string, string[]>;
  }

  async threadList(): Promise<ServerThreadList> {
    return (await this.control("GET", "thread-list")) as ServerThreadList;
  }

  /** One thread's user messages as stored (id, time, text), to explain a count that is off; null where it cannot be read. */
  async storedUserMessages(threadId: string): Promise<{ id: string; createdAt: string; text: string }[] | null> {
    if (this.generation === "v2") return null;
    const detail = (await this.control("GET", `threads/${encodeURIComponent(threadId)}`)) as {
      messages?: { id: string; role: string; createdAt: string; text: string }[];
    } | null;
    return detail?.messages?.filter((message) => message.role === "user").map(({ id, createdAt, text }) => ({ id, createdAt, text })) ?? null;
  }

  /** What it stored, for the truth oracle: protocol 1 by each thread's read, protocol 2 over its own socket as T3's UI reads it. */
  async truth(alsoRead: Iterable<string>): Promise<ServerTruth | null> {
    if (this.generation === "v2") {
      const { token } = (await this.control("POST", "reader-token", {})) as { token: string };
      const operator = new T3V2Operator({ baseUrl: this.baseUrl, workDir: "/home/user", token });
      try {
        return await readProtocol2Truth(operator, this.environmentId, alsoRead);
      } finally {
        operator.close();
      }
    }
    const { live, archived } = await this.threadList();
    const threads = [];
    for (const threadId of new Set([...live, ...archived, ...alsoRead])) {
      const detail = (await this.control("GET", `threads/${encodeURIComponent(threadId)}`)) as Parameters<typeof simulatedThreadTruth>[1];
      threads.push(simulatedThreadTruth(threadId, detail, archived.includes(threadId)));
    }
    return { environmentId: this.environmentId, threads };
  }

  async stop(): Promise<void> {
    if (this.fault === "frozen") this.thaw();
    endChild(this.child, "SIGTERM");
    await exited(this.child);
  }
}

export async function control(controlUrl: string, method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${controlUrl}${path}`, {
    method,
    ...(body !== undefined && { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    signal: AbortSignal.timeout(30_000),
  });
  const value = (await response.json()) as unknown;
  if (!response.ok) throw new Error(`${method} ${path}: ${JSON.stringify(value)}`);
  return value;
}

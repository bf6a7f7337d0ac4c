// The soak's real machine (`--real`, issue 23): the released T3 0.0.42 (protocol 1) running the real
// Codex CLI against a scripted model server (integration/model), started with the real-server kit
// (integration/realt3) inside the private network namespace of scripts/realt3.sh. No released T3
// speaks protocol 2, so the soak's protocol-2 machines are simulated (bench/soak/machines.ts). The
// fleet reaches the real one through a proxy that can blackhole it; the soak's churn goes through
// T3's own dispatch API as T3's UI would send it, and its counts are read from what T3 stored. A real
// server is not upgraded in place: the simulated machines cover that.
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { SCRIPTED_MODEL } from "../../integration/harnesses/harness-env";
import { onlyLoopback } from "../../integration/harnesses/offline.testkit";
import { ScriptedModelServer } from "../../integration/model/scripted-model-server";
import { RELEASED_T3, RealT3Server, STRAY_MARKER } from "../../integration/realt3/harness.testkit";
import { T3Operator } from "../../integration/realt3/operator.testkit";
import { readT3Truth } from "../../integration/realt3/truth-reader.testkit";
import type { ServerTruth } from "../../electron/fleet/truth-oracle.testkit";
import { CountingProxy } from "../../integration/realt3/proxy.testkit";
import type { ServerThreadList } from "../../sim/soak-hooks";
import type { SoakMachine } from "./machines";
import type { MachineFault, Rng } from "./schedule";

/** Threads seeded on the real server; the soak's messages go to these alone (see takesMessages). */
const SEEDED_THREADS = 4;

/** T3's own API for threads and what it stored. */
interface ServerSide {
  createThread(title: string, runtimeMode: "full-access" | "approval-required"): Promise<string>;
  changeThread(threadId: string, change: "archive" | "delete"): Promise<void>;
  userMessages(threadIds: Iterable<string>): Promise<Record<string, string[]>>;
  threadList(): Promise<ServerThreadList>;
  /** What T3 stored of the threads its shell lists and of `alsoRead`, for the truth oracle. */
  truth(environmentId: string, alsoRead: Iterable<string>): Promise<ServerTruth>;
}

/** T3 0.0.42 over HTTP: the shell lists neither archived nor deleted threads, the full read model keeps both. */
async function releasedSide(server: RealT3Server): Promise<ServerSide> {
  const operator = await T3Operator.start(server);
  const token = await server.issueToken("soak read model");
  const projectId = await operator.createProject("soak");
  return {
    async createThread(title, runtimeMode) {
      const threadId = await operator.createThread(projectId, title, undefined, { instanceId: "codex", model: SCRIPTED_MODEL });
      if (runtimeMode !== "full-access") await operator.setRuntimeMode(threadId, runtimeMode);
      return threadId;
    },
    async changeThread(threadId, change) {
      await (change === "archive" ? operator.archive(threadId) : operator.delete(threadId));
    },
    async userMessages(threadIds) {
      const out: Record<string, string[]> = {};
      // 0.0.42 answers "not found" for an archived or deleted thread's messages: only live threads are read.
      for (const threadId of threadIds) {
        const thread = await operator.thread(threadId).catch(() => undefined);
        const texts = thread?.messages.filter((message) => message.role === "user").map((message) => message.text) ?? [];
        if (texts.length) out[threadId] = texts;
      }
      return out;
    },
    async truth(environmentId, alsoRead) {
      const listed = (await operator.shell()).threads.map((thread) => thread.id);
      return readT3Truth(operator, environmentId, [...listed, ...alsoRead]);
    },
    async threadList() {
      const response = await fetch(`${server.baseUrl}/api/orchestration/snapshot`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(15_000),
      });
      if (!response.ok) throw new Error(`GET /api/orchestration/snapshot: HTTP ${response.status} ${await response.text()}`);
      const { threads } = (await response.json()) as { threads: { id: string; archivedAt: string | null; deletedAt: string | null }[] };
      const live = threads.filter((thread) => !thread.deletedAt);
      return { live: live.map((thread) => thread.id), archived: live.filter((thread) => thread.archivedAt).map((thread) => thread.id) };
    },
  };
}

export class RealMachine implements SoakMachine {
  readonly real = true;
  fault: string | null = null;
  created: string[] = [];
  readonly faults: readonly MachineFault[] = ["kill", "freeze", "blackhole", "restart"];
  environmentId = "";
  private seeded = new Set<string>();
  private side: ServerSide | undefined;
  /** The proxy's, the server's and the model server's (read while they listen: they are counted after they stopped). */
  readonly ports: number[];

  private constructor(
    readonly label: string,
    private readonly server: RealT3Server,
    private readonly proxy: CountingProxy,
    model: ScriptedModelServer,
  ) {
    this.ports = [proxy.port, server.port, model.port];
  }

  static async start(label: string, model: ScriptedModelServer): Promise<RealMachine> {
    const server = await RealT3Server.start({ kind: RELEASED_T3, harnesses: { names: ["codex"], modelUrl: model.url } });
    live.add(server);
    const machine = new RealMachine(label, server, await CountingProxy.start(server.port), model);
    machine.environmentId = (await server.descriptor()).environmentId;
    machine.side = await releasedSide(server);
    for (let i = 0; i < SEEDED_THREADS; i++) {
      // One asks before it runs a command, so approvals come from a real harness too.
      machine.seeded.add(await machine.side.createThread(`Soak ${i + 1}`, i === 0 ? "approval-required" : "full-access"));
    }
    return machine;
  }

  get generation(): string {
    return this.server.kind.label;
  }

  get protocol(): 1 {
    return this.server.kind.protocol;
  }

  /** The link T3 mints, through the proxy (so the proxy can blackhole it). */
  async pairingUrl(): Promise<string> {
    return (await this.server.pairingLink()).url.replace(this.server.baseUrl, this.proxy.baseUrl);
  }

  createThread(title: string): Promise<string> {
    return this.side!.createThread(title, "full-access");
  }

  async changeThread(threadId: string, change: "archive" | "delete"): Promise<void> {
    await this.side!.changeThread(threadId, change);
  }

  kill(): Promise<void> {
    return this.server.kill();
  }

  start(): Promise<void> {
    return this.server.restart();
  }

  freeze(): void {
    this.server.freeze();
  }

  thaw(): void {
    this.server.thaw();
  }

  restart(): Promise<void> {
    return this.server.restart();
  }

  async blackhole(on: boolean): Promise<void> {
    this.proxy.blackhole(on);
  }

  upgrade(): Promise<void> {
    return Promise.reject(new Error(`${this.label} is a real server: it is not upgraded in place`));
  }

  /** The seeded threads only: every thread that runs a turn keeps a real `codex app-server` (and its CPU) for the run. */
  takesMessages(threadId: string): boolean {
    return this.seeded.has(threadId);
  }

  /** The scripted model's own words (integration/model/script.ts): a reply of ~8 s, a shell command, a refusal, or a plain reply. */
  messageText(tag: string, rng: Rng): string {
    const roll = rng();
    const words = roll < 0.3 ? "tell a slow story" : roll < 0.4 ? "run the approval command" : roll < 0.45 ? "this will fail" : "say hello";
    return `${tag} soak message: ${words}`;
  }

  async userMessages(): Promise<Record<string, string[]>> {
    return this.side!.userMessages((await this.threadList()).live);
  }

  threadList(): Promise<ServerThreadList> {
    return this.side!.threadList();
  }

  truth(alsoRead: Iterable<string>): Promise<ServerTruth> {
    return this.side!.truth(this.environmentId, alsoRead);
  }

  async stop(): Promise<void> {
    await this.proxy.close();
    await this.server.stop();
    live.delete(this.server);
  }
}

/** The real servers running now: killed with everything they started if the soak ends without stopping them. */
const live = new Set<RealT3Server>();
process.on("exit", () => {
  for (const server of live) {
    if (server.pid === undefined) continue;
    try {
      process.kill(server.pid, "SIGCONT");
      process.kill(server.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  for (const pid of strays([...live].map((server) => server.root))) process.kill(pid, "SIGKILL");
  for (const server of live) rmSync(server.root, { recursive: true, force: true });
});

/** Processes still carrying one of these servers' marker (T3, and the providers and monitors it started). */
export function strays(roots: string[]): number[] {
  const markers = roots.map((root) => `${STRAY_MARKER}=${root}\0`);
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let environ = "";
    try {
      environ = `${readFileSync(`/proc/${entry}/environ`, "utf8")}\0`;
    } catch {
      continue;
    }
    if (markers.some((marker) => environ.includes(marker))) found.push(Number(entry));
  }
  return found;
}

export interface RealFleet {
  machines: RealMachine[];
  /** What the scripted model answered the real Codex, by answer ("text", a tool, an error status): the turns really ran. */
  modelAnswers(): Record<string, number>;
  /** Process ids still carrying a stopped server's marker: must be none. */
  leftBehind(): number[];
  stop(): Promise<void>;
}

/** Ends the soak with a clear message unless it runs where only loopback is up (scripts/realt3.sh's namespace), as the real-server suites do. */
export async function refuseOutsideNamespace(): Promise<void> {
  if (await onlyLoopback()) return;
  console.error(
    "soak: --real runs the real T3 servers and the real Codex only inside a private network namespace with loopback alone; run it as `bash scripts/realt3.sh npx tsx bench/soak.ts --real …`",
  );
  process.exit(2);
}

/** Starts T3 0.0.42, seeded (inside the namespace: refuseOutsideNamespace). */
export async function startRealMachines(): Promise<RealFleet> {
  const model = await ScriptedModelServer.start();
  const started = await Promise.allSettled([RealMachine.start("real-t3", model)]);
  const machines = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const roots = [...live].map((server) => server.root);
  const stop = async () => {
    await Promise.all(machines.map((machine) => machine.stop()));
    await model.close();
  };
  const failed = started.find((result) => result.status === "rejected");
  if (failed) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  const modelAnswers = () => {
    const out: Record<string, number> = {};
    for (const request of model.requests) if (request.api !== null) out[request.answer] = (out[request.answer] ?? 0) + 1;
    return out;
  };
  return { machines, modelAnswers, leftBehind: () => strays(roots), stop };
}

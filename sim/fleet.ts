// Several simulated T3 servers in one process, seeded with projects and threads, plus a control API
// (library and HTTP) that tests, benchmarks and the demo use to script scenarios and inject faults.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { z } from "zod";
import { type TurnScript } from "./protocol1/turn-scripts";
import { PROVIDERS, type ProviderKind } from "./providers";
import type { Generation, ThreadState, WireSession } from "./protocol1/model";
import { SimServer, type SimServerOptions } from "./protocol1/server";
import { handleMachineControl } from "./machine-control";
import { handleV2Control, seedV2Environment } from "./protocol2/fleet-hooks";
import { upgradeToV2 } from "./upgrade";
import { V2SimServer } from "./protocol2/server";
import { changeThread, mergeMessages, threadList, userMessages } from "./soak-hooks";

const MACHINE_LABELS = ["studio-mac", "workstation", "build-box-1", "build-box-2", "laptop", "gpu-rig", "ci-runner", "nas", "pi-cluster", "spare"];
const PROVIDER_KINDS = Object.keys(PROVIDERS) as ProviderKind[];

export interface SeedOptions {
  /** Threads to create directly in the read model (parents, children and plain threads mixed). */
  threads: number;
  /** Every n-th thread is a parent with two children `sub.<parent>.workerN`. */
  parentEvery?: number;
}

/** Seeds a read model without events, as if the history predates the replay window. */
export function seedEnvironment(server: SimServer, options: SeedOptions): void {
  const engine = server.engine;
  const now = engine.now();
  const projectId = `project-${server.label}`;
  engine.seedProject({
    id: projectId,
    title: `${server.label} repo`,
    workspaceRoot: `/home/user/${server.label}`,
    repositoryIdentity: null,
    defaultModelSelection: null,
    scripts: [],
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  });
  const parentEvery = options.parentEvery ?? 10;
  let created = 0;
  for (let i = 0; created < options.threads; i++) {
    const provider = PROVIDER_KINDS[i % PROVIDER_KINDS.length]!;
    const id = `thread-${i}`;
    engine.seedThread(seedThread(id, projectId, `Task ${i}`, provider, now));
    created++;
    if (i % parentEvery === 0) {
      for (let k = 1; k <= 2 && created < options.threads; k++) {
        engine.seedThread(seedThread(`sub.${id}.worker${k}`, projectId, `Worker ${k} of task ${i}`, provider, now));
        created++;
      }
    }
  }
}

function seedThread(id: string, projectId: string, title: string, provider: ProviderKind, now: string): ThreadState {
  const session: WireSession = {
    threadId: id,
    status: "ready",
    providerName: provider,
    providerInstanceId: provider,
    runtimeMode: "full-access",
    activeTurnId: null,
    lastError: null,
    updatedAt: now,
  };
  return {
    id,
    projectId,
    title,
    modelSelection: { instanceId: provider, model: PROVIDERS[provider].model },
    runtimeMode: "full-access",
    interactionMode: "default",
    branch: null,
    worktreePath: null,
    latestTurn: null,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    deletedAt: null,
    messages: [],
    activities: [],
    session,
    pendingApprovals: new Set(),
    pendingUserInputs: new Set(),
    latestUserMessageAt: null,
  };
}

export interface SimFleetOptions {
  envs: number;
  /** Generation per environment; cycles when shorter than `envs`. Default alternates fork/upstream. */
  generations?: (Generation | "v2")[];
  tickMs?: number;
  seedThreads?: number;
  /** Environment overrides by index (labels, ids, ports). */
  overrides?: Partial<SimServerOptions>[];
}

export class SimFleet {
  private control: Server | undefined;
  controlUrl = "";
  /** User messages a machine held before its in-place upgrade (the upgrade imports threads, not messages). */
  private readonly messagesBeforeUpgrade = new Map<string, Record<string, string[]>>();

  private constructor(
    readonly servers: SimServer[],
    /** Protocol-2 machines (sim/protocol2), kept apart: they have another engine. */
    readonly v2Servers: V2SimServer[] = [],
  ) {}

  static async start(options: SimFleetOptions): Promise<SimFleet> {
    const generations = options.generations ?? ["upstream", "fork"];
    const servers: SimServer[] = [];
    const v2Servers: V2SimServer[] = [];
    for (let i = 0; i < options.envs; i++) {
      const generation = generations[i % generations.length]!;
      if (generation === "v2") {
        const override = options.overrides?.[i];
        const v2 = new V2SimServer({
          label: override?.label ?? MACHINE_LABELS[i] ?? `machine-${i + 1}`,
          ...(options.tickMs !== undefined && { tickMs: options.tickMs }),
          ...(override?.environmentId !== undefined && { environmentId: override.environmentId }),
          ...(override?.port !== undefined && { port: override.port }),
          // The fleet's V2 machines run a build that reports token figures (upstream #8144).
          reportsTokenUsage: true,
        });
        if (options.seedThreads) seedV2Environment(v2, { threads: options.seedThreads });
        v2Servers.push(await v2.start());
        continue;
      }
      const server = new SimServer({
        generation,
        label: MACHINE_LABELS[i] ?? `machine-${i + 1}`,
        ...(options.tickMs !== undefined && { tickMs: options.tickMs }),
        ...options.overrides?.[i],
      });
      if (options.seedThreads) seedEnvironment(server, { threads: options.seedThreads });
      servers.push(await server.start());
    }
    return new SimFleet(servers, v2Servers);
  }

  v2ById(environmentId: string): V2SimServer | undefined {
    return this.v2Servers.find((server) => server.environmentId === environmentId || server.label === environmentId);
  }

  /** Upgrades a protocol-1 machine in place to protocol 2 (same port, identity, sessions and thread ids). */
  async upgradeToV2(environmentId: string): Promise<V2SimServer> {
    const server = this.byId(environmentId);
    if (!server) throw new Error(`No protocol-1 machine ${environmentId}`);
    const upgraded = await upgradeToV2(server);
    this.messagesBeforeUpgrade.set(server.environmentId, mergeMessages(this.messagesBeforeUpgrade.get(server.environmentId), userMessages(server)));
    this.servers.splice(this.servers.indexOf(server), 1);
    this.v2Servers.push(upgraded);
    return upgraded;
  }

  byId(environmentId: string): SimServer | undefined {
    return this.servers.find((server) => server.environmentId === environmentId || server.label === environmentId);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.servers.map((server) => server.stop()), ...this.v2Servers.map((server) => server.stop())]);
    await new Promise<void>((resolve) => (this.control ? this.control.close(() => resolve()) : resolve()));
  }

  /** Creates a project if needed and a thread, optionally starting a turn (as another T3 client would). */
  createThread(
    server: SimServer,
    options: { threadId?: string; title: string; provider?: ProviderKind; text?: string; project?: { title: string; workspaceRoot: string } },
  ): string {
    const engine = server.engine;
    const now = engine.now();
    let projectId = options.project ? `project-${options.project.title}` : [...engine.projects.keys()][0];
    // A named project (the same repository checked out on several machines) is created on first use.
    if (options.project && !engine.projects.has(projectId!)) {
      engine.dispatch({
        type: "project.create",
        commandId: `sim:${randomUUID()}`,
        projectId: projectId!,
        title: options.project.title,
        workspaceRoot: options.project.workspaceRoot,
        createdAt: now,
      });
    }
    if (!projectId) {
      projectId = `project-${server.label}`;
      engine.dispatch({
        type: "project.create",
        commandId: `sim:${randomUUID()}`,
        projectId,
        title: `${server.label} repo`,
        workspaceRoot: `/home/user/${server.label}`,
        createdAt: now,
      });
    }
    const provider = options.provider ?? "codex";
    const threadId = options.threadId ?? `thread-${randomUUID().slice(0, 8)}`;
    engine.dispatch({
      type: "thread.create",
      commandId: `sim:${randomUUID()}`,
      threadId,
      projectId,
      title: options.title,
      modelSelection: { instanceId: provider, model: PROVIDERS[provider].model },
      runtimeMode: "full-access",
      interactionMode: "default",
      branch: null,
      worktreePath: null,
      createdAt: now,
    });
    if (options.text !== undefined) this.sendMessage(server, threadId, options.text);
    return threadId;
  }

  /** Starts a turn from outside the fleet client (the user typing in T3 itself). */
  sendMessage(server: SimServer, threadId: string, text: string): number {
    return server.engine.dispatch({
      type: "thread.turn.start",
      commandId: `sim:${randomUUID()}`,
      threadId,
      message: { messageId: `msg-${randomUUID()}`, role: "user", text, attachments: [] },
      runtimeMode: "full-access",
      interactionMode: "default",
      createdAt: server.engine.now(),
    });
  }

  spawnChild(server: SimServer, parentThreadId: string, suffix: string, text: string, provider?: ProviderKind): string {
    const parent = server.engine.threads.get(parentThreadId);
    if (!parent) throw new Error(`No thread ${parentThreadId} on ${server.label}`);
    return server.agents.spawnChild(parent, suffix, text, provider);
  }

  describe(): Record<string, unknown>[] {
    return [...this.servers, ...this.v2Servers].map((server) => ({
      environmentId: server.environmentId,
      label: server.label,
      generation: server.generation,
      serverVersion: server.serverVersion,
      baseUrl: server.baseUrl,
      running: server.running,
      threads: server.engine.threads.size,
    }));
  }

  /** Starts the HTTP control API on 127.0.0.1 (used by the CLI, the demo and end-to-end tests). */
  async listenControl(port = 0): Promise<string> {
    const server = createServer((req, res) => {
      this.handleControl(req, res).catch((error: unknown) => {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
      });
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
    const address = server.address();
    this.control = server;
    this.controlUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : port}`;
    return this.controlUrl;
  }

  private async handleControl(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body: unknown = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    const reply = (value: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(value ?? null));
    };
    if (parts[0] !== "envs") throw new Error("unknown control route");
    if (parts.length === 1) return reply(this.describe());
    const any = this.v2ById(parts[1]!) ?? this.byId(parts[1]!);
    if (any && parts[2] === "user-messages") return reply(mergeMessages(this.messagesBeforeUpgrade.get(any.environmentId), userMessages(any)));
    if (any && parts[2] === "thread-list") return reply(threadList(any));
    const common = any && handleMachineControl(any, parts[2], body);
    if (common) return reply(common.value);
    if (any && parts[2] === "threads" && parts[3] && (parts[4] === "archive" || parts[4] === "delete" || parts[4] === "rename")) {
      changeThread(any, parts[3], parts[4] === "rename" ? { title: z.object({ title: z.string() }).parse(body).title } : parts[4]);
      return reply({ ok: true });
    }
    const v2 = this.v2ById(parts[1]!);
    if (v2) return reply(await handleV2Control(v2, parts, body));
    const server = this.byId(parts[1]!);
    if (!server) throw new Error(`unknown environment ${parts[1]}`);
    const action = parts[2];
    if (action === "upgrade") {
      const upgraded = await this.upgradeToV2(server.environmentId);
      return reply({ ok: true, baseUrl: upgraded.baseUrl, generation: upgraded.generation });
    }
    switch (action) {
      case "pairing":
        return reply({ pairingUrl: server.pairingUrl(ControlPairing.parse(body)) });
      case "restart":
        await server.restart();
        return reply({ ok: true });
      case "kill":
        await server.kill();
        return reply({ ok: true });
      case "start":
        await server.start();
        server.agents.reconcileAfterRestart();
        return reply({ ok: true });
      case "blackhole":
        server.setBlackhole(z.object({ on: z.boolean() }).parse(body).on);
        return reply({ ok: true });
      case "clock":
        server.engine.clockOffsetMs = z.object({ offsetMs: z.number() }).parse(body).offsetMs;
        return reply({ ok: true });
      case "threads": {
        const threadId = parts[3];
        if (!threadId) {
          const input = ControlThread.parse(body);
          return reply({ threadId: this.createThread(server, input) });
        }
        if (parts[4] === "message") return reply({ sequence: this.sendMessage(server, threadId, z.object({ text: z.string() }).parse(body).text) });
        if (parts[4] === "children") {
          const input = ControlChild.parse(body);
          return reply({ threadId: this.spawnChild(server, threadId, input.suffix, input.text, input.provider) });
        }
        if (parts[4] === "release") return reply({ released: server.agents.release(threadId) });
        if (parts[4] === "script") {
          server.scriptNextTurn(threadId, body as TurnScript);
          return reply({ ok: true });
        }
        const thread = server.engine.threads.get(threadId);
        return reply(thread ? server.engine.threadDetail(thread) : null);
      }
    }
    throw new Error(`unknown action ${action}`);
  }
}

const ProviderKindSchema = z.enum(PROVIDER_KINDS as [ProviderKind, ...ProviderKind[]]);
const ControlPairing = z.object({ scopes: z.array(z.string()).optional(), ttlMs: z.number().optional() });
const ControlThread = z.object({
  threadId: z.string().optional(),
  title: z.string(),
  provider: ProviderKindSchema.optional(),
  text: z.string().optional(),
});
const ControlChild = z.object({ suffix: z.string(), text: z.string(), provider: ProviderKindSchema.optional() });

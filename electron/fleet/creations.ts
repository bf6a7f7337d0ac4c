// Starting an agent from the fleet, exactly once (issue 42; docs/architecture.md, "The fleet
// service"): a thread with a client-made id and command ids, created through the machine's protocol
// adapter (`create-thread`), then its first message (`send`, mode `start`), followed to the first
// reply; with a new project, that project first (`create-project`, again with a client-made id and
// command id). Each creation is journaled (delivery-journal.ts) before anything is dispatched. A create
// whose answer was lost is never sent again on its own: it is checked against T3 once the machine
// is heard in full again (the thread is there: carry on; it is not: "Try again", which re-sends the
// same command, so T3 deduplicates it and the thread is never made twice).
import { randomUUID } from "node:crypto";
import { z } from "zod";
import {
  CREATE_RUNTIME_MODES,
  type CreateChoices,
  type CreateRequest,
  type CreatedProject,
  type Creation,
  type LaunchOptions,
  type MachineChoice,
  checkCreate,
  creationSettled,
  machineUnavailable,
  newThreadId,
  parentCandidates,
  titleFromMessage,
} from "../../shared/fleet/creation";
import type { ThreadDetail } from "../../shared/fleet/facts";
import type { FleetModel } from "../../shared/fleet/model";
import { type AgentView, type EnvironmentView, agentKey } from "../../shared/fleet/types";
import { T3Error } from "../../shared/t3/errors";
import { BridgeError } from "./bridge-error";
import type { DeliveryJournal } from "./delivery-journal";
import type { ConnectionSupervisor } from "./supervisor";
import type { AgentCommand } from "./t3/adapter";
import type { ThreadFollowers } from "./threads";

/** A dispatch that has not answered in this long is "checking": the connection may be gone. */
export const CREATE_TIMEOUT_MS = 15_000;
/** How long the form's read of a machine's projects and harnesses may take. */
export const LAUNCH_READ_MS = 8_000;
/** Receipts of settled creations kept, in memory and across restarts. */
const SETTLED_KEPT = 50;

const LOST = "T3 did not answer before the connection dropped. T3 Fleet checks whether the thread exists once the machine is back; it is never created twice.";
const NOT_THERE = "T3 does not have the thread: it was not created. Try again sends the same request, which T3 can never carry out twice.";
const PROJECT_NOT_THERE = "T3 does not have the project: nothing was created. Try again sends the same request, which T3 can never carry out twice.";
const OFFLINE_MIDWAY = "The machine went offline mid-way; T3 Fleet checks where it stopped once the machine is back.";

const Record = z.object({
  creationId: z.string().min(1),
  environmentId: z.string().min(1),
  threadId: z.string().min(1),
  agentKey: z.string().min(1),
  parentThreadId: z.string().nullable(),
  projectId: z.string().min(1),
  // Absent in journals written before projects could be created.
  project: z
    .object({ title: z.string(), workspaceRoot: z.string(), createIfMissing: z.boolean(), commandId: z.string().min(1), confirmed: z.boolean() })
    .nullable()
    .default(null),
  instanceId: z.string().min(1),
  model: z.string(),
  runtimeMode: z.enum(CREATE_RUNTIME_MODES),
  title: z.string(),
  text: z.string(),
  createCommandId: z.string().min(1),
  sendCommandId: z.string().min(1),
  messageId: z.string().min(1),
  state: z.enum(["creating", "created", "started", "replied", "checking", "not-created", "failed"]),
  reason: z.string().nullable(),
  retry: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

interface Tracked {
  creation: Creation;
  /** T3 confirmed the thread (or showed it). */
  threadConfirmed: boolean;
  /** T3 confirmed the first message (or showed it). */
  messageConfirmed: boolean;
  /** When an answer was lost (ms): only a machine online since then can say the thread is not there. */
  lostAt: number | null;
  /** A dispatch is in flight. */
  busy: boolean;
}

export interface CreationDeps {
  model: FleetModel;
  runtime(environmentId: string): { followers: ThreadFollowers; supervisor: ConnectionSupervisor } | undefined;
  publish(creation: Creation): void;
  now(): number;
  journal?: Pick<DeliveryJournal, "saveCreations">;
  /** The dispatch bound (CREATE_TIMEOUT_MS; tests shorten it). */
  timeoutMs?: number;
}

export class Creations {
  private readonly creations = new Map<string, Tracked>();

  constructor(private readonly deps: CreationDeps) {}

  all(): Creation[] {
    return [...this.creations.values()].map((tracked) => tracked.creation);
  }

  get(creationId: string): Creation | undefined {
    return this.creations.get(creationId)?.creation;
  }

  /** Takes back the creations journaled before a restart: each one not settled is checked against T3. */
  restore(raw: unknown[]): void {
    for (const entry of raw) {
      const decoded = Record.safeParse(entry);
      if (!decoded.success || this.creations.has(decoded.data.creationId)) continue;
      const creation: Creation = decoded.data;
      const settled = creationSettled(creation);
      const tracked: Tracked = {
        creation: settled
          ? creation
          : { ...creation, state: "checking", reason: LOST.replace("before the connection dropped", "before T3 Fleet stopped"), retry: false },
        threadConfirmed: creation.state === "created" || creation.state === "started" || creation.state === "replied",
        messageConfirmed: creation.state === "started" || creation.state === "replied",
        lostAt: settled ? null : this.deps.now(),
        busy: false,
      };
      this.creations.set(creation.creationId, tracked);
    }
  }

  /** What the form offers: every paired machine (with why it cannot be chosen), and one machine's T3 lists. */
  async choices(environmentId: string | undefined): Promise<CreateChoices> {
    const machines = this.machines();
    const asked = environmentId ?? machines.find((machine) => !machine.unavailable)?.environmentId ?? null;
    const machine = machines.find((candidate) => candidate.environmentId === asked);
    if (!asked || !machine) return { machines, options: null, optionsFor: null, optionsError: null };
    if (machine.unavailable) return { machines, options: null, optionsFor: asked, optionsError: machine.unavailable };
    try {
      return { machines, options: await this.launchOptions(asked), optionsFor: asked, optionsError: null };
    } catch (error) {
      return { machines, options: null, optionsFor: asked, optionsError: `Could not read what ${machine.label} offers: ${T3Error.from(error).message}` };
    }
  }

  private machines(): MachineChoice[] {
    const agents = [...this.deps.model.agents()];
    return this.deps.model
      .environments()
      .map((env: EnvironmentView) => ({
        environmentId: env.environmentId,
        label: env.label,
        unavailable: machineUnavailable(env, true),
        parents: parentCandidates(agents, env.environmentId),
      }))
      .sort((a, b) => a.label.localeCompare(b.label));
  }

  private launchOptions(environmentId: string): Promise<LaunchOptions> {
    const connection = this.deps.runtime(environmentId)?.supervisor.activeConnection;
    if (!connection) return Promise.reject(new T3Error("network", "the machine is not connected."));
    return connection.launchOptions(LAUNCH_READ_MS);
  }

  /**
   * Starts an agent. Asked twice with one `creationId`, it creates once and answers the same
   * creation. Bad input, or a choice that vanished since the form opened, is refused before anything is sent.
   */
  async create(creationId: string, request: CreateRequest): Promise<Creation> {
    const existing = this.creations.get(creationId);
    if (existing) return existing.creation;
    const machine = this.machines().find((candidate) => candidate.environmentId === request.environmentId);
    if (!request.text.trim()) throw new BridgeError("invalid", "Write the first message: the agent starts with it.");
    if (!machine) throw new BridgeError("invalid", "This machine is no longer paired.");
    if (machine.unavailable) throw new BridgeError("invalid", machine.unavailable);
    let options: LaunchOptions;
    try {
      options = await this.launchOptions(request.environmentId);
    } catch (error) {
      throw new BridgeError("invalid", `Nothing was sent: ${machine.label} could not be asked what it offers (${T3Error.from(error).message}).`);
    }
    const problem = checkCreate(request, machine, options);
    if (problem) throw new BridgeError("invalid", problem);
    // Asked again while the checks ran: the first one creates.
    const raced = this.creations.get(creationId);
    if (raced) return raced.creation;
    const threadId = newThreadId(request.parentThreadId, randomUUID());
    const now = this.iso();
    const { newProject } = request;
    const project: CreatedProject | null = newProject
      ? {
          title: newProject.title.trim(),
          workspaceRoot: newProject.workspaceRoot.trim(),
          createIfMissing: newProject.createIfMissing,
          commandId: randomUUID(),
          confirmed: false,
        }
      : null;
    const creation: Creation = {
      creationId,
      environmentId: request.environmentId,
      threadId,
      agentKey: agentKey(request.environmentId, threadId),
      parentThreadId: request.parentThreadId,
      projectId: project ? `project-${randomUUID()}` : request.projectId,
      project,
      instanceId: request.instanceId,
      model: request.model,
      runtimeMode: request.runtimeMode,
      title: request.title.trim() || titleFromMessage(request.text),
      text: request.text,
      createCommandId: randomUUID(),
      sendCommandId: randomUUID(),
      messageId: `msg-${randomUUID()}`,
      state: "creating",
      reason: null,
      retry: false,
      createdAt: now,
      updatedAt: now,
    };
    const tracked: Tracked = { creation, threadConfirmed: false, messageConfirmed: false, lostAt: null, busy: false };
    this.creations.set(creationId, tracked);
    // Write-ahead: on disk before T3 can have it, so a restart (even a kill) cannot make it twice.
    try {
      await this.record();
    } catch (error) {
      this.creations.delete(creationId);
      throw new BridgeError("invalid", `${error instanceof Error ? error.message : String(error)} Nothing was sent.`);
    }
    this.deps.publish(creation);
    await this.advance(tracked);
    return tracked.creation;
  }

  /** "Try again" on a creation T3 does not have: the same commands again (never a second thread). */
  async retry(creationId: string): Promise<Creation> {
    const tracked = this.creations.get(creationId);
    if (!tracked) throw new BridgeError("not-found", "This creation is no longer tracked.");
    if (!tracked.creation.retry) return tracked.creation;
    const env = this.deps.model.environment(tracked.creation.environmentId);
    const unavailable = env ? machineUnavailable(env, true) : "This machine is no longer paired.";
    if (unavailable) throw new BridgeError("invalid", unavailable);
    this.update(tracked, { state: "creating", reason: null, retry: false });
    await this.advance(tracked);
    return tracked.creation;
  }

  /** The new project first (where there is one and T3 has not confirmed it), then the thread. */
  private async advance(tracked: Tracked): Promise<void> {
    if (tracked.creation.project?.confirmed === false && !(await this.createProject(tracked))) return;
    await this.createThread(tracked);
  }

  /** True once T3 has the project. */
  private async createProject(tracked: Tracked): Promise<boolean> {
    const { creation } = tracked;
    const project = creation.project!;
    const { title, workspaceRoot, createIfMissing, commandId } = project;
    const ok = await this.dispatch(tracked, { type: "create-project", commandId, projectId: creation.projectId, title, workspaceRoot, createIfMissing });
    if (ok === true) this.projectConfirmed(tracked);
    else if (ok) {
      // "Already exists": this project (T3 carried out a create whose answer was lost), or another one with that folder.
      if ((await this.projectListed(tracked)) === true) this.projectConfirmed(tracked);
      else {
        this.update(tracked, { state: "failed", reason: ok.refused, retry: false });
        this.settled(tracked);
      }
    }
    return tracked.creation.project?.confirmed === true;
  }

  private projectConfirmed(tracked: Tracked): void {
    const project = tracked.creation.project;
    if (project && !project.confirmed) this.update(tracked, { project: { ...project, confirmed: true } });
  }

  /** Whether the machine's T3 lists the creation's project now (undefined: it could not be read). */
  private async projectListed(tracked: Tracked): Promise<boolean | undefined> {
    const connection = this.deps.runtime(tracked.creation.environmentId)?.supervisor.activeConnection;
    try {
      return connection ? (await connection.launchOptions(LAUNCH_READ_MS)).projects.some((entry) => entry.id === tracked.creation.projectId) : undefined;
    } catch {
      return undefined;
    }
  }

  /** After a lost answer to the project's create: T3 lists it (carry on with the thread) or not ("Try again"). */
  private async checkProject(tracked: Tracked): Promise<void> {
    tracked.busy = true;
    let listed: boolean | undefined;
    try {
      listed = await this.projectListed(tracked);
    } finally {
      tracked.busy = false;
    }
    if (tracked.creation.state !== "checking" || listed === undefined) return;
    if (!listed) return this.update(tracked, { state: "not-created", reason: PROJECT_NOT_THERE, retry: true });
    this.projectConfirmed(tracked);
    this.update(tracked, { state: "creating", reason: null, retry: false });
    await this.createThread(tracked);
  }

  private async createThread(tracked: Tracked): Promise<void> {
    const { creation } = tracked;
    const command: AgentCommand = {
      type: "create-thread",
      commandId: creation.createCommandId,
      threadId: creation.threadId,
      projectId: creation.projectId,
      title: creation.title,
      instanceId: creation.instanceId,
      model: creation.model,
      runtimeMode: creation.runtimeMode,
    };
    // Refused as existing: T3 carried out this create already (its answer was lost); carry on.
    if (await this.dispatch(tracked, command)) return this.threadConfirmed(tracked);
  }

  /** T3 has the thread: follow it, and send the first message (again with the same ids, when unsure). */
  private async threadConfirmed(tracked: Tracked): Promise<void> {
    if (!tracked.threadConfirmed) {
      tracked.threadConfirmed = true;
      this.projectConfirmed(tracked);
      this.deps.runtime(tracked.creation.environmentId)?.followers.follow(tracked.creation.threadId, `creation:${tracked.creation.creationId}`);
    }
    if (tracked.busy) return;
    // Seen while its machine reconnects: carried on once it is online (environmentChanged).
    if (this.deps.model.environment(tracked.creation.environmentId)?.connection.phase !== "online") return;
    if (tracked.messageConfirmed) {
      if (tracked.creation.state === "checking") this.update(tracked, { state: "started", reason: null, retry: false });
      return;
    }
    this.update(tracked, { state: "created", reason: null, retry: false });
    const { creation } = tracked;
    const ok = await this.dispatch(tracked, {
      type: "send",
      commandId: creation.sendCommandId,
      threadId: creation.threadId,
      messageId: creation.messageId,
      text: creation.text,
      mode: "start",
      runId: null,
    });
    if (ok === true && !tracked.messageConfirmed) this.messageConfirmed(tracked);
  }

  private messageConfirmed(tracked: Tracked): void {
    tracked.messageConfirmed = true;
    if (tracked.creation.state !== "replied" && tracked.creation.state !== "failed") this.update(tracked, { state: "started", reason: null, retry: false });
  }

  /** True: T3 accepted it; `refused`: T3 says it already exists (in its words); false: refused (settled) or lost (checking). */
  private async dispatch(tracked: Tracked, command: AgentCommand): Promise<boolean | { refused: string }> {
    const connection = this.deps.runtime(tracked.creation.environmentId)?.supervisor.activeConnection;
    if (!connection) {
      this.lost(tracked, OFFLINE_MIDWAY);
      return false;
    }
    tracked.busy = true;
    try {
      await connection.execute(command, this.deps.timeoutMs ?? CREATE_TIMEOUT_MS);
      return true;
    } catch (error) {
      const failure = T3Error.from(error);
      if (failure.kind === "timeout" || failure.kind === "network" || failure.kind === "interrupted") {
        this.lost(tracked, LOST);
        // Still connected (T3 was slow, not gone): once it answers a ping, what it shows is current.
        void connection.probe(this.deps.timeoutMs ?? CREATE_TIMEOUT_MS).then(
          () => this.check(tracked, true),
          () => undefined,
        );
        return false;
      }
      // The thread or project is there already (a create T3 carried out whose answer was lost): the caller decides.
      if ((command.type === "create-thread" || command.type === "create-project") && /already (exists|registered)/i.test(failure.message))
        return { refused: failure.message.trim() };
      this.update(tracked, { state: "failed", reason: failure.message.trim() || "T3 refused it without saying why.", retry: false });
      this.settled(tracked);
      return false;
    } finally {
      tracked.busy = false;
    }
  }

  private lost(tracked: Tracked, reason: string): void {
    tracked.lostAt = this.deps.now();
    this.update(tracked, { state: "checking", reason, retry: false });
  }

  /**
   * Asks T3 (through what the machine's stream shows, once current) where a creation whose answer
   * was lost stands. `current`: the connection answered since the loss; else only a machine online
   * again since then is current.
   */
  private check(tracked: Tracked, current = false): void {
    const { creation } = tracked;
    if (creation.state !== "checking" || tracked.busy) return;
    const env = this.deps.model.environment(creation.environmentId);
    if (!env || env.connection.phase !== "online") return;
    if (!current && (tracked.lostAt === null || Date.parse(env.connection.since) < tracked.lostAt)) return;
    if (this.deps.model.agent(creation.agentKey)) {
      void this.threadConfirmed(tracked);
      return;
    }
    if (tracked.threadConfirmed) return; // the thread stream will tell; its row may trail it
    // The project's create was the one lost: the thread was never sent.
    if (creation.project?.confirmed === false) return void this.checkProject(tracked);
    this.update(tracked, { state: "not-created", reason: NOT_THERE, retry: true });
  }

  /** The fleet stream showed an agent: a creation waiting on it carries on, or ends where T3 says. */
  agentChanged(agent: AgentView): void {
    for (const tracked of this.creations.values()) {
      const { creation } = tracked;
      // "not-created" too: a thread T3 shows after all (its create was still under way) carries on.
      if (creation.agentKey !== agent.key || creation.state === "replied" || creation.state === "failed") continue;
      if (!tracked.threadConfirmed && !tracked.busy) {
        void this.threadConfirmed(tracked);
        continue;
      }
      if (agent.status === "failed" && tracked.messageConfirmed) {
        this.update(tracked, { state: "failed", reason: agent.reason ?? "T3 reports the run failed.", retry: false });
        this.settled(tracked);
      }
    }
  }

  /** A machine's connection changed: a creation in flight there says so, and is checked once it is back. */
  environmentChanged(env: EnvironmentView): void {
    for (const tracked of this.creations.values()) {
      if (tracked.creation.environmentId !== env.environmentId || creationSettled(tracked.creation)) continue;
      if (env.connection.phase === "online") this.check(tracked);
      else if (env.connection.phase !== "connecting" && tracked.creation.state !== "checking" && !tracked.busy) this.lost(tracked, OFFLINE_MIDWAY);
    }
  }

  /** A followed new thread changed: the first message seen, then the first reply. */
  threadChanged(environmentId: string, threadId: string, detail: ThreadDetail): void {
    for (const tracked of this.creations.values()) {
      const { creation } = tracked;
      if (creation.environmentId !== environmentId || creation.threadId !== threadId || creationSettled(creation) || !detail.loaded) continue;
      const messages = detail.items.flatMap((item) => (item.type === "message" ? [item] : []));
      const index = messages.findIndex((message) => message.id === creation.messageId);
      if (index === -1) {
        // In sync after a lost answer and the message is not there: send it again, same ids (T3 deduplicates).
        if (detail.synced && creation.state === "checking" && tracked.threadConfirmed && !tracked.busy) void this.threadConfirmed(tracked);
        continue;
      }
      if (!tracked.messageConfirmed || creation.state === "checking") this.messageConfirmed(tracked);
      const reply = messages.slice(index + 1).find((message) => message.role === "assistant" && message.text.trim() !== "");
      if (reply) {
        this.update(tracked, { state: "replied", reason: null, retry: false });
        this.settled(tracked);
      }
    }
  }

  private settled(tracked: Tracked): void {
    this.deps.runtime(tracked.creation.environmentId)?.followers.unfollow(tracked.creation.threadId, `creation:${tracked.creation.creationId}`);
    // Every agent change is checked against the creations: only the newest settled ones are kept.
    let excess = [...this.creations.values()].filter((entry) => creationSettled(entry.creation)).length - SETTLED_KEPT;
    for (const [creationId, entry] of this.creations) {
      if (excess <= 0) break;
      if (entry !== tracked && creationSettled(entry.creation)) {
        this.creations.delete(creationId);
        excess--;
      }
    }
  }

  /** Follows the threads of restored creations (their machines' runtimes exist now). */
  followRestored(): void {
    for (const tracked of this.creations.values()) {
      if (creationSettled(tracked.creation) || !tracked.threadConfirmed) continue;
      this.deps.runtime(tracked.creation.environmentId)?.followers.follow(tracked.creation.threadId, `creation:${tracked.creation.creationId}`);
    }
  }

  private update(tracked: Tracked, patch: Partial<Creation>): void {
    tracked.creation = { ...tracked.creation, ...patch, updatedAt: this.iso() };
    this.deps.publish(tracked.creation);
    void this.record().catch(() => undefined);
  }

  private readonly journalRecords = (): Creation[] => {
    const all = this.all();
    const settled = all.filter(creationSettled).slice(-SETTLED_KEPT);
    const kept = new Set(settled);
    return all.filter((creation) => !creationSettled(creation) || kept.has(creation));
  };

  private record(): Promise<void> {
    return this.deps.journal?.saveCreations(this.journalRecords) ?? Promise.resolve();
  }

  private iso(): string {
    return new Date(this.deps.now()).toISOString();
  }
}

// Starting an agent from the fleet (issue 42): what the "New agent" form may offer on each machine,
// the checks a request passes before anything is sent, and the creation's receipt. Pure and
// protocol-neutral: the adapters say what a machine's T3 lists (electron/fleet/t3/adapter.ts
// `LaunchOptions`); electron/fleet/creations.ts carries a creation out exactly once.
import type { AgentView, EnvironmentView } from "./types";

/** The runtime modes the form offers, in T3's names; the safer one first (the default). */
export const CREATE_RUNTIME_MODES = ["approval-required", "full-access"] as const;
export type CreateRuntimeMode = (typeof CREATE_RUNTIME_MODES)[number];
export const RUNTIME_MODE_WORDS: Record<CreateRuntimeMode, string> = {
  "approval-required": "Ask before commands and edits (approval-required)",
  "full-access": "Full access (full-access)",
};

/** A project as the machine's T3 lists it. */
export interface LaunchProject {
  id: string;
  title: string;
  workspaceRoot: string | null;
}

export interface LaunchModel {
  slug: string;
  name: string;
}

/** A harness as `server.getConfig` reports it; `unavailable` says why it cannot be chosen (null: it can). */
export interface LaunchProvider {
  instanceId: string;
  driver: string;
  name: string;
  status: string;
  models: LaunchModel[];
  unavailable: string | null;
}

/** What one machine's T3 lists for a new thread, read when the form asks. */
export interface LaunchOptions {
  projects: LaunchProject[];
  providers: LaunchProvider[];
  /** Why a project cannot be created from the fleet on this machine; null: the form offers "New project…". */
  projectCreation: string | null;
}

/**
 * What T3 does with a new project's folder (T3 0.0.42 and the V2 engine, `project.create`'s
 * `createWorkspaceRootIfMissing`): it resolves the path on its own machine (`~` is that machine's
 * home), creates the folder only when asked to, and otherwise refuses a folder that does not exist.
 */
export const PROJECT_FOLDER_WORDS =
  "A folder on that machine, as an absolute path (~ is its home). T3 creates it if you tick the box; otherwise it must exist there, and T3 refuses it if not.";

/** A project the form asks T3 to create before the agent's thread. */
export interface NewProject {
  title: string;
  workspaceRoot: string;
  /** T3 creates the folder when it is missing (`createWorkspaceRootIfMissing`); else it must exist. */
  createIfMissing: boolean;
}

/** The longest folder path the form sends. */
export const FOLDER_MAX_CHARS = 4_096;

/** Whether a folder path is absolute as T3 reads it on its machine (packages/shared/src/path.ts: POSIX, `~`, a drive or UNC). */
export function absoluteFolder(path: string): boolean {
  return path.startsWith("/") || path === "~" || path.startsWith("~/") || /^[a-zA-Z]:[/\\]/.test(path) || path.startsWith("\\\\");
}

/** A folder as T3 compares two projects' folders: trimmed, without trailing separators, a Windows path in lower case. */
export function comparableFolder(path: string): string {
  const trimmed = path.trim();
  const bare = trimmed === "/" || /^[a-zA-Z]:[/\\]$/.test(trimmed) ? trimmed : trimmed.replace(/[/\\]+$/, "") || trimmed;
  return /^[a-zA-Z]:/.test(bare) || bare.startsWith("\\\\") ? bare.replaceAll("/", "\\").toLowerCase() : bare;
}

/** Why a new project cannot be sent as asked, in words; null when it can. */
export function checkNewProject(project: NewProject, listed: LaunchProject[]): string | null {
  const title = project.title.trim();
  const folder = project.workspaceRoot.trim();
  if (!title) return "Name the new project.";
  if (!folder) return "Give the new project's folder on that machine.";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(folder)) return "The folder path has a control character in it.";
  if (folder.length > FOLDER_MAX_CHARS) return `The folder path is longer than ${FOLDER_MAX_CHARS.toLocaleString("en")} characters.`;
  if (!absoluteFolder(folder)) return `The folder must be an absolute path on that machine (starting with / or ~), not "${folder}".`;
  const same = listed.find((entry) => entry.workspaceRoot !== null && comparableFolder(entry.workspaceRoot) === comparableFolder(folder));
  if (same) return `${same.title} already uses that folder on this machine: choose it instead.`;
  return null;
}

/** A paired machine in the form: `unavailable` says why it cannot be chosen now (null: it can). */
export interface MachineChoice {
  environmentId: string;
  label: string;
  unavailable: string | null;
  /** Active agents on the machine a new agent may be a child of. */
  parents: { threadId: string; title: string }[];
}

export interface CreateChoices {
  machines: MachineChoice[];
  /** The asked machine's T3 lists (null: none asked, or it could not be read: `optionsError` says why). */
  options: LaunchOptions | null;
  optionsFor: string | null;
  optionsError: string | null;
}

/** Why a machine cannot take a new agent now, in words; null when it can. `when` words a time (the window: its clock time). */
export function machineUnavailable(env: EnvironmentView, canCreate: boolean, when: (iso: string) => string = (iso) => iso): string | null {
  const { connection } = env;
  if (env.readOnly) return `The pairing with ${env.label} is read-only: T3 gave no permission to operate.`;
  if (!canCreate) return `${env.label}'s T3 has no command to create threads.`;
  switch (connection.phase) {
    case "online":
      return null;
    case "connecting":
      return `${env.label} is still connecting.`;
    case "unauthorized":
      return `${env.label} no longer accepts this pairing. Pair it again.`;
    case "incompatible":
      return `${env.label} cannot be used: ${connection.error}`;
    default:
      return connection.lastConfirmedAt ? `${env.label} is offline, last seen ${when(connection.lastConfirmedAt)}.` : `${env.label} is offline.`;
  }
}

/** Agents a new agent may be started under: active on that machine, not ended (archived, deleted). */
export function parentCandidates(agents: Iterable<AgentView>, environmentId: string): { threadId: string; title: string }[] {
  const parents: { threadId: string; title: string }[] = [];
  for (const agent of agents) {
    if (agent.environmentId !== environmentId || agent.lifecycle !== "active") continue;
    parents.push({ threadId: agent.threadId, title: agent.title });
  }
  return parents.sort((a, b) => a.title.localeCompare(b.title));
}

/** Why a provider cannot be chosen, from what T3 reports; null when it can. */
export function providerUnavailable(provider: {
  enabled: boolean;
  installed: boolean;
  status: string;
  message: string | null;
  models: unknown[];
}): string | null {
  if (!provider.enabled) return "Disabled in T3's settings.";
  if (!provider.installed) return provider.message ?? "Not installed on this machine.";
  if (provider.status === "error" || provider.status === "disabled") return provider.message ?? `T3 reports it ${provider.status}.`;
  if (provider.models.length === 0) return "T3 lists no models for it.";
  return null;
}

/** A title derived from the first message when the user left it empty: its first line, cut at a word. */
export function titleFromMessage(text: string, limit = 60): string {
  const line = text.trim().split(/\r?\n/, 1)[0]!.replace(/\s+/g, " ").trim();
  if (line.length <= limit) return line || "New agent";
  const cut = line.slice(0, limit);
  const space = cut.lastIndexOf(" ");
  return `${(space > limit / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The new thread's id: a child keeps T3's child convention so both T3 and the fleet show it under its parent. */
export function newThreadId(parentThreadId: string | null, suffix: string): string {
  return parentThreadId ? `sub.${parentThreadId}.${suffix}` : `thread-${suffix}`;
}

export interface CreateRequest {
  environmentId: string;
  /** A project the machine lists; ignored when `newProject` is given. */
  projectId: string;
  /** A project created first, on that machine, with the fleet's own id (null or absent: `projectId`). */
  newProject?: NewProject | null;
  instanceId: string;
  model: string;
  runtimeMode: CreateRuntimeMode;
  parentThreadId: string | null;
  title: string;
  text: string;
}

/**
 * Checks a request against what the machine lists now (the form may have been open a while). The
 * first problem, in words, or null: then it may be sent.
 */
export function checkCreate(request: CreateRequest, machine: MachineChoice | undefined, options: LaunchOptions): string | null {
  if (!request.text.trim()) return "Write the first message: the agent starts with it.";
  if (!machine) return "This machine is no longer paired.";
  if (machine.unavailable) return machine.unavailable;
  if (request.newProject) {
    if (options.projectCreation !== null) return options.projectCreation;
    const problem = checkNewProject(request.newProject, options.projects);
    if (problem) return problem;
  } else if (!request.projectId) return "Choose a project, or New project….";
  else if (!options.projects.some((project) => project.id === request.projectId)) return "That project is no longer on this machine: choose another.";
  const provider = options.providers.find((candidate) => candidate.instanceId === request.instanceId);
  if (!provider) return "That harness is no longer offered by this machine's T3: choose another.";
  if (provider.unavailable) return `${provider.name} cannot be used: ${provider.unavailable}`;
  if (!provider.models.some((model) => model.slug === request.model)) return `${provider.name} no longer lists the model ${request.model}: choose another.`;
  if (request.parentThreadId && !machine.parents.some((parent) => parent.threadId === request.parentThreadId))
    return "The parent agent has ended or left this machine: choose another parent, or none.";
  return null;
}

/**
 * A creation's receipt: `creating` (T3 not yet confirmed the thread), `created`, `started` (T3 has
 * the first message), `replied`; or where it stopped: `checking` (the answer was lost: T3 is asked
 * whether the thread exists), `not-created` (T3 has no such thread: "Try again" is offered and
 * sends the same command, so it is never created twice), `failed` (T3's words).
 */
export type CreationState = "creating" | "created" | "started" | "replied" | "checking" | "not-created" | "failed";

export interface Creation {
  /** Made by the form: asking twice with it creates once. */
  creationId: string;
  environmentId: string;
  threadId: string;
  agentKey: string;
  parentThreadId: string | null;
  projectId: string;
  /** The project created first (its id is `projectId`, made by the fleet), or null for a listed one. */
  project: CreatedProject | null;
  instanceId: string;
  model: string;
  runtimeMode: CreateRuntimeMode;
  title: string;
  text: string;
  createCommandId: string;
  sendCommandId: string;
  messageId: string;
  state: CreationState;
  /** Why it stopped or waits, in T3's words where T3 gave them. */
  reason: string | null;
  /** "Try again" is offered (it re-sends the same commands). */
  retry: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A new project of a creation: what was asked, and the command id its create is sent (and re-sent) with. */
export interface CreatedProject extends NewProject {
  commandId: string;
  /** T3 confirmed the project (or lists it). */
  confirmed: boolean;
}

/** The receipt's line: each step reached, then where it stopped. */
export function creationWords(creation: Pick<Creation, "state" | "reason"> & { project?: CreatedProject | null }): string {
  const steps: Record<CreationState, string> = {
    creating: creation.project && !creation.project.confirmed ? `creating the project ${creation.project.title}…` : "creating…",
    created: "created → starting…",
    started: "created → started → waiting for the reply…",
    replied: "created → started → replied",
    checking: "checking with T3 whether it was created…",
    "not-created": "not created",
    failed: "stopped",
  };
  return creation.reason ? `${steps[creation.state]}: ${creation.reason}` : steps[creation.state];
}

/** Whether nothing more will happen to a creation on its own. */
export function creationSettled(creation: Pick<Creation, "state">): boolean {
  return creation.state === "replied" || creation.state === "failed" || creation.state === "not-created";
}

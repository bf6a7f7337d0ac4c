// Seeding a simulated protocol-2 engine (sim/protocol2/engine.ts): projects, threads with their
// lineage, and forks, as T3's real V2 engine creates them.
import { PROVIDERS } from "../providers";
import type { EngineCore, ThreadSeed, ThreadState } from "./engine-types";
import * as ids from "./ids";
import type { ProjectShell } from "./model";

const projectDefaults = () => ({
  repositoryIdentity: null,
  defaultModelSelection: null,
  defaultThreadEnvMode: null,
  faviconPath: null,
  scripts: [] as unknown[],
});

export function addProject(engine: EngineCore, project: Pick<ProjectShell, "id" | "title" | "workspaceRoot"> & Partial<ProjectShell>): ProjectShell {
  const now = engine.now();
  const row: ProjectShell = { ...projectDefaults(), ...project, createdAt: project.createdAt ?? now, updatedAt: project.updatedAt ?? now };
  engine.projects.set(row.id, row);
  engine.emit("project", { sequence: ++engine.sequence, project: row });
  return row;
}

export function createThread(engine: EngineCore, options: ThreadSeed): ThreadState {
  const provider = options.provider ?? "codex";
  const id = options.threadId ?? `thread-${ids.shortId()}`;
  const now = options.createdAt ?? engine.now();
  const parent = options.parent ? engine.threads.get(options.parent.threadId) : undefined;
  const state: ThreadState = {
    provider,
    location: "active",
    runs: [],
    items: [],
    requests: [],
    subagents: [],
    sessions: [],
    messages: [],
    attempts: [],
    nodes: [],
    providerThreads: [],
    providerTurns: [],
    checkpointScopes: [],
    checkpoints: [],
    pendingBackgroundTasks: [],
    thread: {
      createdBy: options.createdBy ?? "user",
      creationSource: options.creationSource ?? "web",
      id,
      projectId: options.projectId,
      title: options.title,
      providerInstanceId: provider,
      modelSelection: { instanceId: provider, model: options.model ?? PROVIDERS[provider].model },
      runtimeMode: options.runtimeMode ?? "full-access",
      interactionMode: "default",
      branch: null,
      worktreePath: null,
      activeProviderThreadId: null,
      ...(options.historyOrigin && { historyOrigin: options.historyOrigin }),
      lineage: {
        parentThreadId: parent ? parent.thread.id : null,
        relationshipToParent: parent ? options.parent!.relationship : null,
        rootThreadId: parent ? parent.thread.lineage.rootThreadId : id,
      },
      forkedFrom: null,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      settledOverride: null,
      settledAt: null,
      snoozedUntil: null,
      snoozedAt: null,
      lastVisitedAt: null,
      deletedAt: null,
    },
  };
  engine.threads.set(id, state);
  if (options.emit !== false) {
    engine.putThread(state, "thread.created");
    engine.emit("enrichment");
  }
  return state;
}

/** A fork of `sourceThreadId` (what `thread.fork` does): lineage "fork". */
export function forkThread(engine: EngineCore, sourceThreadId: string, title: string, targetThreadId?: string): ThreadState {
  const source = engine.requireThread(sourceThreadId, "thread.fork", "sim");
  const state = createThread(engine, {
    ...(targetThreadId && { threadId: targetThreadId }),
    projectId: source.thread.projectId,
    title,
    provider: source.provider,
    parent: { threadId: source.thread.id, relationship: "fork" },
    emit: false,
  });
  const latest = source.runs.at(-1);
  if (latest) state.thread.forkedFrom = { type: "run", threadId: source.thread.id, runId: latest.id };
  engine.putThread(state, "thread.created");
  return state;
}

// What sim/fleet.ts needs for protocol-2 machines: seeding, the control API's actions, and the
// in-place upgrade of a protocol-1 machine. Kept here so the protocol-1 fleet file gains only hooks.
import { z } from "zod";
import { PROVIDERS, type ProviderKind } from "../providers";
import type { AgentStep } from "./engine";
import type { V2SimServer } from "./server";

const PROVIDER_KINDS = Object.keys(PROVIDERS) as ProviderKind[];

/** Seeds projects and threads (every `parentEvery`-th thread has two app-owned subagent children and a fork). */
export function seedV2Environment(server: V2SimServer, options: { threads: number; parentEvery?: number }): void {
  const engine = server.engine;
  const projectId = `project-${server.label}`;
  if (!engine.projects.has(projectId))
    engine.addProject({ id: projectId, title: `${server.label} repo`, workspaceRoot: `/home/user/${server.label}`, defaultModelSelection: null, scripts: [] });
  const parentEvery = options.parentEvery ?? 10;
  let created = 0;
  for (let i = 0; created < options.threads; i++) {
    const provider = PROVIDER_KINDS[i % PROVIDER_KINDS.length]!;
    const parent = engine.createThread({ threadId: `thread-${i}`, projectId, title: `Task ${i}`, provider, emit: false });
    created++;
    if (i % parentEvery !== 0) continue;
    for (let k = 1; k <= 2 && created < options.threads; k++) {
      engine.createThread({
        threadId: `thread-${i}-worker${k}`,
        projectId,
        title: `Worker ${k} of task ${i}`,
        provider,
        parent: { threadId: parent.thread.id, relationship: "subagent" },
        createdBy: "agent",
        creationSource: "mcp",
        emit: false,
      });
      created++;
    }
  }
}

export function createV2Thread(server: V2SimServer, options: { threadId?: string; title: string; provider?: ProviderKind; text?: string }): string {
  const projectId =
    [...server.engine.projects.keys()][0] ??
    server.engine.addProject({
      id: `project-${server.label}`,
      title: `${server.label} repo`,
      workspaceRoot: `/home/user/${server.label}`,
      defaultModelSelection: null,
      scripts: [],
    }).id;
  const state = server.engine.createThread({
    ...(options.threadId && { threadId: options.threadId }),
    projectId,
    title: options.title,
    provider: options.provider ?? "codex",
  });
  if (options.text !== undefined) sendV2Message(server, state.thread.id, options.text);
  return state.thread.id;
}

/** A message typed into T3 itself (not through the fleet): queued after the active run, if any. */
export function sendV2Message(server: V2SimServer, threadId: string, text: string): number {
  const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  return server.engine.dispatch({
    type: "message.dispatch",
    createdBy: "user",
    creationSource: "web",
    commandId: `sim:${id}`,
    threadId,
    messageId: `msg-${id}`,
    text,
    attachments: [],
    dispatchMode: { type: "queue_after_active" },
  });
}

const ControlThread = z.object({
  threadId: z.string().optional(),
  title: z.string(),
  provider: z.enum(PROVIDER_KINDS as [ProviderKind, ...ProviderKind[]]).optional(),
  text: z.string().optional(),
});

/** The control API's actions on a protocol-2 machine (the same routes as protocol-1 machines where they apply). */
export async function handleV2Control(server: V2SimServer, parts: string[], body: unknown): Promise<unknown> {
  const action = parts[2];
  switch (action) {
    case "pairing":
      return { pairingUrl: server.pairingUrl(z.object({ scopes: z.array(z.string()).optional(), ttlMs: z.number().optional() }).parse(body)) };
    case "restart":
      await server.restart();
      return { ok: true };
    case "kill":
      await server.kill();
      return { ok: true };
    case "start":
      await server.start();
      server.engine.reconcileAfterRestart();
      return { ok: true };
    case "blackhole":
      server.setBlackhole(z.object({ on: z.boolean() }).parse(body).on);
      return { ok: true };
    case "clock":
      server.engine.clockOffsetMs = z.object({ offsetMs: z.number() }).parse(body).offsetMs;
      return { ok: true };
    case "threads": {
      const threadId = parts[3];
      if (!threadId) return { threadId: createV2Thread(server, ControlThread.parse(body)) };
      if (parts[4] === "message") return { sequence: sendV2Message(server, threadId, z.object({ text: z.string() }).parse(body).text) };
      if (parts[4] === "release") return { released: server.engine.release(threadId) };
      if (parts[4] === "fork") return { threadId: server.engine.fork(threadId, z.object({ title: z.string() }).parse(body).title).thread.id };
      if (parts[4] === "script") {
        server.scriptNextRun(threadId, body as AgentStep[]);
        return { ok: true };
      }
      const state = server.engine.threads.get(threadId);
      return state ? server.engine.projection(state) : null;
    }
  }
  throw new Error(`unknown action ${action}`);
}

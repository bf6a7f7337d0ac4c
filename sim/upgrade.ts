// A simulated machine upgraded in place from protocol 1 to protocol 2, as T3 is on a machine that
// updates past its protocol-2 cutover: the one place that knows both protocols' simulators.
import type { SimServer } from "./protocol1/server";
import type { ProviderKind } from "./providers";
import { V2SimServer, type V2SimServerOptions } from "./protocol2/server";

/**
 * Replaces a running protocol-1 simulator with a protocol-2 one on the same port: same
 * environmentId, label and sessions, the same thread ids (imported with historyOrigin
 * "v1_import") with their user and assistant messages, and a fresh event sequence that starts
 * below the old one (docs/t3-protocols.md, "Protocol 2"): what T3 does on its first launch on protocol 2.
 */
export async function upgradeInPlace(previous: SimServer, options: Pick<V2SimServerOptions, "tickMs" | "serverVersion"> = {}): Promise<V2SimServer> {
  const port = Number(new URL(previous.baseUrl).port);
  await previous.stop(true);
  const server = new V2SimServer({ ...options, port, environmentId: previous.environmentId, label: previous.label, auth: previous.auth, firstSequence: 0 });
  const engine = server.engine;
  for (const project of previous.engine.projects.values()) {
    if (project.deletedAt) continue;
    engine.addProject({ id: project.id, title: project.title, workspaceRoot: project.workspaceRoot, defaultModelSelection: null, scripts: [] });
  }
  for (const thread of previous.engine.threads.values()) {
    if (thread.deletedAt || !engine.projects.has(thread.projectId)) continue;
    const provider = thread.modelSelection.instanceId as ProviderKind;
    const state = engine.createThread({
      threadId: thread.id,
      projectId: thread.projectId,
      title: thread.title,
      provider,
      historyOrigin: "v1_import",
      createdAt: thread.createdAt,
      emit: false,
    });
    if (thread.archivedAt) {
      state.location = "archive";
      state.thread.archivedAt = thread.archivedAt;
    }
    // T3's import keeps the user and assistant messages with their ids, text, times and order; a
    // streaming one ends interrupted. Not activities, approvals, checkpoints nor command receipts.
    for (const message of thread.messages) {
      if (message.role === "system") continue;
      const user = message.role === "user";
      state.messages.push({
        id: message.id,
        threadId: thread.id,
        runId: null,
        nodeId: null,
        role: message.role,
        text: message.text,
        attachments: [],
        streaming: false,
        createdBy: user ? "user" : "agent",
        creationSource: user ? "web" : "provider",
        createdAt: message.createdAt,
        updatedAt: message.updatedAt,
      });
    }
  }
  return server.start();
}

/** The same with the simulators' tick (sim/fleet.ts). */
export function upgradeToV2(server: SimServer, tickMs?: number): Promise<V2SimServer> {
  return upgradeInPlace(server, { ...(tickMs !== undefined && { tickMs }) });
}

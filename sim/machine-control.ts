// The control API's actions that are the same on both protocols' simulated machines (sim/fleet.ts):
// the sessions a machine holds and revoking one of them, the requests it was sent, a read-only token, and a project
// created as another T3 client would. Tests use them to check what the server saw, not what a client
// says. Also the control API's one client call, for whoever drives a machine in another process.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { SimServer } from "./protocol1/server";
import type { V2SimServer } from "./protocol2/server";

const Revoke = z.object({ sessionId: z.string().optional() });
const Project = z.object({ title: z.string().min(1) });

/** Answers `GET sessions`, `POST revoke`, `GET requests`, `POST reader-token` and `POST projects`; undefined for any other action. */
export function handleMachineControl(server: SimServer | V2SimServer, action: string | undefined, body: unknown): { value: unknown } | undefined {
  switch (action) {
    case "sessions":
      // Ids and labels only: a bearer never leaves the machine.
      return { value: server.auth.activeSessions.map((session) => ({ sessionId: session.sessionId, label: session.label })) };
    case "revoke": {
      // One session by id (another client's stay valid), or every session.
      const { sessionId } = Revoke.parse(body ?? {});
      if (sessionId === undefined) return { value: { revoked: server.auth.revoke() } };
      const session = server.auth.activeSessions.find((entry) => entry.sessionId === sessionId);
      return { value: { revoked: session ? server.auth.revoke(session.token) : 0 } };
    }
    case "requests":
      return { value: server.requestLog };
    case "reader-token":
      // A read-only session for a reader in another process (the soak's truth oracle), as T3 issues its own UI one.
      return { value: { token: server.auth.issueSession({ scopes: ["orchestration:read"], role: "client", label: "truth reader" }).token } };
    case "projects":
      return { value: { projectId: createProject(server, Project.parse(body).title) } };
  }
  return undefined;
}

function createProject(server: SimServer | V2SimServer, title: string): string {
  const projectId = `project-${randomUUID().slice(0, 8)}`;
  const commandId = `sim:${randomUUID()}`;
  const workspaceRoot = `/home/user/${title.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}`;
  if (server.generation === "v2") server.engine.createProject({ commandId, projectId, title, workspaceRoot });
  else server.engine.dispatch({ type: "project.create", commandId, projectId, title, workspaceRoot, createdAt: server.engine.now() });
  return projectId;
}

/** One call of a control API (`sim/cli.ts` prints its URL); a refusal is thrown with the API's words. */
export async function controlRequest(controlUrl: string, method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${controlUrl}${path}`, {
    method,
    ...(body !== undefined && { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    signal: AbortSignal.timeout(15_000),
  });
  const value = (await response.json()) as unknown;
  if (!response.ok) throw new Error(`${method} ${path}: ${JSON.stringify(value)}`);
  return value;
}

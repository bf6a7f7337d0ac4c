// Protocol 1's HTTP API (upstream servers, docs/t3-protocols.md): the shell, the full read model and
// one thread, read over HTTP, and the dispatch API's HTTP form. The adapter reads the read model to
// tell an archived thread from a deleted one (./fleet-stream.ts); the streams themselves go over the
// socket (./connection.ts). Authentication and transport are the protocol-free client's (../client.ts).
import type { ClientCommand } from "../../../../shared/t3/protocol1/commands";
import { DispatchResult, ReadModelSnapshot, ShellSnapshot, ThreadDetailSnapshot } from "../../../../shared/t3/protocol1/schemas";
import type { T3Credentials } from "../client";
import type { T3Http } from "../http";

export class Protocol1HttpReads {
  constructor(private readonly http: T3Http) {}

  getShell(credentials: T3Credentials): Promise<ShellSnapshot> {
    return this.http.json({ method: "GET", path: "/api/orchestration/shell", bearer: credentials.token }, ShellSnapshot, "shell snapshot");
  }

  /** The full read model: every thread, archived and deleted ones included (large; read it rarely). */
  getReadModel(credentials: T3Credentials, timeoutMs?: number): Promise<ReadModelSnapshot> {
    return this.http.json(
      { method: "GET", path: "/api/orchestration/snapshot", bearer: credentials.token, ...(timeoutMs !== undefined && { timeoutMs }) },
      ReadModelSnapshot,
      "orchestration snapshot",
    );
  }

  getThread(credentials: T3Credentials, threadId: string): Promise<ThreadDetailSnapshot> {
    return this.http.json(
      { method: "GET", path: `/api/orchestration/threads/${encodeURIComponent(threadId)}`, bearer: credentials.token },
      ThreadDetailSnapshot,
      "thread snapshot",
    );
  }

  dispatch(credentials: T3Credentials, command: ClientCommand): Promise<DispatchResult> {
    return this.http.json({ method: "POST", path: "/api/orchestration/dispatch", bearer: credentials.token, json: command }, DispatchResult, command.type);
  }
}

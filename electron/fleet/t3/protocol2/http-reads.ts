// Protocol 2's HTTP reads (docs/t3-protocols.md, "Protocol 2"): the V2 shell, and one thread's
// bounded snapshot, which a thread stream starts from (./thread-stream.ts) and failure reasons are
// read from (./failure-reasons.ts). Every read carries the protocol header: without it a protocol-2
// server answers 426. Authentication and transport are the protocol-free client's (../client.ts).
import { ORCHESTRATION_PROTOCOL_HEADER, ShellSnapshotV2, type ThreadDetailSnapshotV2, ThreadBoundedSnapshotV2 } from "../../../../shared/t3/protocol2/schemas";
import type { T3Credentials } from "../client";
import type { T3Http } from "../http";

const PROTOCOL_HEADERS = { [ORCHESTRATION_PROTOCOL_HEADER]: "2" };

export class Protocol2HttpReads {
  constructor(private readonly http: T3Http) {}

  getShell(credentials: T3Credentials): Promise<ShellSnapshotV2> {
    return this.http.json(
      { method: "GET", path: "/api/orchestration/shell", bearer: credentials.token, headers: PROTOCOL_HEADERS },
      ShellSnapshotV2,
      "shell snapshot",
    );
  }

  getBoundedThread(credentials: T3Credentials, threadId: string, timeoutMs?: number): Promise<ThreadDetailSnapshotV2> {
    return this.http.json(
      {
        method: "GET",
        path: `/api/orchestration/threads/${encodeURIComponent(threadId)}/bounded`,
        bearer: credentials.token,
        headers: PROTOCOL_HEADERS,
        ...(timeoutMs !== undefined && { timeoutMs }),
      },
      ThreadBoundedSnapshotV2,
      "bounded thread snapshot",
    );
  }
}

// One followed protocol-1 thread: its projection, kept by the adapter across reconnects so a stream
// resumes where it left off (./thread-stream.ts feeds it; electron/fleet/threads.ts keeps it while it
// follows the thread).
import type { ThreadDetail } from "../../../../shared/fleet/facts";
import type { TailLimits } from "../../../../shared/fleet/transcript-tail";
import { ThreadProjection } from "../../../../shared/t3/protocol1/thread-projection";
import type { FollowedThread } from "../adapter";

export class Protocol1Thread implements FollowedThread {
  readonly projection = new ThreadProjection();
  synced = false;
  error: string | null = null;

  constructor(readonly threadId: string) {}

  detail(): ThreadDetail {
    const projection = this.projection;
    return {
      threadId: this.threadId,
      loaded: projection.thread !== undefined,
      synced: this.synced,
      facts: projection.facts(),
      ...projection.transcript(),
      appliedSequence: projection.lastSequence,
      error: this.error,
    };
  }

  markAnswered(requestId: string): void {
    this.projection.markAnswered(requestId);
  }

  retain(limits: TailLimits): void {
    this.projection.retain(limits);
  }

  get heldShort(): boolean {
    return this.projection.heldShort;
  }
}

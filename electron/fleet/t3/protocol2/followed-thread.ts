// One followed protocol-2 thread: its projection and stream cursor, kept by the adapter across
// reconnects so a stream resumes (./thread-stream.ts). The projection holds a bounded tail (issue 43):
// what leaves it is kept as compact facts (shared/t3/protocol2/retention.ts) that its detail reads.
import { noThreadFacts, type ThreadDetail } from "../../../../shared/fleet/facts";
import { detailFactsOf, transcriptOfThread, trimThread } from "../../../../shared/t3/protocol2/facts";
import { pendingRequestCards } from "../../../../shared/t3/protocol2/projection";
import { emptyCarried, freshCarried, retainLimits } from "../../../../shared/t3/protocol2/retention";
import type { TailLimits } from "../../../../shared/fleet/transcript-tail";
import type { ThreadProjection } from "../../../../shared/t3/protocol2/schemas";
import type { FollowedThread } from "../adapter";

export class V2Thread implements FollowedThread {
  projection: ThreadProjection | undefined;
  appliedSequence = -1;
  synced = false;
  error: string | null = null;
  lastEventAt: string | null = null;
  readonly answered = new Set<string>();
  /** What the entries the projection let go said. */
  private carried = emptyCarried();

  constructor(
    readonly threadId: string,
    /** Whether the server streams assistant text (undefined until its config was read). */
    private readonly replyStreams: () => boolean | undefined = () => undefined,
  ) {}

  markAnswered(requestId: string): void {
    this.answered.add(requestId);
  }

  /**
   * A snapshot is the thread afresh: nothing carried from before counts (its limits stay). It is cut
   * to the limits at once, so a thread holds no more after it was (re)followed than after its next trim.
   */
  takeSnapshot(projection: ThreadProjection): void {
    this.carried = freshCarried(this.carried);
    this.projection = trimThread(projection, this.carried, true);
  }

  retain(limits: TailLimits): void {
    retainLimits(this.carried, limits);
    this.trim();
  }

  get heldShort(): boolean {
    return this.carried.heldShort;
  }

  /** After events were applied: the projection within its bounds. */
  trim(): ThreadProjection | undefined {
    if (this.projection) this.projection = trimThread(this.projection, this.carried);
    if (this.projection && this.answered.size > 0) {
      // An answer counts while its request is pending; once T3 ends the request it is let go, so the set stays small.
      const pending = new Set(pendingRequestCards(this.projection).map((card) => card.requestId));
      for (const requestId of this.answered) if (!pending.has(requestId)) this.answered.delete(requestId);
    }
    return this.projection;
  }

  detail(): ThreadDetail {
    const projection = this.projection;
    if (!projection) {
      return {
        threadId: this.threadId,
        loaded: false,
        synced: false,
        facts: noThreadFacts(),
        items: [],
        appliedSequence: this.appliedSequence,
        error: this.error,
      };
    }
    return {
      threadId: this.threadId,
      loaded: true,
      synced: this.synced,
      facts: detailFactsOf(projection, this.answered, this.lastEventAt, this.carried),
      ...transcriptOfThread(projection, this.replyStreams(), this.carried),
      appliedSequence: this.appliedSequence,
      error: this.error,
    };
  }
}

// What the fleet service publishes to UIs (`fleet.delta`): an agent's view only when something a UI
// shows changed. A streaming agent changes its activity times on every thread event while nothing
// else moves; those times are shown coarsely ("12s ago", recency order), so a view whose only change
// is its activity time is held and published with the others on one shared tick, at most every
// ACTIVITY_PUBLISH_MS. A view that changed nothing at all is not published. UIs batch what they
// receive per animation frame (renderer/src/state/effects.ts).
import type { FleetChange } from "../../shared/fleet/model";
import type { AgentView } from "../../shared/fleet/types";

/** Activity times alone reach UIs at most this often (the UI's relative times move by 5 s). */
export const ACTIVITY_PUBLISH_MS = 5_000;

/** Fields that move with every event and are shown only coarsely. */
const ACTIVITY_FIELDS = new Set<keyof AgentView>(["updatedAt", "lastActivityAt"]);

/** Whether two views of one agent differ in anything besides their activity times. */
export function differsVisibly(a: AgentView, b: AgentView): boolean {
  for (const field of Object.keys(b) as (keyof AgentView)[]) {
    if (ACTIVITY_FIELDS.has(field)) continue;
    const before = a[field];
    const after = b[field];
    if (before === after) continue;
    // Nested parts (capabilities, pending requests, subagents) are small: compare their content.
    if (typeof before === "object" && typeof after === "object" && before !== null && after !== null && JSON.stringify(before) === JSON.stringify(after))
      continue;
    return true;
  }
  return Object.keys(a).length !== Object.keys(b).length;
}

export class PublishedViews {
  /** The view each UI was last sent, per agent key. */
  private readonly sent = new Map<string, AgentView>();
  /** Views newer than `sent` only by their activity times, waiting for the next tick. */
  private readonly held = new Map<string, AgentView>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly publish: (change: FleetChange) => void) {}

  /** A model change: publishes what UIs must see now; activity-only changes wait for the tick. */
  changed(change: FleetChange): void {
    const agents: AgentView[] = [];
    for (const view of change.agents) {
      const previous = this.sent.get(view.key);
      if (previous === view) continue;
      if (!previous || differsVisibly(previous, view)) {
        agents.push(view);
        this.sent.set(view.key, view);
        this.held.delete(view.key);
      } else if (previous.updatedAt !== view.updatedAt || previous.lastActivityAt !== view.lastActivityAt) {
        this.held.set(view.key, view);
        this.schedule();
      }
    }
    for (const key of change.removed) {
      this.sent.delete(key);
      this.held.delete(key);
    }
    if (agents.length === 0 && change.removed.length === 0 && change.environments.length === 0 && change.removedEnvironments.length === 0) return;
    this.publish({ agents, removed: change.removed, environments: change.environments, removedEnvironments: change.removedEnvironments });
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.held.clear();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushHeld();
    }, ACTIVITY_PUBLISH_MS);
    this.timer.unref?.();
  }

  private flushHeld(): void {
    if (this.held.size === 0) return;
    const agents = [...this.held.values()];
    this.held.clear();
    for (const view of agents) this.sent.set(view.key, view);
    this.publish({ agents, removed: [], environments: [], removedEnvironments: [] });
  }
}

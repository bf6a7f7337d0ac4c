// The flapping measurement: what the service reports (the truth, verdict.ts), what the page shows
// (page.ts) and the flaky machine's outages, on one timeline in the order they were seen. Used by
// `npm run bench -- flapping` (10 minutes of the demo fleet) and e2e/flapping.spec.ts (a faster flap).
import type { EventEmitter } from "node:events";
import type { BridgeEvent, FleetSnapshot } from "../../shared/bridge/contract";
import type { Flap } from "../../sim/demo-fleet";
import { type Explained, NeedsTruth, type NeedChange, SURFACES, type Seen, type Surface, type TruthState, expected, explain } from "./verdict";

/** A page shows the service's event within a frame or two; ten seconds later it is no longer showing that event. */
export const PAGE_LAG_MS = 10_000;
/** A count that moves this soon after the machine drops off or comes back is one a flap could have moved. */
const NEAR_FLAP_MS = 10_000;

interface Service {
  snapshot(): Pick<FleetSnapshot, "agents" | "environments">;
  on(event: "event", listener: (event: BridgeEvent) => void): unknown;
  off(event: "event", listener: (event: BridgeEvent) => void): unknown;
}

interface Line {
  seq: number;
  at: number;
  text: string;
}

export interface Verdict {
  /** Every change of a surface with what explains it (null: nothing did). */
  surfaces: Record<Surface, { changes: Explained[]; notShown: number; last: string | undefined }>;
  /** Why the measurement fails; empty when every count changed only with a need. */
  failures: string[];
}

export class FlappingMeasurement {
  readonly startedAt = Date.now();
  private seq = 0;
  private readonly truth: NeedsTruth;
  private readonly truthSeen: { seq: number; at: number; state: TruthState }[] = [];
  private readonly readings = new Map<Surface, Seen[]>(SURFACES.map((surface) => [surface, []]));
  private readonly lines: Line[] = [];
  private readonly needChanges: { at: number; changes: NeedChange[]; flakyPhase: string | undefined }[] = [];
  private readonly waiters = new Set<() => void>();
  private flakyPhase: string | undefined;
  readonly edges: Flap[] = [];
  private readonly onEvent = (event: BridgeEvent) => this.serviceEvent(event);
  private readonly onFlap = (flap: Flap) => this.flap(flap);

  constructor(
    private readonly service: Service,
    private readonly flaky: { environmentId: string; label: string },
    private readonly flaps: EventEmitter<{ flap: [Flap] }>,
  ) {
    this.truth = new NeedsTruth(service.snapshot());
    this.flakyPhase = this.truth.phase(flaky.environmentId);
    this.recordTruth([]);
    service.on("event", this.onEvent);
    flaps.on("flap", this.onFlap);
  }

  stop(): void {
    this.service.off("event", this.onEvent);
    this.flaps.off("flap", this.onFlap);
  }

  /** What the page showed (page.ts). */
  reading(surface: Surface, value: string): void {
    const seen = { seq: ++this.seq, at: Date.now(), value };
    this.readings.get(surface)!.push(seen);
    this.note(seen.seq, `page    ${surface.padEnd(12)} ${value}`);
  }

  /** The truth now. */
  state(): TruthState {
    return this.truth.state();
  }

  flakyOnline(): boolean {
    return this.truth.online(this.flaky.environmentId);
  }

  /** Whether every surface shows what the truth says now. */
  settled(): boolean {
    const state = this.truth.state();
    return SURFACES.every((surface) => this.readings.get(surface)!.at(-1)?.value === expected(surface, state));
  }

  /** Resolves once `condition` holds, checked after everything the measurement sees; rejects after `timeoutMs`. */
  until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`flapping measurement: ${what} did not happen within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  verdict(): Verdict {
    const failures: string[] = [];
    const surfaces = {} as Verdict["surfaces"];
    const state = this.truth.state();
    for (const surface of SURFACES) {
      const truth = this.truthSeen.map((entry) => ({ seq: entry.seq, at: entry.at, value: expected(surface, entry.state) }));
      const readings = this.readings.get(surface)!;
      const result = explain(truth, readings, PAGE_LAG_MS);
      const last = readings.at(-1)?.value;
      surfaces[surface] = { ...result, last };
      for (const change of result.changes) {
        if (change.by) continue;
        failures.push(
          `${this.clock(change.reading.at)} ${surface} changed ${change.from} → ${change.reading.value} with no need changing${this.nearFlap(change.reading.at)}`,
        );
      }
      if (last !== expected(surface, state))
        failures.push(`${surface} shows ${last ?? "nothing"} at the end; the service's needs say ${expected(surface, state)}`);
    }
    return { surfaces, failures };
  }

  /** The timeline and the figures, for a person. */
  report(verdict: Verdict = this.verdict()): string[] {
    const out: string[] = [];
    const outages = this.edges.filter((edge) => edge.edge === "down").length;
    const truthChanges = this.truthSeen.length - 1;
    out.push(
      `${((Date.now() - this.startedAt) / 60_000).toFixed(1)} min; ${this.flaky.label} dropped off ${outages} time${outages === 1 ? "" : "s"}; ` +
        `the service's "needs you" count changed ${truthChanges} time${truthChanges === 1 ? "" : "s"} (now ${this.truth.state().count}); ` +
        `needs changed ${this.needChanges.length} time${this.needChanges.length === 1 ? "" : "s"}, ${this.needChanges.filter((entry) => entry.flakyPhase !== "online").length} of them while ${this.flaky.label} was not online`,
    );
    for (const surface of SURFACES) {
      const { changes, notShown, last } = verdict.surfaces[surface];
      const unexplained = changes.filter((change) => !change.by).length;
      const nearFlaps = changes.filter((change) => this.nearFlap(change.reading.at) !== "").length;
      out.push(
        `  ${surface.padEnd(12)} ${changes.length} change${changes.length === 1 ? "" : "s"}, ${unexplained} with no need changing, ${nearFlaps} within 10 s after an outage's edge; ` +
          `${notShown} truth change${notShown === 1 ? "" : "s"} not shown on their own; now ${last ?? "—"}`,
      );
    }
    out.push("", "timeline (time since start; service = the truth, page = what the page showed):");
    for (const line of [...this.lines].sort((a, b) => a.seq - b.seq)) out.push(`  ${this.clock(line.at)}  ${line.text}`);
    out.push("", verdict.failures.length ? `FAIL: ${verdict.failures.length}` : "PASS: every count changed only when a need did");
    for (const failure of verdict.failures) out.push(`  ${failure}`);
    return out;
  }

  private serviceEvent(event: BridgeEvent): void {
    const changes = this.truth.apply(event);
    const phase = this.truth.phase(this.flaky.environmentId);
    if (phase !== this.flakyPhase) {
      this.flakyPhase = phase;
      this.note(++this.seq, `service ${this.flaky.label} is ${phase ?? "gone"}`);
    }
    if (changes.length) this.needChanges.push({ at: Date.now(), changes, flakyPhase: phase });
    this.recordTruth(changes);
    this.wake();
  }

  private recordTruth(changes: NeedChange[]): void {
    const state = this.truth.state();
    const previous = this.truthSeen.at(-1)?.state;
    const seq = ++this.seq;
    for (const change of changes) this.note(seq, `service need  ${change.title} on ${change.machine}: ${change.before} → ${change.after}`);
    if (previous && previous.count === state.count && previous.variant === state.variant) return;
    this.truthSeen.push({ seq, at: Date.now(), state });
    this.note(seq, `service count ${state.count} (${state.variant})`);
  }

  private flap(flap: Flap): void {
    this.edges.push(flap);
    this.note(++this.seq, `${this.flaky.label} ${flap.edge === "down" ? "drops off (its port stops answering)" : "listens again"}`);
    this.wake();
  }

  private note(seq: number, text: string): void {
    this.lines.push({ seq, at: Date.now(), text });
    this.wake();
  }

  private wake(): void {
    for (const check of [...this.waiters]) check();
  }

  /** Said of a change that came soon after an edge of an outage, when a flap would move a count. */
  private nearFlap(at: number): string {
    const edge = this.edges.findLast((flap) => flap.at <= at && at - flap.at <= NEAR_FLAP_MS);
    return edge ? ` (${((at - edge.at) / 1000).toFixed(1)} s after ${this.flaky.label} ${edge.edge === "down" ? "dropped off" : "came back"})` : "";
  }

  private clock(at: number): string {
    const seconds = (at - this.startedAt) / 1000;
    return `${String(Math.floor(seconds / 60)).padStart(2, "0")}:${(seconds % 60).toFixed(1).padStart(4, "0")}`;
  }
}

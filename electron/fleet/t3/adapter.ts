// Protocol adapters: one per T3 orchestration protocol, chosen from the environment descriptor on
// every connect (docs/architecture.md, "Protocol adapters"). An adapter turns its wire into the
// neutral facts of shared/fleet/facts.ts; nothing above it knows which protocol a machine speaks.
import type { FollowedThread, AdapterSession, OrchestrationProtocol } from "../../../shared/fleet/facts";
import { T3Error } from "../../../shared/t3/errors";
import type { EnvironmentDescriptor } from "../../../shared/t3/schemas";
import type { AuthGeneration, T3Credentials, T3EnvironmentClient } from "./client";

/**
 * One environment's adapter for one protocol. It lives as long as the environment keeps speaking
 * that protocol and holds the resume cursors (fleet stream, followed threads), so a reconnect
 * resumes where the last connection stopped. A machine upgraded to another protocol gets a new
 * adapter: cursors of one protocol are never used with another.
 */
export interface ProtocolAdapter {
  readonly protocol: OrchestrationProtocol;
  /** Opens one authenticated connection; resolves once it can subscribe and dispatch. */
  connect(credentials: T3Credentials): Promise<AdapterSession>;
  /** The state of one thread to follow (kept across reconnects by the caller). */
  thread(threadId: string): FollowedThread;
}

export interface AdapterContext {
  client: T3EnvironmentClient;
  generation: AuthGeneration;
  descriptor: EnvironmentDescriptor;
  /** A followed thread stream behind its fleet row for this long is subscribed again (tests shorten it). */
  streamLagMs?: number;
}

export type AdapterFactory = (context: AdapterContext) => ProtocolAdapter;

/** The orchestration protocol a descriptor announces: absent means 1 (every release up to 0.0.45). */
export function announcedProtocol(descriptor: EnvironmentDescriptor): number {
  return descriptor.orchestrationProtocolVersion ?? 1;
}

/**
 * Decides the protocol for one connect, or says why this pair of versions cannot talk: a server
 * newer than every protocol T3 Fleet knows needs a newer T3 Fleet; an older one needs T3 updated.
 */
export function negotiateProtocol(descriptor: EnvironmentDescriptor, supported: readonly number[]): OrchestrationProtocol {
  const announced = announcedProtocol(descriptor);
  if (supported.includes(announced)) return announced as OrchestrationProtocol;
  const newest = Math.max(...supported);
  const advice =
    announced > newest
      ? `Update T3 Fleet: ${descriptor.label} (T3 ${descriptor.serverVersion}) speaks orchestration protocol ${announced}, T3 Fleet speaks ${supported.join(" and ")}.`
      : `Update T3 on ${descriptor.label}: it speaks orchestration protocol ${announced}, T3 Fleet speaks ${supported.join(" and ")}.`;
  throw new T3Error("incompatible", advice, { reason: "orchestration_protocol_incompatible" });
}

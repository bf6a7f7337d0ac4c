// The protocol adapters T3 Fleet has, by orchestration protocol, and the negotiation that picks one:
// the one place that says which protocols a machine may speak (docs/architecture.md, "Protocol
// adapters"). Pairing, discovery's probe and the connection supervisor negotiate here, each on the
// descriptor it read (T3EnvironmentClient.identify reads it and decides nothing).
import type { OrchestrationProtocol } from "../../../shared/fleet/facts";
import { T3Error } from "../../../shared/t3/errors";
import type { EnvironmentDescriptor } from "../../../shared/t3/schemas";
import type { AdapterContext, AdapterFactory, ProtocolAdapter } from "./adapter";
import { createProtocol1Adapter } from "./protocol1/adapter";
import { createProtocol2Adapter } from "./protocol2/adapter";

const ADAPTERS: Partial<Record<OrchestrationProtocol, AdapterFactory>> = {
  1: (context) => createProtocol1Adapter(context, context.streamLagMs !== undefined ? { streamLagMs: context.streamLagMs } : {}),
  /** T3 since 2026-10-03 (Orchestrator V2). */
  // It opens its own socket: the service's socket tuning (pings, byte counting) applies to it too.
  2: (context) => createProtocol2Adapter(context, context.client.socketOptions ? { socket: context.client.socketOptions } : {}),
};

/** The orchestration protocols this build can speak. */
export function supportedProtocols(): OrchestrationProtocol[] {
  return (Object.keys(ADAPTERS) as `${OrchestrationProtocol}`[]).map((key) => Number(key) as OrchestrationProtocol);
}

export function createAdapter(protocol: OrchestrationProtocol, context: AdapterContext): ProtocolAdapter {
  const factory = ADAPTERS[protocol];
  if (!factory) throw new Error(`No adapter for orchestration protocol ${protocol}`);
  return factory(context);
}

/** The orchestration protocol a descriptor announces: absent means 1 (every release up to 0.0.45). */
export function announcedProtocol(descriptor: EnvironmentDescriptor): number {
  return descriptor.orchestrationProtocolVersion ?? 1;
}

/**
 * Decides the protocol for one connect, or says why this pair of versions cannot talk: a server
 * newer than every protocol T3 Fleet knows needs a newer T3 Fleet; an older one needs T3 updated.
 */
export function negotiateProtocol(descriptor: EnvironmentDescriptor, supported: readonly number[] = supportedProtocols()): OrchestrationProtocol {
  const announced = announcedProtocol(descriptor);
  if (supported.includes(announced)) return announced as OrchestrationProtocol;
  const newest = Math.max(...supported);
  const advice =
    announced > newest
      ? `Update T3 Fleet: ${descriptor.label} (T3 ${descriptor.serverVersion}) speaks orchestration protocol ${announced}, T3 Fleet speaks ${supported.join(" and ")}.`
      : `Update T3 on ${descriptor.label}: it speaks orchestration protocol ${announced}, T3 Fleet speaks ${supported.join(" and ")}.`;
  throw new T3Error("incompatible", advice, { reason: "orchestration_protocol_incompatible" });
}

// The protocol adapters T3 Fleet has, by orchestration protocol: the one place that says which
// protocols a machine may speak (docs/architecture.md, "Protocol adapters").
import type { OrchestrationProtocol } from "../../../shared/fleet/facts";
import type { AdapterContext, AdapterFactory, ProtocolAdapter } from "./adapter";
import { createProtocol1Adapter } from "./protocol1/adapter";
import { createProtocol2Adapter } from "./protocol2/adapter";

// Entries stay arrow functions: client.ts imports this module and adapters import the client, so a
// factory must not touch another module while modules load.
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

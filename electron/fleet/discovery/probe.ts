// One bounded look at a host's T3 descriptor (`GET /.well-known/t3/environment`), decoded with the
// fleet's own schema (electron/fleet/t3/client.ts) and protocol negotiation
// (electron/fleet/t3/adapters.ts): is it T3, which version, which protocol — or what answered instead.
import { T3Error } from "../../../shared/t3/errors";
import type { EnvironmentDescriptor } from "../../../shared/t3/schemas";
import { announcedProtocol, negotiateProtocol } from "../t3/adapters";
import { T3EnvironmentClient } from "../t3/client";

/** T3's default port (server and desktop app alike). */
export const T3_DEFAULT_PORT = 3773;

export type ProbeOutcome =
  | { kind: "t3"; baseUrl: string; descriptor: EnvironmentDescriptor; protocol: number }
  /** A T3 server the fleet cannot talk to (protocol too new or too old): `reason` says what to update. */
  | { kind: "incompatible"; baseUrl: string; descriptor: EnvironmentDescriptor | null; reason: string }
  | { kind: "not-t3"; baseUrl: string; reason: string }
  | { kind: "slow"; baseUrl: string; reason: string }
  /** Not looked at: the scan reached its deadline first. */
  | { kind: "unprobed"; baseUrl: string; reason: string }
  | { kind: "nothing"; baseUrl: string; reason: string };

export function httpBaseUrl(host: string, port: number): string {
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

export async function probeDescriptor(baseUrl: string, timeoutMs: number): Promise<ProbeOutcome> {
  const client = new T3EnvironmentClient(baseUrl, { httpTimeoutMs: timeoutMs });
  let descriptor: EnvironmentDescriptor | null = null;
  try {
    descriptor = await client.identify(timeoutMs);
    negotiateProtocol(descriptor);
    return { kind: "t3", baseUrl, descriptor, protocol: announcedProtocol(descriptor) };
  } catch (error) {
    if (!(error instanceof T3Error)) return { kind: "nothing", baseUrl, reason: `Probing ${baseUrl} failed: ${String(error)}` };
    switch (error.kind) {
      case "timeout":
        return {
          kind: "slow",
          baseUrl,
          reason: `Something at ${baseUrl} accepted the connection but did not answer within ${Math.round(timeoutMs / 1000)} s.`,
        };
      case "network":
        return { kind: "nothing", baseUrl, reason: `Nothing answers at ${baseUrl}.` };
      case "decode":
        return { kind: "not-t3", baseUrl, reason: `Something answers at ${baseUrl}, but not as a T3 server.` };
      case "incompatible":
        return error.details.reason === "orchestration_protocol_incompatible"
          ? { kind: "incompatible", baseUrl, descriptor, reason: error.message }
          : { kind: "not-t3", baseUrl, reason: `Something answers at ${baseUrl}, but not as a T3 server.` };
      default:
        return { kind: "nothing", baseUrl, reason: `${baseUrl}: ${error.message}` };
    }
  }
}

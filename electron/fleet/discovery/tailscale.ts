// Tailscale: where the `tailscale` CLI is present, `tailscale status --json` lists the tailnet's
// machines. Only online peers from that list are ever probed, at their own Tailscale addresses.
// The JSON is decoded at this edge; fields the fleet does not use are ignored.
import { isIPv4 } from "node:net";
import { z } from "zod";
import { CommandMissingError, lastLine, runCommand } from "./run-command";

const TailscaleNode = z.object({
  HostName: z.string().max(255).default(""),
  DNSName: z.string().max(255).default(""),
  OS: z.string().max(64).optional(),
  TailscaleIPs: z.array(z.string().max(64)).nullish(),
  Online: z.boolean().optional(),
});

export const TailscaleStatus = z.object({
  BackendState: z.string().max(64),
  Self: TailscaleNode.nullish(),
  /** Keyed by node public key; null on a tailnet with no other machine. */
  Peer: z.record(z.string(), TailscaleNode).nullish(),
  MagicDNSSuffix: z.string().max(255).optional(),
});
export type TailscaleStatus = z.infer<typeof TailscaleStatus>;

export interface TailscalePeer {
  /** MagicDNS name without the trailing dot, else the host name. */
  name: string;
  /** The peer's Tailscale IPv4 address, the only address probed. */
  address: string | null;
  online: boolean;
}

export type TailscaleLook = { ok: true; peers: TailscalePeer[] } | { ok: false; note: string };

const STATUS_TIMEOUT_MS = 10_000;

/** The online state and addresses of every peer, from the decoded status. */
export function tailscalePeers(status: TailscaleStatus): TailscalePeer[] {
  return Object.values(status.Peer ?? {}).map((peer) => ({
    name: peer.DNSName.replace(/\.$/, "") || peer.HostName,
    address: (peer.TailscaleIPs ?? []).find((ip) => isIPv4(ip)) ?? null,
    online: peer.Online === true,
  }));
}

export async function readTailscale(command = "tailscale", env?: NodeJS.ProcessEnv): Promise<TailscaleLook> {
  let result;
  try {
    result = await runCommand(command, ["status", "--json"], { timeoutMs: STATUS_TIMEOUT_MS, maxOutputBytes: 8 << 20, ...(env && { env }) });
  } catch (error) {
    if (error instanceof CommandMissingError)
      return { ok: false, note: "Tailscale: the tailscale command is not installed here, so no tailnet machines were looked for." };
    return { ok: false, note: `Tailscale: could not run tailscale status (${String(error)}).` };
  }
  if (result.timedOut) return { ok: false, note: "Tailscale: tailscale status did not answer in time." };
  let json: unknown;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    return { ok: false, note: `Tailscale: tailscale status --json printed no JSON${result.stderr ? ` (${lastLine(result.stderr)})` : ""}.` };
  }
  const decoded = TailscaleStatus.safeParse(json);
  if (!decoded.success) return { ok: false, note: "Tailscale: tailscale status --json printed a shape T3 Fleet does not know." };
  if (decoded.data.BackendState !== "Running") return { ok: false, note: `Tailscale is not connected here (state ${decoded.data.BackendState}).` };
  return { ok: true, peers: tailscalePeers(decoded.data) };
}

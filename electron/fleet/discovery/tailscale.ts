// Tailscale: where the `tailscale` CLI is present, `tailscale status --json` lists the tailnet's
// machines. Only online peers from that list are ever probed, at their own Tailscale addresses.
// The JSON is decoded at this edge; fields the fleet does not use are ignored. Peer names are
// written by whoever runs the peer: cleaned like any server text, and never taken as an ssh option.
import { isIPv4 } from "node:net";
import { z } from "zod";
import { cleanLabel } from "../../../shared/t3/text";
import { isTailnetAddress } from "./addresses";
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
  /** MagicDNS name without the trailing dot, else the host name; cleaned (shared/t3/text.ts), never empty. */
  name: string;
  /** The peer's Tailscale IPv4 address (100.64.0.0/10), the only address probed; null when it lists none. */
  address: string | null;
  online: boolean;
  /** What to give ssh for this peer: its name when it is a plain DNS name, else its address; null when neither is usable. */
  sshDestination: string | null;
}

/** `addresses`: every tailnet address Tailscale here lists (its own and its peers'): only these are reached through it. */
export type TailscaleLook = { ok: true; peers: TailscalePeer[]; addresses: string[] } | { ok: false; note: string };

const STATUS_TIMEOUT_MS = 10_000;

/** A DNS name of letters, digits and inner hyphens: it starts with a letter or digit, so no command reads it as an option. */
const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** The online state and addresses of every peer, from the decoded status. */
export function tailscalePeers(status: TailscaleStatus): TailscalePeer[] {
  return Object.values(status.Peer ?? {}).map((peer) => {
    const raw = peer.DNSName.replace(/\.$/, "") || peer.HostName;
    // Any other address the CLI prints (loopback, link-local, a LAN) is not the tailnet's to probe.
    const address = (peer.TailscaleIPs ?? []).find((ip) => isIPv4(ip) && isTailnetAddress(ip)) ?? null;
    const name = cleanLabel(raw) || address || "unnamed peer";
    return { name, address, online: peer.Online === true, sshDestination: DNS_NAME.test(raw) ? raw : address };
  });
}

export async function readTailscale(command = "tailscale", env?: NodeJS.ProcessEnv, timeoutMs = STATUS_TIMEOUT_MS): Promise<TailscaleLook> {
  let result;
  try {
    result = await runCommand(command, ["status", "--json"], { timeoutMs, maxOutputBytes: 8 << 20, ...(env && { env }) });
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
  const nodes = [decoded.data.Self, ...Object.values(decoded.data.Peer ?? {})];
  const addresses = nodes.flatMap((node) => (node?.TailscaleIPs ?? []).filter(isTailnetAddress));
  return { ok: true, peers: tailscalePeers(decoded.data), addresses };
}

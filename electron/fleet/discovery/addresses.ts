// Which addresses discovery may treat as private without asking: this machine's loopback, and
// Tailscale's own ranges (its traffic is end-to-end encrypted by WireGuard). Anything else is a
// network whose other users could read plain HTTP.
import { BlockList, isIP } from "node:net";

/** Tailscale's IPv4 range (a CGNAT block it assigns from) and its IPv6 unique-local prefix. */
const TAILNET = new BlockList();
TAILNET.addSubnet("100.64.0.0", 10, "ipv4");
TAILNET.addSubnet("fd7a:115c:a1e0::", 48, "ipv6");

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

function family(address: string): "ipv4" | "ipv6" | null {
  const version = isIP(address);
  return version === 4 ? "ipv4" : version === 6 ? "ipv6" : null;
}

/** An address in Tailscale's ranges (100.64.0.0/10, fd7a:115c:a1e0::/48); false for anything that is not an IP. */
export function isTailnetAddress(address: string): boolean {
  const kind = family(address);
  return kind !== null && TAILNET.check(address, kind);
}

export function isLoopbackAddress(address: string): boolean {
  const kind = family(address);
  return kind !== null && LOOPBACK.check(address, kind);
}

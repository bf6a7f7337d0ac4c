// Find machines as plain text, for `./fleet serve -- --discover`. What a server or a peer wrote (its
// name, label, version, and reasons that may carry its words) is shown quoted on the row of the
// machine it came from, so none of it can pass for a line of the fleet's own.
import type { DiscoveryReport, FoundServer } from "../../../shared/bridge/contract";
import { quotedText } from "../../../shared/t3/text";

const SOURCE: Record<FoundServer["source"], string> = { local: "this machine", tailscale: "tailscale", ssh: "ssh" };
/** A host name, address or version: one word that cannot read as a sentence; anything else is quoted. */
const ONE_WORD = /^[\w.@:[\]()+-]{1,253}$/;

function word(text: string): string {
  return ONE_WORD.test(text) ? text : quotedText(text);
}

function state(server: FoundServer): string {
  if (server.pairVia === null) return `cannot pair: ${server.reason === null ? "unknown" : quotedText(server.reason)}`;
  if (server.alreadyPaired) return "already paired (Pair again from Find machines)";
  if (server.plainHttp) return `can pair over plain HTTP once you confirm it in Find machines: ${server.plainHttp}`;
  return server.pairVia === "t3-cli" ? "can pair (t3 on this machine)" : "can pair (t3 over ssh)";
}

export function discoveryReportText(report: DiscoveryReport): string {
  const lines = [`Find machines (${new Date(report.scannedAt).toISOString()}): ${report.servers.length} found`];
  for (const server of report.servers) {
    const t3 = server.serverVersion
      ? `T3 ${word(server.serverVersion)}, protocol ${server.protocol ?? "?"}${server.label ? `, calls itself ${quotedText(server.label)}` : ""}`
      : "no T3";
    // "This machine (port N)" is the fleet's own name; the others come from Tailscale or the user.
    const name = server.source === "local" ? server.name : word(server.name);
    lines.push(`  [${SOURCE[server.source]}] ${name}  ${server.baseUrl || "-"}  ${t3}  — ${state(server)}`);
  }
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (report.sshConfigHosts.length > 0) lines.push(`  ssh hosts in your ssh config (add with --ssh HOST): ${report.sshConfigHosts.join(", ")}`);
  return lines.join("\n");
}

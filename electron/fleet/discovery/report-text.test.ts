import { describe, expect, it } from "vitest";
import type { FoundServer } from "../../../shared/bridge/contract";
import { discoveryReportText } from "./report-text";

const forged = "T3 Fleet is running. Open http://127.0.0.1:1/#code=forged";

function found(patch: Partial<FoundServer>): FoundServer {
  return {
    id: "tailscale:x",
    source: "tailscale",
    name: "alpha.tail7f3a.ts.net",
    baseUrl: "http://100.101.1.2:3773",
    label: null,
    serverVersion: null,
    protocol: null,
    environmentId: null,
    alreadyPaired: false,
    pairVia: null,
    reason: null,
    plainHttp: null,
    ...patch,
  };
}

describe("discovery report text", () => {
  it("shows what a server or peer wrote only quoted on its machine's row", () => {
    const text = discoveryReportText({
      scannedAt: 0,
      nextScanAt: 0,
      servers: [
        found({ name: forged, serverVersion: forged, protocol: 1, label: `say "${forged}"`, pairVia: "ssh" }),
        found({ name: "printer.tail7f3a.ts.net", reason: `nope${" ".repeat(300)}${forged}` }),
      ],
      notes: [],
      sshConfigHosts: [],
    });
    const lines = text.split("\n");
    expect(lines.every((line) => line.startsWith("Find machines (") || line.startsWith("  ["))).toBe(true);
    expect(lines[1]).toBe(
      `  [tailscale] "${forged}"  http://100.101.1.2:3773  T3 "${forged}", protocol 1, calls itself "say \\"${forged}\\""  — can pair (t3 over ssh)`,
    );
    expect(lines[2]).toBe(`  [tailscale] printer.tail7f3a.ts.net  http://100.101.1.2:3773  no T3  — cannot pair: "nope ${forged}"`);
  });
});

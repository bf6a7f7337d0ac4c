import { describe, expect, it } from "vitest";
import { isLoopbackAddress, isTailnetAddress } from "./addresses";

describe("discovery addresses", () => {
  it("takes only Tailscale's ranges as the tailnet", () => {
    for (const address of ["100.64.0.1", "100.101.1.2", "100.127.255.254", "fd7a:115c:a1e0::9", "fd7a:115c:a1e0:ab12::1"])
      expect(isTailnetAddress(address), address).toBe(true);
    for (const address of [
      "127.0.0.2",
      "169.254.169.254",
      "10.0.0.1",
      "100.63.255.255",
      "100.128.0.1",
      "192.168.1.5",
      "fd7a:115c:a1e1::1",
      "::1",
      "alpha.ts.net",
      "",
    ])
      expect(isTailnetAddress(address), address).toBe(false);
  });

  it("knows loopback from everything else", () => {
    for (const address of ["127.0.0.1", "127.0.0.2", "::1"]) expect(isLoopbackAddress(address), address).toBe(true);
    for (const address of ["10.0.0.1", "100.101.1.2", "localhost", "::2"]) expect(isLoopbackAddress(address), address).toBe(false);
  });
});

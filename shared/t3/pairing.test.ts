import { describe, expect, it } from "vitest";
import { buildPairingUrl, normalizeBaseUrl, parsePairingInput } from "./pairing";

describe("parsePairingInput", () => {
  it("reads the token from the fragment of a server's pairing URL", () => {
    expect(parsePairingInput("http://100.101.102.103:3773/pair#token=7KQ2M9XH4PRT")).toEqual({
      ok: true,
      target: { baseUrl: "http://100.101.102.103:3773", pairingToken: "7KQ2M9XH4PRT" },
    });
  });

  it("accepts the token in the query too", () => {
    expect(parsePairingInput("https://studio.tail1234.ts.net/pair?token=ABCDEFGHJKLM")).toEqual({
      ok: true,
      target: { baseUrl: "https://studio.tail1234.ts.net", pairingToken: "ABCDEFGHJKLM" },
    });
  });

  it("follows a hosted pairing link to its backend host and keeps the label", () => {
    const link = "https://app.t3.codes/pair?host=https%3A%2F%2Fbuild-box.tail1234.ts.net&label=Build%20box#token=ZZZZ22223333";
    expect(parsePairingInput(link)).toEqual({
      ok: true,
      target: { baseUrl: "https://build-box.tail1234.ts.net", pairingToken: "ZZZZ22223333", label: "Build box" },
    });
  });

  it("defaults a bare host to https, as T3's web app does", () => {
    expect(parsePairingInput("workstation.local:3773")).toEqual({ ok: true, target: { baseUrl: "https://workstation.local:3773" } });
  });

  it.each([
    "",
    "   ",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "ftp://host/pair#token=x",
    "http://user:pw@host/pair",
    "https://app.t3.codes/pair#token=abc",
  ])("refuses %j with a message", (input) => {
    const result = parsePairingInput(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message.length).toBeGreaterThan(0);
  });

  it("round-trips the URL a server builds", () => {
    const url = buildPairingUrl("http://127.0.0.1:3773", "7KQ2M9XH4PRT");
    expect(parsePairingInput(url)).toEqual({ ok: true, target: { baseUrl: "http://127.0.0.1:3773", pairingToken: "7KQ2M9XH4PRT" } });
  });

  it("normalizes trailing paths away", () => {
    expect(normalizeBaseUrl("http://127.0.0.1:3773/some/path/")).toEqual({ ok: true, baseUrl: "http://127.0.0.1:3773" });
  });
});

import { describe, expect, it } from "vitest";
import { buildPairingUrl, normalizeBaseUrl, parsePairingInput } from "./pairing";
import { TEXT_LIMITS } from "./text";

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

  it("cleans and caps a hosted link's label like any server text: no escape sequence, no direction override, one bounded line", () => {
    const hostile = `Build\x1b[2J\x1b]52;c;Y3VybA==\x07 box \u202egnp.exe\u202c\n${"x".repeat(3_000)}`;
    const link = `https://app.t3.codes/pair?host=https%3A%2F%2Fbuild-box.tail1234.ts.net&label=${encodeURIComponent(hostile)}#token=ZZZZ22223333`;
    const parsed = parsePairingInput(link);
    const label = parsed.ok ? parsed.target.label! : "";
    expect(label).toMatch(/^Build box gnp\.exe x+ … \(\d[\d,]* more characters\)$/);
    expect(label.length).toBeLessThanOrEqual(TEXT_LIMITS.label);
    // eslint-disable-next-line no-control-regex -- what must not be left
    expect(label).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    const blank = parsePairingInput("https://app.t3.codes/pair?host=https%3A%2F%2Fb.example&label=%1b%5b2J%e2%80%ae#token=ZZZZ22223333");
    expect(blank.ok && blank.target.label).toBeUndefined();
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

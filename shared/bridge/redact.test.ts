import { describe, expect, it } from "vitest";
import { describeError, redactSecrets } from "./redact";

describe("redactSecrets", () => {
  it("hides pairing codes, launch codes, bearer tokens and credentials and keeps the rest readable", () => {
    const cases: [string, string][] = [
      // A value runs to the next space or separator: trailing punctuation goes with it, never part of a secret stays.
      ["could not pair http://10.0.0.2:3773/pair#token=7KQ2M9XH4PRT: refused", "could not pair http://10.0.0.2:3773/pair#token=… refused"],
      ["GET /pair?token=7KQ2M9XH4PRT&x=1", "GET /pair?token=…&x=1"],
      ["https://app.t3.codes/pair?host=h.example&token=ABC", "https://app.t3.codes/pair?host=h.example&token=…"],
      ["Open http://127.0.0.1:4780/#code=abc_DEF-123", "Open http://127.0.0.1:4780/#code=…"],
      ["authorization: Bearer 0f1e.abcdEF-_", "authorization: Bearer …"],
      ["http://user:pw@host:1/x", "http://…@host:1/x"],
      ['{"token":"s3cret","label":"vm"}', '{"token":"…","label":"vm"}'],
      ["offered t3fleet.session.AbC-9_", "offered t3fleet.session.…"],
      ["ws://10.0.0.2:3773/ws?wsToken=abc.DEF&orchestrationProtocol=1", "ws://10.0.0.2:3773/ws?wsToken=…&orchestrationProtocol=1"],
      ["ws://h:1/ws?wsTicket=t-1", "ws://h:1/ws?wsTicket=…"],
      // A server that echoes a refused exchange body (0.0.24 bootstrap, upstream token exchange).
      ['HTTP 400 ({"credential":"PAIRCODE1"})', 'HTTP 400 ({"credential":"…"})'],
      ["HTTP 400 (grant_type=x&subject_token=PAIRCODE2&scope=y)", "HTTP 400 (grant_type=x&subject_token=…&scope=y)"],
      ["nothing secret here: http://h:1/pair", "nothing secret here: http://h:1/pair"],
    ];
    for (const [input, expected] of cases) expect(redactSecrets(input)).toBe(expected);
  });

  it("describes thrown values of any kind without their secrets", () => {
    expect(describeError(new Error("bad link http://h/pair#token=XYZ"))).toBe("bad link http://h/pair#token=…");
    expect(describeError("Bearer abc")).toBe("Bearer …");
  });
});

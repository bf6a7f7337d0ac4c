import { describe, expect, it } from "vitest";
import { decodePairingCredential, pairingLink } from "./pairing-credential";

// Printed by the released T3 0.0.42: `t3 auth pairing create --json --base-dir DIR`.
const REAL_0_0_42 = `{
  "id": "9e51b1cd-a2f1-4000-ad40-cef939b8e7b7",
  "credential": "QKKAY73L3Y4A",
  "scopes": [
    "orchestration:read",
    "orchestration:operate",
    "terminal:operate",
    "review:write",
    "relay:read"
  ],
  "expiresAt": "2026-12-01T12:29:41.532Z"
}
`;

describe("t3 auth pairing create --json", () => {
  it("decodes what T3 0.0.42 prints and makes the pairing link the fleet pairs with", () => {
    const credential = decodePairingCredential(REAL_0_0_42);
    expect(credential).toMatchObject({ id: "9e51b1cd-a2f1-4000-ad40-cef939b8e7b7", credential: "QKKAY73L3Y4A" });
    expect(pairingLink("http://100.101.1.2:3773", credential!)).toBe("http://100.101.1.2:3773/pair#token=QKKAY73L3Y4A");
  });

  it("takes nothing else for a credential: the human-readable output, JSON without it, a credential that could break the link", () => {
    expect(decodePairingCredential("Issued client pairing token 0885.\nToken: DQXLBT8YEWMQ\n")).toBeNull();
    expect(decodePairingCredential(JSON.stringify({ id: "x" }))).toBeNull();
    expect(decodePairingCredential(JSON.stringify({ id: "x", credential: "ABCDEFGH#x=1" }))).toBeNull();
  });
});

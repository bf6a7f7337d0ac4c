// What `t3 auth pairing create --json` prints (checked with the released 0.0.42 executable):
//   { "id": "<uuid>", "credential": "QKKAY73L3Y4A", "scopes": [...], "expiresAt": "<ISO>",
//     "pairUrl": "<only with --base-url>" }
// Decoded at the edge; the credential stays in memory and goes straight to pairing.
import { z } from "zod";

const PairingCredentialOutput = z.object({
  id: z.string().min(1).max(200),
  credential: z
    .string()
    .min(8)
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/),
  scopes: z.array(z.string()).optional(),
  expiresAt: z.string().optional(),
});
export type PairingCredential = z.infer<typeof PairingCredentialOutput>;

/** The credential from the CLI's stdout, or null when it printed something else. */
export function decodePairingCredential(stdout: string): PairingCredential | null {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    return null;
  }
  const decoded = PairingCredentialOutput.safeParse(json);
  return decoded.success ? decoded.data : null;
}

/** A pairing link for the fleet's own pairing code path (electron/fleet/pairing.ts); never logged. */
export function pairingLink(baseUrl: string, credential: PairingCredential): string {
  return `${baseUrl}/pair#token=${credential.credential}`;
}

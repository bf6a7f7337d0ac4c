// Messages whose answer was lost with the page's socket (slices/lost-sends.ts) are kept in this tab's
// sessionStorage: after T3 Fleet restarts, the tab opens its new launch link on the same origin and
// finds them again, held until the service's deliveries are known. Each message's commandId is made
// here, before it is sent, so that a resend can carry the same one.
import { z } from "zod";
import { INPUT_LIMITS } from "../../../shared/bridge/contract";
import { useFleet } from "./store";

const STORAGE_KEY = "t3fleet.lostSends";

/** What a tab kept: read back as untrusted (another build, a hand edit) and dropped whole if it does not decode. */
const Kept = z
  .array(
    z.object({
      key: z.string().min(3).max(2_000),
      commandId: z.uuid(),
      text: z.string().min(1).max(INPUT_LIMITS.messageText),
      expectedIntent: z.enum(["steer", "queue", "new-turn"]),
    }),
  )
  .max(1_000);

/** A random (version 4) UUID. `crypto.randomUUID` exists only in secure contexts; a page served over plain HTTP on a LAN name is not one. */
export function newCommandId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Restores what this tab kept, then keeps the lost sends as they change. */
export function keepLostSends(): () => void {
  try {
    const kept = Kept.safeParse(JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? "[]"));
    if (kept.success && kept.data.length > 0) useFleet.getState().restoreLostSends(kept.data);
  } catch {
    // Unreadable or unavailable storage: nothing was kept.
  }
  return useFleet.subscribe((state, previous) => {
    if (state.lostSends === previous.lostSends) return;
    try {
      const kept = [...state.lostSends.values()].map(({ key, commandId, text, expectedIntent }) => ({ key, commandId, text, expectedIntent }));
      if (kept.length === 0) sessionStorage.removeItem(STORAGE_KEY);
      else sessionStorage.setItem(STORAGE_KEY, JSON.stringify(kept));
    } catch {
      // Storage may be unavailable or full: the lost send then lasts for this page.
    }
  });
}

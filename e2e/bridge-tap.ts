// Watches the page's bridge socket (Playwright's WebSocket routing) so a spec can see which
// requests the window sends, refuse one as a failing service would, hold one back as a slow service
// would, or cut the bridge and bring it back. Everything else passes through to the real headless shell unchanged.
import type { Page, WebSocketRoute } from "@playwright/test";

export interface BridgeTap {
  /** Requests the page sent, in order. */
  sent: { method: string; params: unknown }[];
  /** Answers requests of this method with an error instead of passing them on. */
  refuse(method: string, message: string): void;
  /** Holds requests of this method back (a slow service) until `release`, which passes them on. */
  hold(method: string): void;
  release(method: string): void;
  /**
   * Passes the next request of this method on, then lets nothing more from the service reach the page
   * on that connection, as a socket that died just after the request left (then `cut`: its answer is lost).
   */
  deafAfter(method: string): void;
  /** Cuts the bridge and keeps it cut (the page retries) until `restore`; requests held then never reach the service. */
  cut(): Promise<void>;
  restore(): void;
}

export async function tapBridge(page: Page): Promise<BridgeTap> {
  const refusals = new Map<string, string>();
  const held = new Map<string, (() => void)[]>();
  const deafening = new Set<string>();
  let cut = false;
  let current: WebSocketRoute | undefined;
  const tap: BridgeTap = {
    sent: [],
    refuse: (method, message) => void refusals.set(method, message),
    hold: (method) => void held.set(method, held.get(method) ?? []),
    release: (method) => {
      const waiting = held.get(method) ?? [];
      held.delete(method);
      for (const pass of waiting) pass();
    },
    deafAfter: (method) => void deafening.add(method),
    cut: async () => {
      cut = true;
      for (const waiting of held.values()) waiting.length = 0;
      await current?.close();
    },
    restore: () => {
      cut = false;
    },
  };
  await page.routeWebSocket(/\/bridge/, (ws) => {
    if (cut) {
      void ws.close();
      return;
    }
    current = ws;
    /** Nothing more from the service reaches the page on this connection. */
    let deaf = false;
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      const request = JSON.parse(String(message)) as { type: string; id: number; method: string; params: unknown };
      // The page's acknowledgements of paced batches (shared/bridge/paced-feed.ts) are not requests.
      if (request.type === "ack") return server.send(message);
      tap.sent.push({ method: request.method, params: request.params });
      const refusal = refusals.get(request.method);
      if (refusal) ws.send(JSON.stringify({ type: "response", id: request.id, ok: false, error: { kind: "refused", message: refusal } }));
      else if (held.has(request.method)) held.get(request.method)!.push(() => server.send(message));
      else {
        if (deafening.delete(request.method)) deaf = true;
        server.send(message);
      }
    });
    server.onMessage((message) => {
      if (deaf) return;
      ws.send(message);
    });
  });
  return tap;
}

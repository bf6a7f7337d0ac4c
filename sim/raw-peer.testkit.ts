// A raw Effect-RPC peer for simulator tests, either protocol: sends exactly the frames a test asks
// for (no Acks unless `autoAck`, as a recording client sent them), records every frame received,
// and resolves waits on arrival of frames, not on timers.
import { WebSocket } from "ws";
import { FLEET_SCOPES } from "../shared/t3/pairing";
import type { SimAuth } from "./auth";

export type Exit = { _tag: string; value?: unknown; cause?: { _tag: string; error?: Record<string, unknown>; defect?: string; fiberId?: number }[] };
export type Frame = { _tag: string; requestId?: string; values?: unknown[]; exit?: Exit; defect?: unknown };

/** What a peer needs of a simulated server, either generation. */
export interface PeerTarget {
  readonly baseUrl: string;
  readonly auth: SimAuth;
}

export interface RawPeerOptions {
  /** Acknowledge every Chunk on arrival (a client that keeps up), instead of only when the test acks. */
  autoAck?: boolean;
}

export class RawPeer {
  readonly frames: Frame[] = [];
  private waiters: { check: () => boolean; resolve: () => void }[] = [];
  private nextId = 1;

  private constructor(
    private readonly ws: WebSocket,
    options: RawPeerOptions,
  ) {
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      this.frames.push(frame);
      if (options.autoAck && frame._tag === "Chunk" && frame.requestId !== undefined) this.ack(frame.requestId);
      this.waiters = this.waiters.filter((waiter) => (waiter.check() ? (waiter.resolve(), false) : true));
    });
  }

  /** A fresh bearer session's token on this server. */
  static bearer(sim: PeerTarget, scopes: readonly string[] = FLEET_SCOPES, label = "raw"): string {
    return sim.auth.issueSession({ scopes: [...scopes], role: "client", label }).token;
  }

  /** Protocol 1: `/ws` with a fresh bearer session of the given scopes (bearer header on the upgrade). */
  static connect(sim: PeerTarget, scopes = ["orchestration:read", "orchestration:operate"], options: RawPeerOptions = {}): Promise<RawPeer> {
    return RawPeer.open(`${sim.baseUrl.replace("http", "ws")}/ws`, { ...options, headers: { authorization: `Bearer ${RawPeer.bearer(sim, scopes)}` } });
  }

  /** Protocol 2: `/ws?orchestrationProtocol=2&wsTicket=…` with a ticket of a fresh fleet session, as the recording client opened it. */
  static async connectProtocol2(sim: PeerTarget, options: RawPeerOptions = { autoAck: true }): Promise<RawPeer> {
    const answer = await fetch(`${sim.baseUrl}/api/auth/websocket-ticket`, {
      method: "POST",
      headers: { authorization: `Bearer ${RawPeer.bearer(sim, FLEET_SCOPES, "recordings")}` },
    });
    const { ticket } = (await answer.json()) as { ticket: string };
    return RawPeer.open(`${sim.baseUrl.replace("http", "ws")}/ws?orchestrationProtocol=2&wsTicket=${encodeURIComponent(ticket)}`, options);
  }

  static async open(url: string, options: RawPeerOptions & { headers?: Record<string, string> } = {}): Promise<RawPeer> {
    const ws = new WebSocket(url, options.headers ? { headers: options.headers } : {});
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new RawPeer(ws, options);
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  request(tag: string, payload: unknown): string {
    const id = String(this.nextId++);
    this.send({ _tag: "Request", id, tag, payload, headers: [] });
    return id;
  }

  ack(requestId: string): void {
    this.send({ _tag: "Ack", requestId });
  }

  interrupt(requestId: string): void {
    this.send({ _tag: "Interrupt", requestId });
  }

  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  /** Round-trips a Ping: every frame the server sent before answering it has arrived once this resolves. */
  async barrier(): Promise<void> {
    const pongs = this.frames.filter((frame) => frame._tag === "Pong").length;
    this.send({ _tag: "Ping" });
    await this.until(() => this.frames.filter((frame) => frame._tag === "Pong").length > pongs);
  }

  /** The stream's values, Chunk by Chunk. */
  chunks(requestId: string): Record<string, unknown>[][] {
    return this.frames
      .filter((frame) => frame._tag === "Chunk" && frame.requestId === requestId)
      .map((chunk) => (chunk.values ?? []) as Record<string, unknown>[]);
  }

  values(requestId: string): Record<string, unknown>[] {
    return this.chunks(requestId).flat();
  }

  /** Resolves once a value of the stream satisfies `check`. */
  untilValue(requestId: string, check: (value: Record<string, unknown>) => boolean): Promise<void> {
    return this.until(() => this.values(requestId).some(check));
  }

  exit(requestId: string): Exit | undefined {
    return this.frames.find((frame) => frame._tag === "Exit" && frame.requestId === requestId)?.exit;
  }

  async call(tag: string, payload: unknown): Promise<Exit> {
    const id = this.request(tag, payload);
    await this.until(() => this.exit(id) !== undefined);
    return this.exit(id)!;
  }

  /** Whether the socket is open (a closed one never answers: callers bound their waits). */
  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  close(): void {
    this.ws.close();
  }
}

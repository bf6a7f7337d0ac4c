// A TCP proxy on 127.0.0.1 in front of a real T3 server that counts what a client asks of it:
// connections, and HTTP requests (WebSocket frames from a client are masked, so a request line
// can only be a real request). Used to prove that a refused client does not retry in a storm, and
// by the soak (bench/soak/real-machines.ts) to blackhole a real server as sim/host.ts does a simulated one.
import { type Server, type Socket, connect, createServer } from "node:net";

const REQUEST_LINE = /(?:^|\r\n)(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\S+) HTTP\/1\.1\r\n/g;

export interface CountedRequest {
  at: number;
  method: string;
  path: string;
}

export class CountingProxy {
  connections = 0;
  readonly requests: CountedRequest[] = [];
  private readonly sockets = new Set<Socket>();
  private blackholed = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static start(targetPort: number): Promise<CountingProxy> {
    return new Promise((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        if (!address || typeof address !== "object") return reject(new Error("proxy has no port"));
        const proxy = new CountingProxy(server, address.port);
        server.on("connection", (client) => proxy.relay(client, targetPort));
        resolve(proxy);
      });
    });
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Requests seen since `since` (Date.now() value). */
  requestsSince(since: number): CountedRequest[] {
    return this.requests.filter((request) => request.at >= since);
  }

  /**
   * The server vanishes without a FIN: connections stay open but nothing passes either way, and new
   * ones are accepted and never answered. Lifting it drops every connection, as a partition ending
   * would (the simulated machines' blackhole, sim/host.ts).
   */
  blackhole(on: boolean): void {
    this.blackholed = on;
    if (!on) for (const socket of this.sockets) socket.destroy();
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => undefined);
  }

  private relay(client: Socket, targetPort: number): void {
    this.connections++;
    this.track(client);
    if (this.blackholed) {
      // Held and read, never answered, until the blackhole lifts.
      client.resume();
      return;
    }
    const upstream = connect(targetPort, "127.0.0.1");
    this.track(upstream);
    client.on("data", (chunk: Buffer) => {
      for (const match of chunk.toString("latin1").matchAll(REQUEST_LINE)) this.requests.push({ at: Date.now(), method: match[1]!, path: match[2]! });
      if (!this.blackholed) upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (!this.blackholed) client.write(chunk);
    });
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

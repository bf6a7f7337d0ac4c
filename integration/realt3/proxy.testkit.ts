// A TCP proxy on 127.0.0.1 in front of a real T3 server that counts what a client asks of it:
// connections, and HTTP requests (WebSocket frames from a client are masked, so a request line
// can only be a real request). Used to prove that a refused client does not retry in a storm.
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

  private relay(client: Socket, targetPort: number): void {
    this.connections++;
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.on("data", (chunk: Buffer) => {
      for (const match of chunk.toString("latin1").matchAll(REQUEST_LINE)) this.requests.push({ at: Date.now(), method: match[1]!, path: match[2]! });
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

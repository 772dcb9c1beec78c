import net from 'node:net';

/**
 * A TCP proxy whose network can go silent: while black-holed, bytes either way are dropped and
 * nothing is closed (packets lost, as on a dead link). Connections made during the silence stay
 * silent for good; new ones after it work.
 */
export class BlackHoleProxy {
  private server: net.Server | undefined;
  private readonly dead = new Set<net.Socket>();
  private silent = false;
  port = 0;
  /** Bytes from the target (PostgreSQL, Redis) that the silence swallowed: a notification, a reply. */
  droppedFromTarget = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      if (this.silent) {
        this.dead.add(client);
        client.on('error', () => {});
        return;
      }
      const upstream = net.connect(this.target.port, this.target.host);
      const pair = [client, upstream];
      for (const socket of pair) socket.on('error', () => pair.forEach((s) => s.destroy()));
      // Once silent, a connection stays dead: the bytes it lost cannot be made up.
      let lost = false;
      client.on('data', (chunk: Buffer) => {
        if (this.silent) lost = true;
        if (!lost) upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (this.silent) lost = true;
        if (lost) this.droppedFromTarget += chunk.length;
        else client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      this.dead.add(client);
      this.dead.add(upstream);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  blackHole(on: boolean): void {
    this.silent = on;
  }

  async stop(): Promise<void> {
    for (const socket of this.dead) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: BlackHoleProxy): string {
  const via = new URL(url);
  via.hostname = '127.0.0.1';
  via.port = String(proxy.port);
  return via.toString();
}

/** The host and port a URL names (PostgreSQL's and Redis's default ports when absent). */
export function targetOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  const port = parsed.port === '' ? (parsed.protocol.startsWith('redis') ? 6379 : 5432) : Number(parsed.port);
  return { host: parsed.hostname, port };
}

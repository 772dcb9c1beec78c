import http from 'node:http';
import type net from 'node:net';
import type { FastifyInstance } from 'fastify';

/** An event a stream received. */
export interface Received {
  type: string;
  data: Record<string, unknown>;
}

/** GET /api/events through a listening server (test/events): its events as they come, and whether it has ended. */
export class Stream {
  readonly events: Received[] = [];
  readonly comments: string[] = [];
  ended = false;
  status = 0;
  private buffer = '';
  private waiters: Array<() => void> = [];
  private request: http.ClientRequest | undefined;

  static open(base: string, token: string): Promise<Stream> {
    const stream = new Stream();
    return new Promise((resolve, reject) => {
      stream.request = http.get(`${base}/api/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
        stream.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => stream.take(chunk));
        res.on('end', () => {
          stream.ended = true;
          stream.wake();
        });
        res.on('close', () => {
          stream.ended = true;
          stream.wake();
        });
        // The first comment says the stream is registered: events from now on reach it.
        stream
          .until(() => stream.comments.includes('connected') || stream.ended, 5000)
          .then(() => resolve(stream), reject);
      });
      stream.request.on('error', reject);
    });
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let type = '';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith(': ')) this.comments.push(line.slice(2));
        else if (line.startsWith('event: ')) type = line.slice(7);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (type !== '') this.events.push({ type, data: JSON.parse(data) as Record<string, unknown> });
    }
    this.wake();
  }

  private wake(): void {
    for (const fn of this.waiters.splice(0)) fn();
  }

  /** Resolves once `check` holds (checked on every arrival), or fails after `ms`. */
  async until(check: () => boolean, ms = 3000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; events so far: ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next event of `type` about `id` (after those already taken). */
  async next(type: string, id: string, ms = 3000): Promise<Received> {
    let found: Received | undefined;
    await this.until(() => (found = this.events.find((e) => e.type === type && e.data.id === id)) !== undefined, ms);
    this.events.splice(this.events.indexOf(found!), 1);
    return found!;
  }

  close(): void {
    this.request?.destroy();
  }
}

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as net.AddressInfo;
  return `http://127.0.0.1:${address.port}`;
}

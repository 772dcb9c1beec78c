import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * What a stall test asserts (issue #19): while a hostile request runs, another client's
 * `GET /healthz` answers within this many milliseconds at p99.
 */
export const STALL_P99_MS = 100;

export interface HealthDuring<T> {
  /** What the hostile work resolved to. */
  result: T;
  /** Round-trip times of the /healthz probes sent while it ran, in milliseconds, in order. */
  samples: number[];
  /** The 99th percentile of `samples` (with few samples, their maximum). */
  p99: number;
}

/** The app listening on an ephemeral loopback port (stall tests need a real socket, not inject). */
export async function listening(app: FastifyInstance): Promise<string> {
  if (app.server.listening) return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** One GET /healthz on a connection of its own; resolves to the round trip in milliseconds. */
function probe(base: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}/healthz`, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`/healthz answered ${response.statusCode}`));
        else resolve(performance.now() - started);
      });
    });
    request.on('error', reject);
  });
}

export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Starts `hostile` and, from another client, probes `/healthz` back to back until it settles (the
 * first probe always goes out while it runs). A hostile failure is rethrown after probing stops.
 */
export async function healthDuring<T>(base: string, hostile: () => Promise<T>): Promise<HealthDuring<T>> {
  await probe(base); // warm: the first request of a connection pays for things a stall test does not measure
  let settled = false;
  const work = hostile().finally(() => { settled = true; });
  const samples: number[] = [];
  do samples.push(await probe(base)); while (!settled);
  const result = await work;
  return { result, samples, p99: percentile(samples, 99) };
}

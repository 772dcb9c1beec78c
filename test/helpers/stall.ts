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

/**
 * Probes go out every PROBE_INTERVAL_MS on one keep-alive connection (a load balancer's pace, not
 * a flood: back to back, the probes took a core of their own from the work being measured).
 */
const PROBE_INTERVAL_MS = 5;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET /healthz; resolves when it has answered 200. */
function probe(base: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}/healthz`, { agent }, (response) => {
      response.resume();
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`/healthz answered ${response.statusCode}`));
        else resolve();
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
 * Starts `hostile` and, from another client, probes `/healthz` every PROBE_INTERVAL_MS until it
 * settles (the first probe always goes out while it runs). Each sample runs from when its probe was
 * due, not from when it went out: the client shares the server's event loop here, so a stalled loop
 * also delays the probe's own timer, and timing from the send would hide exactly that stall. A
 * hostile failure is rethrown after probing stops.
 */
export async function healthDuring<T>(base: string, hostile: () => Promise<T>): Promise<HealthDuring<T>> {
  await probe(base); // warm: the first request of a connection pays for things a stall test does not measure
  let settled = false;
  const work = hostile().finally(() => {
    settled = true;
  });
  work.catch(() => {}); // rethrown below, once probing stops: not an unhandled rejection meanwhile
  const samples: number[] = [];
  let due = performance.now();
  do {
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await probe(base);
    const now = performance.now();
    samples.push(now - due);
    due = Math.max(due + PROBE_INTERVAL_MS, now);
  } while (!settled);
  const result = await work;
  return { result, samples, p99: percentile(samples, 99) };
}

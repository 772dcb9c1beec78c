// The load generator: autocannon, driven from the runner process (never inside the server).
import autocannon from 'autocannon';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  connections: number;
  /** Seconds. */
  duration: number;
}

export interface LoadResult {
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyAvgMs: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  durationSec: number;
}

export async function runLoad(baseUrl: string, request: LoadRequest, options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: baseUrl + request.path,
    method: request.method,
    headers: { ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...request.headers },
    ...(request.body === undefined ? {} : { body: request.body }),
    connections: options.connections,
    duration: options.duration,
    timeout: 20,
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
  return {
    // Completed responses over the run's wall time (autocannon's per-second mean drops partial seconds).
    requestsPerSec: round(result.requests.total / result.duration, 1),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyAvgMs: round(result.latency.average, 2),
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    durationSec: result.duration,
  };
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

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
  /** Seconds; ignored when `amount` is given. */
  duration: number;
  /** Stop after this many responses instead of after `duration`. */
  amount?: number;
  /** Several requests taken in turn by each connection (for a mixed warm-up). */
  requests?: LoadRequest[];
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

/** A result with the latency of every 2xx response kept, so runs can be merged exactly. */
export interface RawLoadResult extends LoadResult {
  latencies: number[];
}

export async function runLoad(baseUrl: string, request: LoadRequest, options: LoadOptions): Promise<RawLoadResult> {
  const latencies: number[] = [];
  const toAutocannon = (r: LoadRequest) => ({
    method: r.method,
    path: r.path,
    headers: { ...(r.body === undefined ? {} : { 'content-type': 'application/json' }), ...r.headers },
    ...(r.body === undefined ? {} : { body: r.body }),
  });
  const first = toAutocannon(request);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl + request.path,
        method: first.method,
        headers: first.headers,
        ...(first.body === undefined ? {} : { body: first.body }),
        ...(options.requests === undefined ? {} : { requests: options.requests.map(toAutocannon) }),
        connections: options.connections,
        ...(options.amount === undefined ? { duration: options.duration } : { amount: options.amount }),
        timeout: 20,
      },
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    // The typings leave out the client that autocannon passes first.
    (instance as unknown as NodeJS.EventEmitter).on(
      'response',
      (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      },
    );
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
  return summarise(latencies, {
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    durationSec: result.duration,
  });
}

function summarise(
  latencies: number[],
  counts: Omit<LoadResult, 'requestsPerSec' | 'latencyP50Ms' | 'latencyP99Ms' | 'latencyAvgMs'>,
): RawLoadResult {
  const sorted = Float64Array.from(latencies).sort();
  const pick = (q: number) =>
    sorted.length === 0 ? 0 : round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!, 2);
  const sum = latencies.reduce((a, b) => a + b, 0);
  return {
    // Completed responses over the run's wall time.
    requestsPerSec: round(counts.total / Math.max(counts.durationSec, 0.001), 1),
    latencyP50Ms: pick(0.5),
    latencyP99Ms: pick(0.99),
    latencyAvgMs: round(sum / Math.max(1, latencies.length), 2),
    ...counts,
    latencies,
  };
}

/** Several runs of the same request (e.g. interleaved rounds) as one: counts add up, latencies pool. */
export function mergeRuns(runs: RawLoadResult[]): RawLoadResult {
  const statusCodes: Record<string, number> = {};
  for (const run of runs)
    for (const [code, n] of Object.entries(run.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const add = (key: 'total' | 'non2xx' | 'errors' | 'timeouts' | 'durationSec') => runs.reduce((a, r) => a + r[key], 0);
  return summarise(
    runs.flatMap((r) => r.latencies),
    {
      total: add('total'),
      non2xx: add('non2xx'),
      errors: add('errors'),
      timeouts: add('timeouts'),
      statusCodes,
      durationSec: round(add('durationSec'), 2),
    },
  );
}

/** The result without the raw latencies, for the report. */
export function withoutSamples({ latencies: _latencies, ...rest }: RawLoadResult): LoadResult {
  return rest;
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

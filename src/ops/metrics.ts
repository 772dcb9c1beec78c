import { timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import type { StorageHealth } from '../db/availability.js';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { parseBearer } from '../http/access.js';
import type { BreakerState } from '../http/breaker.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { Errors } from '../errors.js';
import { routePattern } from './request-log.js';

export interface MetricsSources {
  hasher: PasswordHasher;
  /** Connections of the PostgreSQL pool, when there is one. */
  pool?: () => { total: number; idle: number; waiting: number };
  /** The Redis breaker's state, when throttling counters are in Redis. */
  redisBreaker?: (() => BreakerState) | undefined;
  /** When set, /metrics wants `Authorization: Bearer <token>`. */
  token: string | undefined;
  /** Database errors of requests and whether storage is full. */
  storage?: StorageHealth;
  /** Live event streams open on this instance. */
  liveStreams?: () => number;
  /** Scheduled maintenance outcomes, keyed `task\tstatus`. */
  maintenance?: ReadonlyMap<string, number>;
  /** Bytes the database takes (and, for SQLite, free on its disk). */
  databaseSize?: () => Promise<{ bytes: number; diskFreeBytes?: number }>;
  /** The database is a SQLite file, whose disk's free bytes are a gauge (on PostgreSQL it is not there at all). */
  diskFree?: boolean;
}

function buildVersion(): string {
  try {
    const text = fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Prometheus metrics at /metrics. Each app gets its own registry, so tests that build several apps
 * (and cluster workers) never collide on metric names.
 */
export function registerMetrics(app: FastifyInstance, sources: MetricsSources): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  let requestsCollect = () => {};
  const requests = new Counter({
    name: 'vellum_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect: () => requestsCollect(),
  });
  const duration = new Histogram({
    name: 'vellum_http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });
  new Gauge({
    name: 'vellum_password_hash_queue_depth',
    help: 'Argon2 hashes running or waiting',
    registers: [registry],
    collect() {
      this.set(sources.hasher.depth);
    },
  });
  new Gauge({
    name: 'vellum_build_info',
    help: 'Always 1; the labels say which Vellum and Node run',
    labelNames: ['version', 'node'] as const,
    registers: [registry],
  }).set({ version: buildVersion(), node: process.version }, 1);
  if (sources.storage !== undefined) {
    const storage = sources.storage;
    new Gauge({
      name: 'vellum_database_errors_total',
      help: 'Requests that failed on the database, by cause (unavailable: 503; storage_full: 507)',
      labelNames: ['cause'] as const,
      registers: [registry],
      collect() {
        this.set({ cause: 'unavailable' }, storage.errors.unavailable);
        this.set({ cause: 'storage_full' }, storage.errors.storage_full);
      },
    });
    new Gauge({
      name: 'vellum_storage_full',
      help: 'Whether the last write failed for want of space (1) and none has succeeded since',
      registers: [registry],
      collect() {
        this.set(storage.full ? 1 : 0);
      },
    });
  }
  if (sources.liveStreams !== undefined) {
    const streams = sources.liveStreams;
    new Gauge({
      name: 'vellum_live_streams',
      help: 'Live event streams open on this instance',
      registers: [registry],
      collect() {
        this.set(streams());
      },
    });
  }
  if (sources.maintenance !== undefined) {
    const outcomes = sources.maintenance;
    new Gauge({
      name: 'vellum_maintenance_runs_total',
      help: 'Scheduled maintenance runs of this process by task and outcome (done, failed, not-due, skipped)',
      labelNames: ['task', 'outcome'] as const,
      registers: [registry],
      collect() {
        for (const [key, n] of outcomes) {
          const [task, outcome] = key.split('\t');
          this.set({ task: task!, outcome: outcome! }, n);
        }
      },
    });
  }
  // Before the database size's gauges: their queries, started in the same scrape, would otherwise
  // wait a tick for a connection and count as waiting (2 on an idle server).
  if (sources.pool !== undefined) {
    const pool = sources.pool;
    new Gauge({
      name: 'vellum_db_pool_connections',
      help: 'PostgreSQL pool connections by state',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const { total, idle, waiting } = pool();
        this.set({ state: 'total' }, total);
        this.set({ state: 'idle' }, idle);
        this.set({ state: 'waiting' }, waiting);
      },
    });
  }
  if (sources.databaseSize !== undefined) {
    const size = sources.databaseSize;
    let latest: { bytes: number; diskFreeBytes?: number } = { bytes: 0 };
    /** This scrape's reading, shared by both gauges (one query, not two). */
    let reading: Promise<{ bytes: number; diskFreeBytes?: number }> | undefined;
    new Gauge({
      name: 'vellum_database_size_bytes',
      help: 'Bytes the database takes (SQLite: the file and its WAL; PostgreSQL: pg_database_size)',
      registers: [registry],
      async collect() {
        reading = size().catch(() => latest);
        latest = await reading;
        this.set(latest.bytes);
      },
    });
    // Registered only where there is a figure: a gauge never set is exported as 0, which read as a
    // full disk on every PostgreSQL instance.
    if (sources.diskFree === true)
      new Gauge({
        name: 'vellum_disk_free_bytes',
        help: "Bytes free on the SQLite database's file system (absent on PostgreSQL)",
        registers: [registry],
        async collect() {
          const { diskFreeBytes } = await (reading ?? size().catch(() => latest));
          if (diskFreeBytes !== undefined) this.set(diskFreeBytes);
        },
      });
  }
  if (sources.redisBreaker !== undefined) {
    const state = sources.redisBreaker;
    // 1 while this instance counts in memory (open or probing): its limits are no longer shared.
    new Gauge({
      name: 'vellum_redis_breaker_open',
      help: "Whether the Redis breaker is open (throttling counts in this instance's memory)",
      registers: [registry],
      collect() {
        this.set(state() === 'closed' ? 0 : 1);
      },
    });
  }

  // Per method, route and status, what prom-client needs made once: the label object and its
  // histogram child. The request counter is the histogram's count, added to the counter when
  // /metrics is read, so a request hashes its labels at most once, not twice.
  interface Series {
    labels: Record<'method' | 'route' | 'status', string>;
    observe: (seconds: number) => void;
    count: number;
    counted: number;
  }
  const series = new Map<string, Series>();
  requestsCollect = () => {
    for (const s of series.values()) {
      if (s.count > s.counted) requests.inc(s.labels, s.count - s.counted);
      s.counted = s.count;
    }
  };
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL, so ids do not explode the label set.
    const route = routePattern(request);
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let s = series.get(key);
    if (s === undefined) {
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      s = { labels, observe: duration.labels(labels).observe, count: 0, counted: 0 };
      series.set(key, s);
    }
    s.count += 1;
    s.observe(reply.elapsedTime / 1000);
    done();
  });

  // Scraped from one address many times a minute; METRICS_TOKEN (checked here) is not an access token.
  app.get(
    '/metrics',
    { schema: { hide: true }, config: { policy: { auth: 'public', limit: 'unlimited' } } },
    async (request, reply) => {
      if (sources.token !== undefined && !sameSecret(parseBearer(request.headers.authorization), sources.token)) {
        throw Errors.unauthorized();
      }
      return reply.type(registry.contentType).send(await registry.metrics());
    },
  );
}

function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startMaintenance } from '../../src/jobs/maintenance.js';
import { maintenanceTasks } from '../../src/jobs/tasks.js';
import { listen, Stream } from '../helpers/event-stream.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { captureLogs } from '../helpers/logs.js';

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

async function scrape(app: FastifyInstance, headers: Record<string, string> = {}): Promise<string> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], PROMETHEUS_TEXT);
  return res.body;
}

/** The sample lines of one metric name (`name{labels} value` or `name value`). */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

forEachDatabase('metrics', (ctx) => {
  test('GET /metrics is Prometheus text with request counters labelled by route pattern', async () => {
    // A fresh app has a fresh registry, so the counts below are exact.
    const app = await ctx.rebuild();
    const session = await newSession(app, 'metrics');
    const created = await app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: session.auth,
      payload: { title: 'm' },
    });
    assert.equal(created.statusCode, 201);
    const id = (created.json() as { id: string }).id;
    // The same route with a trailing slash counts under the same label.
    assert.equal(
      (await app.inject({ method: 'POST', url: '/api/notes/', headers: session.auth, payload: {} })).statusCode,
      201,
    );
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await app.inject({ method: 'GET', url: `/api/notes/${id}`, headers: session.auth })).statusCode,
        200,
      );
    }
    assert.equal(
      (await app.inject({ method: 'GET', url: `/api/notes/${randomUUID()}`, headers: session.auth })).statusCode,
      404,
    );
    assert.equal((await app.inject({ method: 'GET', url: `/no/such/${randomUUID()}` })).statusCode, 404);

    const text = await scrape(app);
    assert.match(text, /^# HELP vellum_http_requests_total HTTP requests by route and status$/m);
    assert.match(text, /^# TYPE vellum_http_requests_total counter$/m);
    const requests = samples(text, 'vellum_http_requests_total');
    assert.ok(
      requests.includes('vellum_http_requests_total{method="GET",route="/api/notes/:noteID",status="200"} 3'),
      requests.join('\n'),
    );
    assert.ok(
      requests.includes('vellum_http_requests_total{method="GET",route="/api/notes/:noteID",status="404"} 1'),
      requests.join('\n'),
    );
    assert.ok(
      requests.includes('vellum_http_requests_total{method="POST",route="/api/notes",status="201"} 2'),
      requests.join('\n'),
    );
    assert.ok(
      requests.includes('vellum_http_requests_total{method="POST",route="/api/auth/signup",status="201"} 1'),
      requests.join('\n'),
    );
    assert.ok(
      requests.includes('vellum_http_requests_total{method="GET",route="/*",status="404"} 1'),
      requests.join('\n'),
    );
    // Raw URLs (with their ids) never become label values.
    for (const line of text.split('\n')) assert.doesNotMatch(line, UUID);

    assert.match(text, /^# TYPE vellum_http_request_duration_seconds histogram$/m);
    assert.ok(
      samples(text, 'vellum_http_request_duration_seconds_count').includes(
        'vellum_http_request_duration_seconds_count{method="GET",route="/api/notes/:noteID",status="200"} 3',
      ),
    );
    assert.ok(
      samples(text, 'vellum_http_request_duration_seconds_bucket').includes(
        'vellum_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/notes/:noteID",status="200"} 3',
      ),
    );

    assert.match(text, /^# TYPE vellum_password_hash_queue_depth gauge$/m);
    assert.deepEqual(samples(text, 'vellum_password_hash_queue_depth'), ['vellum_password_hash_queue_depth 0']);
    assert.match(text, /^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
    assert.equal(samples(text, 'nodejs_eventloop_lag_seconds').length, 1);
    assert.match(text, /^process_cpu_user_seconds_total \d/m);

    if (ctx.kind === 'postgres') {
      assert.deepEqual(
        samples(text, 'vellum_db_pool_connections').map((l) => l.replace(/ \d+$/, '')),
        [
          'vellum_db_pool_connections{state="total"}',
          'vellum_db_pool_connections{state="idle"}',
          'vellum_db_pool_connections{state="waiting"}',
        ],
      );
    } else {
      assert.deepEqual(samples(text, 'vellum_db_pool_connections'), []);
    }

    // The scrape itself is counted, by its own route.
    assert.ok(
      samples(await scrape(app), 'vellum_http_requests_total').includes(
        'vellum_http_requests_total{method="GET",route="/metrics",status="200"} 1',
      ),
    );
    if (ctx.kind === 'postgres') {
      // Nothing waits on an idle server: the scrape's own queries are not counted (they were, as 2).
      for (let i = 0; i < 2; i += 1) {
        const pool = samples(await scrape(app), 'vellum_db_pool_connections');
        assert.ok(pool.includes('vellum_db_pool_connections{state="waiting"} 0'), pool.join('; '));
      }
    }
  });

  test('with METRICS_TOKEN set, /metrics wants that bearer token', async () => {
    const token = 'metrics-token-0123456789';
    const app = await ctx.rebuild({ METRICS_TOKEN: token });
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Basic ${token}` },
      { authorization: `Bearer ${token}x` },
    ]) {
      const res = await app.inject({ method: 'GET', url: '/metrics', headers });
      assert.equal(res.statusCode, 401, JSON.stringify(headers));
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.deepEqual(res.json(), {
        type: 'about:blank',
        title: 'Unauthorized',
        status: 401,
        detail: 'Unauthorized',
        code: 'unauthorized',
      });
    }
    const text = await scrape(app, { authorization: `Bearer ${token}` });
    assert.ok(
      samples(text, 'vellum_http_requests_total').includes(
        'vellum_http_requests_total{method="GET",route="/metrics",status="401"} 4',
      ),
    );
    // Without the setting, no token is needed.
    await scrape(await ctx.rebuild());
  });
});

forEachDatabase('operational metrics', (ctx) => {
  test('version, database errors, storage, maintenance outcomes and live streams are exported', async () => {
    const text = await scrape(ctx.app);
    const build = samples(text, 'vellum_build_info');
    assert.equal(build.length, 1);
    assert.match(build[0]!, /^vellum_build_info\{version="[^"]+",node="v\d+\.\d+\.\d+"\} 1$/);
    assert.deepEqual(samples(text, 'vellum_live_streams'), ['vellum_live_streams 0']);
    assert.deepEqual(samples(text, 'vellum_storage_full'), ['vellum_storage_full 0']);
    assert.deepEqual(samples(text, 'vellum_database_errors_total').sort(), [
      'vellum_database_errors_total{cause="storage_full"} 0',
      'vellum_database_errors_total{cause="unavailable"} 0',
    ]);
    const size = samples(text, 'vellum_database_size_bytes');
    assert.equal(size.length, 1);
    assert.ok(Number(size[0]!.split(' ')[1]) > 0, size[0]);
    if (ctx.kind === 'sqlite') assert.ok(Number(samples(text, 'vellum_disk_free_bytes')[0]!.split(' ')[1]) > 0);
    // On PostgreSQL there is no such figure: no gauge at all, not a 0 that reads as a full disk.
    else assert.ok(!text.includes('vellum_disk_free_bytes'), 'no disk gauge on PostgreSQL');
    assert.ok(text.includes('# TYPE vellum_maintenance_runs_total gauge'));
  });

  test('the live streams and maintenance outcomes follow what happens', async () => {
    const base = await listen(ctx.app);
    const s = await newSession(ctx.app, 'metrics');
    const stream = await Stream.open(base, s.accessToken);
    try {
      assert.equal(stream.status, 200);
      assert.deepEqual(samples(await scrape(ctx.app), 'vellum_live_streams'), ['vellum_live_streams 1']);
    } finally {
      stream.close();
    }
    // The server lets go of the stream once it sees the connection closed.
    while (samples(await scrape(ctx.app), 'vellum_live_streams')[0] !== 'vellum_live_streams 0') {
      await new Promise((resolve) => setImmediate(resolve));
    }

    // Runs of one task, whatever their outcome (done, or not-due if another pass claimed the hour).
    const runs = (text: string) =>
      samples(text, 'vellum_maintenance_runs_total')
        .filter((line) => line.includes('task="tags-backfill"'))
        .reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
    const before = runs(await scrape(ctx.app));
    const maintenance = startMaintenance({
      database: ctx.database,
      tasks: maintenanceTasks(ctx.config),
      log: captureLogs().logger,
    });
    await maintenance.current;
    await maintenance.stop();
    assert.equal(runs(await scrape(ctx.app)), before + 1);
  });
});

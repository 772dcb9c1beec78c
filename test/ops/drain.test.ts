import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { CSRF_SECRET, GOOD_PASSWORD, JWT_SECRET, TEST_ENV, uniqueName } from '../helpers/harness.js';
import { exitWithin, logEntry, startProcess, type ServerProcess } from '../helpers/server-process.js';
import { entryArgs } from '../helpers/entry.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BURST = 140;
// The checks made while the server drains (/readyz, /healthz, a late request) must all fit in the
// drain: at 3 s a machine at load 17 let it close first (the late request's socket hung up).
const DRAIN_SECONDS = 10;

/** One request on a connection of its own (as a load balancer's health check makes). */
function get(url: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += String(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

for (const workers of [1, 2]) {
  describe(`SIGTERM drains the real server (WORKERS=${workers})`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-drain-'));
    let server: ServerProcess | undefined;
    after(async () => {
      await server?.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test(`a burst of ${BURST} requests in flight completes with no reset; /readyz is 503 during the drain`, {
      timeout: 120_000,
    }, async () => {
      const port = await freePort();
      server = startProcess(process.execPath, entryArgs('main'), {
        cwd: ROOT,
        env: {
          ...TEST_ENV,
          HOME: dir,
          PORT: String(port),
          HOST: '127.0.0.1',
          WORKERS: String(workers),
          DATABASE_URL: `sqlite:${path.join(dir, 'vellum.db')}`,
          JWT_SECRET,
          CSRF_SECRET,
          PWNED_PASSWORDS_URL: 'off',
          RATE_LIMIT: 'off',
          LOG_LEVEL: 'info',
          SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS),
        },
      });
      await server.waitFor(
        (line) => {
          const msg = logEntry(line)?.msg ?? '';
          return msg === 'all workers listening' || (workers === 1 && msg.startsWith('Server listening'))
            ? true
            : undefined;
        },
        90_000,
        'listening',
      );
      const base = `http://127.0.0.1:${port}`;
      const json = { 'content-type': 'application/json' };
      const username = uniqueName('drain');
      assert.equal(
        (
          await fetch(`${base}/api/auth/signup`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ username, password: GOOD_PASSWORD }),
          })
        ).status,
        201,
      );
      const login = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ username, password: GOOD_PASSWORD }),
      });
      const { access_token: token } = (await login.json()) as { access_token: string };
      assert.equal((await get(`${base}/readyz`)).status, 200);

      // Writes, each on whichever connection fetch's pool gives it (many are opened for a burst).
      let answered = 0;
      const burst = Array.from({ length: BURST }, (_, i) =>
        fetch(`${base}/api/notes`, {
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${token}` },
          body: JSON.stringify({ title: `burst ${i}`, content: 'x'.repeat(2000) }),
        })
          .then(
            async (res) => ({ status: res.status, connection: res.headers.get('connection'), body: await res.text() }),
            (error: unknown) => ({ error }),
          )
          .finally(() => {
            answered += 1;
          }),
      );
      // The signal comes once the server is serving the burst: its first answer is in, the rest in flight.
      await Promise.race(burst);
      assert.ok(server.child.kill('SIGTERM'));
      assert.ok(answered < BURST, `the signal met requests in flight (${answered} of ${BURST} answered)`);
      // Each server process has seen the signal.
      let seen = 0;
      await server.waitFor(
        (line) => (logEntry(line)?.msg === 'shutting down' && ++seen === workers ? true : undefined),
        20_000,
        'shutting down',
      );

      const ready = await get(`${base}/readyz`);
      assert.equal(ready.status, 503, ready.body);
      assert.equal(ready.headers['retry-after'], '5');
      assert.deepEqual(JSON.parse(ready.body), {
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        detail: 'Shutting down',
        code: 'shutting_down',
      });
      assert.equal((await get(`${base}/healthz`)).status, 200, 'the process is alive while it drains');
      // A request that arrives during the drain is served, and its connection is closed after it.
      const late = await fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(late.status, 200);
      assert.equal(late.headers.get('connection'), 'close');
      await late.arrayBuffer();

      const results = await Promise.all(burst);
      const failures = results.filter((r) => 'error' in r || r.status !== 201);
      assert.deepEqual(
        failures.map((r) => ('error' in r ? String((r.error as Error).cause ?? r.error) : `${r.status} ${r.body}`)),
        [],
        'every request of the burst answered 201',
      );

      assert.deepEqual(await exitWithin(server, 30_000), { code: 0, signal: null }, server.output());
      assert.ok(!/shutdown timed out|did not stop in time/.test(server.output()), server.output());
      const notes = server.lines.filter((line) => {
        const entry = logEntry(line) as { msg?: string; route?: string; status?: number } | undefined;
        return entry?.msg === 'request' && entry.route === '/api/notes' && entry.status === 201;
      });
      assert.equal(notes.length, BURST, 'one logged 201 per request of the burst');
      const refused = await get(`${base}/readyz`).then(
        () => 'answered',
        (error: NodeJS.ErrnoException) => error.code,
      );
      assert.equal(refused, 'ECONNREFUSED');
    });
  });
}

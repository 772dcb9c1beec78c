import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { CRASH_LIMIT, CRASH_WINDOW_MS, readWorkers, restartDelayMs } from '../../src/cluster.js';
import { ConfigError } from '../../src/config.js';
import { GOOD_PASSWORD, TEST_ENV, uniqueName } from '../helpers/harness.js';
import { exitWithin, logEntry, startProcess, type ServerProcess } from '../helpers/server-process.js';
import { entryArgs } from '../helpers/entry.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('WORKERS', () => {
  test('defaults to 1 and accepts whole numbers from 1 to 64', () => {
    assert.equal(readWorkers({}), 1);
    assert.equal(readWorkers({ WORKERS: '' }), 1);
    assert.equal(readWorkers({ WORKERS: ' 2 ' }), 2);
    assert.equal(readWorkers({ WORKERS: '64' }), 64);
    for (const bad of ['0', '65', '1.5', '-1', 'two', '2x']) {
      assert.throws(() => readWorkers({ WORKERS: bad }), ConfigError, bad);
    }
  });

  test('an invalid value stops start-up with exit code 2 and names the variable', { timeout: 60_000 }, () => {
    const run = spawnSync(process.execPath, entryArgs('main'), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', WORKERS: 'many', DATABASE_URL: 'sqlite::memory:' },
      encoding: 'utf8',
      timeout: 50_000,
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /WORKERS must be a whole number from 1 to 64/);
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('WORKERS=2 on the real server', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-cluster-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('two processes share the port and the (generated) secrets, and SIGTERM stops them all with exit 0', {
    timeout: 120_000,
  }, async () => {
    const port = await freePort();
    // No JWT_SECRET/CSRF_SECRET: the primary generates them once for both workers.
    const server = startProcess(process.execPath, entryArgs('main'), {
      cwd: ROOT,
      env: {
        ...TEST_ENV,
        HOME: dir,
        PORT: String(port),
        HOST: '127.0.0.1',
        WORKERS: '2',
        DATABASE_URL: `sqlite:${path.join(dir, 'vellum.db')}`,
        PWNED_PASSWORDS_URL: 'off',
        RATE_LIMIT: 'off',
        LOG_LEVEL: 'info',
      },
    });
    try {
      await server.waitFor(
        (line) => (logEntry(line)?.msg === 'all workers listening' ? true : undefined),
        90_000,
        'both workers listening',
      );
      const base = `http://127.0.0.1:${port}`;
      const username = uniqueName('cluster');
      const json = { 'content-type': 'application/json' };
      const signup = await fetch(`${base}/api/auth/signup`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ username, password: GOOD_PASSWORD }),
      });
      assert.equal(signup.status, 201, await signup.text());
      const login = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ username, password: GOOD_PASSWORD }),
      });
      assert.equal(login.status, 200);
      const { access_token: token } = (await login.json()) as { access_token: string };

      // A new connection per request: the primary deals them out round-robin, so both workers
      // answer, and each accepts a token the other signed.
      for (let i = 0; i < 12; i++) {
        const status = await new Promise<number>((resolve, reject) => {
          http
            .get(`${base}/api/auth/me`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            })
            .on('error', reject);
        });
        assert.equal(status, 200);
      }
      // Request lines are buffered (written at the latest every 100 ms): wait for the twelfth.
      const meLines = () =>
        server.lines.map(logEntry).filter((entry) => entry?.msg === 'request' && entry.route === '/api/auth/me');
      let seen = 0;
      await server.waitFor(
        (line) => {
          const entry = logEntry(line);
          return entry?.msg === 'request' && entry.route === '/api/auth/me' && ++seen === 12 ? true : undefined;
        },
        10_000,
        'twelve /api/auth/me request lines',
      );
      assert.equal(meLines().length, 12, 'one request line per request');
      const pids = new Set(meLines().map((entry) => entry!.pid));
      assert.equal(pids.size, 2, `expected both workers to answer, saw ${[...pids].join(', ')}`);
      assert.equal((server.output().match(/applied database migrations/g) ?? []).length, 1, 'migrations ran once');

      server.child.kill('SIGTERM');
      assert.deepEqual(await exitWithin(server, 30_000), { code: 0, signal: null }, server.output());
    } finally {
      await server.kill();
    }
  });
});

describe('WORKERS=2: a worker that dies is replaced', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-cluster-crash-'));
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test(`a worker killed right after its start is replaced and the other keeps serving; ${CRASH_LIMIT} deaths within the window stop the service`, {
    timeout: 150_000,
  }, async () => {
    const port = await freePort();
    server = startProcess(process.execPath, entryArgs('main'), {
      cwd: ROOT,
      env: {
        ...TEST_ENV,
        HOME: dir,
        PORT: String(port),
        HOST: '127.0.0.1',
        WORKERS: '2',
        DATABASE_URL: `sqlite:${path.join(dir, 'vellum.db')}`,
        PWNED_PASSWORDS_URL: 'off',
        RATE_LIMIT: 'off',
        LOG_LEVEL: 'info',
        SHUTDOWN_DRAIN_SECONDS: '0',
      },
    });
    const pids = await server.waitFor(
      (line) => {
        const entry = logEntry(line) as { msg?: string; workerPids?: number[] } | undefined;
        return entry?.msg === 'all workers listening' ? entry.workerPids : undefined;
      },
      90_000,
      'all workers listening',
    );
    assert.equal(pids?.length, 2);
    const [victim, survivor] = pids as [number, number];
    const replacements: number[] = [];
    const nextReplacement = () =>
      server!.waitFor(
        (line) => {
          const entry = logEntry(line) as { msg?: string; workerPid?: number } | undefined;
          return entry?.msg === 'replacement worker listening' && !replacements.includes(entry.workerPid!)
            ? entry.workerPid
            : undefined;
        },
        60_000,
        'a replacement worker',
      );

    // Well within 10 s of its start: this used to stop the whole service.
    process.kill(victim, 'SIGKILL');
    replacements.push((await nextReplacement())!);
    assert.doesNotThrow(() => process.kill(survivor, 0), 'the healthy worker was left running');
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 4; i++)
      assert.equal((await fetch(`${base}/healthz`, { headers: { connection: 'close' } })).status, 200);
    const delays = () =>
      server!.lines.flatMap((line) => {
        const entry = logEntry(line) as { msg?: string; delayMs?: number } | undefined;
        return entry?.msg?.startsWith('worker exited unexpectedly') === true ? [entry.delayMs] : [];
      });
    assert.deepEqual(delays(), [restartDelayMs(1)]);

    // The replacements keep dying: back-off doubles, and the limit stops the service with a non-zero exit.
    for (let death = 2; death < CRASH_LIMIT; death++) {
      process.kill(replacements.at(-1)!, 'SIGKILL');
      replacements.push((await nextReplacement())!);
    }
    assert.deepEqual(
      delays(),
      Array.from({ length: CRASH_LIMIT - 1 }, (_, i) => restartDelayMs(i + 1)),
    );
    process.kill(replacements.at(-1)!, 'SIGKILL');
    const outcome = await exitWithin(server, 30_000);
    assert.deepEqual(outcome, { code: 1, signal: null }, server.output());
    assert.match(
      server.output(),
      new RegExp(`workers keep dying \\(${CRASH_LIMIT} within ${CRASH_WINDOW_MS / 1000} s\\); stopping the service`),
    );
    assert.throws(() => process.kill(survivor, 0), 'the survivor was stopped with the service');
  });
});

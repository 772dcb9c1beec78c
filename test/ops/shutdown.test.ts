import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CSRF_SECRET, GOOD_PASSWORD, JWT_SECRET, TEST_ENV, uniqueName } from '../helpers/harness.js';
import { entryArgs } from '../helpers/entry.js';
import { exitWithin, logEntry, startProcess, type ServerProcess } from '../helpers/server-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('graceful shutdown of the real server', () => {
  let dir: string;
  let server: ServerProcess | undefined;
  let port: number;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-shutdown-'));
    server = startProcess(process.execPath, entryArgs('main'), {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...TEST_ENV,
        HOME: dir,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${path.join(dir, 'vellum.db')}`,
        JWT_SECRET,
        CSRF_SECRET,
        PWNED_PASSWORDS_URL: 'off',
        RATE_LIMIT: 'off',
        LOG_LEVEL: 'info',
      },
    });
    port = await server.port();
  });

  after(async () => {
    await server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('SIGTERM (even twice) lets an in-flight request finish, then exits 0 and refuses new connections', {
    timeout: 90_000,
  }, async () => {
    const base = `http://127.0.0.1:${port}`;
    const username = uniqueName('shutdown');
    const signup = await fetch(`${base}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: GOOD_PASSWORD }),
    });
    assert.equal(signup.status, 201, await signup.text());
    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: GOOD_PASSWORD }),
    });
    assert.equal(login.status, 200);
    const { access_token: token } = (await login.json()) as { access_token: string };

    const body = Buffer.from(JSON.stringify({ title: 'in flight', content: 'x'.repeat(10_000) }));
    const half = Math.floor(body.length / 2);
    // `Expect: 100-continue`: the server answers 100 once it has read the headers and started the
    // request, so SIGTERM below arrives while the request is certainly in progress.
    // A client that keeps connections open (like a reverse proxy): the server must close this one
    // once its response is out, not wait for the client to give up on it.
    const agent = new http.Agent({ keepAlive: true });
    const request = http.request(`${base}/api/notes`, {
      agent,
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': String(body.length),
        expect: '100-continue',
      },
    });
    const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>(
      (resolve, reject) => {
        request.on('response', (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += String(chunk);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
          res.on('error', reject);
        });
        request.on('error', reject);
      },
    );
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no 100 Continue')), 30_000);
      request.once('continue', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    await new Promise<void>((resolve, reject) =>
      request.write(body.subarray(0, half), (err) => (err ? reject(err) : resolve())),
    );

    const { child, lines } = server!;
    assert.ok(child.kill('SIGTERM'));
    // The server has seen the signal before the rest of the body arrives.
    await server!.waitFor(
      (line) => (logEntry(line)?.msg === 'shutting down' ? true : undefined),
      30_000,
      'shutting down',
    );
    // A process manager that signals `npm start`'s process group reaches the server twice (directly,
    // and forwarded by npm): the second signal must not cut the shutdown short (npm reported 143).
    assert.ok(child.kill('SIGTERM'));
    request.end(body.subarray(half));

    const res = await response;
    assert.equal(res.status, 201, res.text);
    const note = JSON.parse(res.text) as { id: string; title: string; content: string; version: number };
    assert.equal(note.title, 'in flight');
    assert.equal(note.content.length, 10_000);
    assert.equal(res.headers.location, `/api/notes/${note.id}`);
    // The server ends the connection with this response instead of keeping it for another request.
    assert.equal(res.headers.connection, 'close');
    agent.destroy();

    const outcome = await exitWithin(server!, 20_000);
    assert.deepEqual(outcome, { code: 0, signal: null }, lines.join('\n'));
    assert.ok(!lines.some((line) => /shutdown timed out|shutdown failed/.test(line)), lines.join('\n'));
    // Log lines are buffered; what was still in the buffer is written as the process exits.
    assert.ok(
      lines.some((line) => {
        const entry = logEntry(line) as { msg?: string; route?: string; status?: number } | undefined;
        return entry?.msg === 'request' && entry.route === '/api/notes' && entry.status === 201;
      }),
      lines.join('\n'),
    );

    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    });
    assert.equal(refused, 'ECONNREFUSED');
  });
});

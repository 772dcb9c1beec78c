import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { GOOD_PASSWORD, TEST_ENV, uniqueName } from '../helpers/harness.js';
import { exitWithin, logEntry, startProcess, type ServerProcess } from '../helpers/server-process.js';
import { entryArgs } from '../helpers/entry.js';

// A development server started as a person starts it: no secrets set, a SQLite file. It says
// where to open it, and a restart keeps everyone signed in.
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('a development start without JWT_SECRET/CSRF_SECRET', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-devstart-'));
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const spawnMain = (extra: Record<string, string> = {}) =>
    startProcess(process.execPath, entryArgs('main'), {
      cwd: ROOT,
      env: {
        ...TEST_ENV,
        HOME: dir,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${path.join(dir, 'data', 'vellum.db')}`,
        PWNED_PASSWORDS_URL: 'off',
        RATE_LIMIT: 'off',
        ...extra,
      },
    });
  /** A start that fails: it exits 1; its error and fatal log entries. */
  const failedStart = async (extra: Record<string, string>) => {
    const failed = spawnMain(extra);
    assert.deepEqual(await exitWithin(failed, 20_000), { code: 1, signal: null }, failed.output());
    return { failed, said: failed.lines.map(logEntry).filter((entry) => Number(entry?.level) >= 50) };
  };
  const start = async (extra: Record<string, string> = {}) => {
    server = spawnMain(extra);
    const port = await server.port();
    const ready = await server.waitFor(
      (line) => (line.startsWith('Vellum is ready') ? line : undefined),
      10_000,
      'the ready line',
    );
    return { port, ready };
  };
  const stop = async () => {
    server!.child.kill('SIGINT');
    assert.deepEqual(await exitWithin(server!, 20_000), { code: 0, signal: null }, server!.output());
  };

  test('prints one plain line with the address, and sign-ins survive a restart', async () => {
    const first = await start();
    assert.equal(first.ready, `Vellum is ready: open http://localhost:${first.port}/ in a browser`);
    const base = `http://127.0.0.1:${first.port}`;
    const username = uniqueName('dev');
    assert.equal(
      (
        await fetch(`${base}/api/auth/signup`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, password: GOOD_PASSWORD }),
        })
      ).status,
      201,
    );
    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: GOOD_PASSWORD }),
    });
    assert.equal(login.status, 200);
    const { access_token: token } = (await login.json()) as { access_token: string };
    const secrets = path.join(dir, 'data', '.vellum-secrets.json');
    assert.equal(fs.statSync(secrets).mode & 0o777, 0o600, 'readable by its owner only');
    await stop();

    const second = await start();
    const me = await fetch(`http://127.0.0.1:${second.port}/api/auth/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(me.status, 200, 'the token signed before the restart is still good');
    await stop();

    // Set secrets win over the kept ones: the same token is then refused.
    const third = await start({ JWT_SECRET: 'x'.repeat(16) + 'y'.repeat(16) + 'z', CSRF_SECRET: 'c'.repeat(40) });
    assert.equal(
      (await fetch(`http://127.0.0.1:${third.port}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } }))
        .status,
      401,
    );
    await stop();
  });

  test('a DATABASE_URL naming a file that is no database: exit 1 with one line saying so, no stack trace', async () => {
    const text = path.join(dir, 'notes.txt');
    fs.writeFileSync(text, 'just some text, not a database\n'.repeat(100));
    const { failed, said } = await failedStart({ DATABASE_URL: `sqlite:${text}` });
    assert.deepEqual(
      said.map((entry) => entry!.msg),
      ['start-up failed: the database cannot be opened: file is not a database'],
      failed.output(),
    );
    assert.equal(said[0]!.err, undefined, 'no error object, so no stack');
    assert.doesNotMatch(failed.output(), /\n\s+at /);
  });

  test('a port in use: exit 1 with one line naming it, no stack trace', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const { failed, said } = await failedStart({
        PORT: String(port),
        DATABASE_URL: `sqlite:${path.join(dir, 'port', 'vellum.db')}`,
      });
      assert.deepEqual(
        said.map((entry) => [entry!.msg, entry!.err]),
        [[`start-up failed: listen EADDRINUSE: address already in use 127.0.0.1:${port}`, undefined]],
        failed.output(),
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  test('PUBLIC_URL is the address shown', async () => {
    const { ready } = await start({ PUBLIC_URL: 'https://notes.example.com' });
    assert.equal(ready, 'Vellum is ready: open https://notes.example.com/ in a browser');
    await stop();
  });
});

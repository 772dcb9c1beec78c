import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { before, after, test } from 'node:test';
import { promisify } from 'node:util';
import { forEachDatabase, GOOD_PASSWORD, newSession, type Session } from '../helpers/harness.js';

/**
 * WebDAV against the independent judges: litmus (the compliance suite), rclone and cadaver (real
 * clients), each run as its own process against a listening server. .ci/run installs them; outside
 * CI a missing one is skipped with a message saying how to install it, in CI it fails.
 */
const run = promisify(execFile);

async function installed(command: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${command}`]);
    return true;
  } catch {
    return false;
  }
}

async function skipUnless(command: string): Promise<string | false> {
  if (await installed(command)) return false;
  if (process.env.CI !== undefined)
    assert.fail(`${command} is not installed, and CI must run this test (apt-get install ${command})`);
  const reason = `${command} is not installed: apt-get install ${command} to run this test`;
  console.warn(`!!! SKIPPED: ${reason}`);
  return reason;
}

const tools = {
  litmus: await skipUnless('litmus'),
  rclone: await skipUnless('rclone'),
  cadaver: await skipUnless('cadaver'),
};

forEachDatabase('WebDAV with real clients', (ctx) => {
  let base = '';
  let user: Session;
  let token = '';
  let scratch = '';
  before(async () => {
    await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const address = ctx.app.server.address();
    assert.ok(address !== null && typeof address === 'object');
    base = `http://127.0.0.1:${address.port}`;
    user = await newSession(ctx.app, 'dav');
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/tokens',
      headers: user.auth,
      payload: { name: 'clients', scopes: ['dav'], password: GOOD_PASSWORD },
    });
    assert.equal(res.statusCode, 201, res.body);
    token = res.json().token;
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'vellum-dav-'));
  });
  after(async () => {
    await fs.rm(scratch, { recursive: true, force: true });
  });

  test('dot segments sent as they are (no client library resolving them) are refused', async () => {
    for (const raw of ['/dav/a/../secret.md', '/dav/a/%2E%2E/secret.md', '/dav/./x']) {
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const request = http.request(
          `${base}${raw}`,
          {
            method: 'GET',
            headers: { authorization: `Basic ${Buffer.from(`${user.username}:${token}`).toString('base64')}` },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        request.on('error', reject);
        request.path = raw;
        request.end();
      });
      assert.equal(status, 400, raw);
    }
  });

  test('litmus: every suite (basic, copymove, props, locks, http) passes', {
    skip: tools.litmus,
    timeout: 120_000,
  }, async () => {
    const { stdout } = await run('litmus', [`${base}/dav/`, user.username, token], {
      cwd: scratch,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) =>
      assert.fail(`litmus failed:\n${error.stdout}\n${error.stderr}`),
    );
    const summaries = [...stdout.matchAll(/summary for `(\w+)': of (\d+) tests run: (\d+) passed, (\d+) failed/g)].map(
      ([, suite, ran, passed, failed]) => ({ suite, ran: Number(ran), passed: Number(passed), failed: Number(failed) }),
    );
    assert.deepEqual(
      summaries.map((s) => s.suite),
      ['basic', 'copymove', 'props', 'locks', 'http'],
      stdout,
    );
    for (const s of summaries) assert.deepEqual([s.suite, s.failed, s.passed], [s.suite, 0, s.ran], stdout);
    assert.doesNotMatch(stdout, /WARNING/, 'litmus raised no warnings');
  });

  test('rclone: a tree of notes and pictures syncs in, checks out identical, and an edit is a new version', {
    skip: tools.rclone,
    timeout: 120_000,
  }, async () => {
    const tree = path.join(scratch, 'tree');
    const write = async (name: string, data: string | Buffer) => {
      await fs.mkdir(path.dirname(path.join(tree, name)), { recursive: true });
      await fs.writeFile(path.join(tree, name), data);
    };
    await write('Hello.md', '# Hello\n\nFirst words #inbox\n');
    await write('Work/Plans/Q1 plan.md', 'plan A\r\nwith CRLF and a NUL \0 kept\n');
    await write('Work/café ünïcode.md', '\ufeffa note that starts with a byte order mark');
    await write('Work/empty.md', '');
    await write('Photos/cat.png', Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(200_000, 7)]));
    await write('Work/data.csv', 'a,b\n1,2\n');
    const env = {
      ...process.env,
      RCLONE_CONFIG: path.join(scratch, 'rclone.conf'),
      RCLONE_CONFIG_VELLUM_TYPE: 'webdav',
      RCLONE_CONFIG_VELLUM_URL: `${base}/dav/`,
      RCLONE_CONFIG_VELLUM_VENDOR: 'other',
      RCLONE_CONFIG_VELLUM_USER: user.username,
      RCLONE_CONFIG_VELLUM_PASS: (await run('rclone', ['obscure', token])).stdout.trim(),
    };
    const rclone = (...args: string[]) =>
      run('rclone', args, { env, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout?: string; stderr?: string }) =>
        assert.fail(`rclone ${args.join(' ')} failed:\n${error.stdout}\n${error.stderr}`),
      );
    await rclone('sync', tree, 'vellum:synced');
    await rclone('check', tree, 'vellum:synced');
    const copy = path.join(scratch, 'copy');
    await rclone('copy', 'vellum:synced', copy);
    for (const name of [
      'Hello.md',
      'Work/Plans/Q1 plan.md',
      'Work/café ünïcode.md',
      'Work/empty.md',
      'Photos/cat.png',
      'Work/data.csv',
    ]) {
      assert.deepEqual(await fs.readFile(path.join(copy, name)), await fs.readFile(path.join(tree, name)), name);
    }

    const notes = async () =>
      (await ctx.app.inject({ method: 'GET', url: '/api/notes', headers: user.auth })).json() as Array<{
        id: string;
        title: string;
      }>;
    const hello = (await notes()).find((n) => n.title === 'Hello')!;
    assert.ok(hello, 'the .md file is a note titled by its name');
    assert.deepEqual((await notes()).map((n) => n.title).sort(), ['Hello', 'Q1 plan', 'café ünïcode', 'empty']);

    await write('Hello.md', '# Hello\n\nEdited elsewhere\n');
    await rclone('sync', tree, 'vellum:synced');
    const note = (await ctx.app.inject({ method: 'GET', url: `/api/notes/${hello.id}`, headers: user.auth })).json();
    assert.equal(note.version, 2);
    assert.equal(note.content, '# Hello\n\nEdited elsewhere\n');
    await rclone('check', tree, 'vellum:synced');
  });

  test('cadaver: lock, put, propset, move, copy, delete', { skip: tools.cadaver, timeout: 60_000 }, async () => {
    const home = path.join(scratch, 'cadaver-home');
    await fs.mkdir(home, { recursive: true });
    await fs.writeFile(path.join(home, '.netrc'), `machine 127.0.0.1\nlogin ${user.username}\npassword ${token}\n`, {
      mode: 0o600,
    });
    await fs.writeFile(path.join(home, 'local.md'), 'written by cadaver\n');
    const script = [
      'mkcol cad',
      'cd cad',
      'lock a.md',
      `put ${path.join(home, 'local.md')} a.md`,
      'propset a.md colour blue',
      'propget a.md colour',
      'unlock a.md',
      'move a.md b.md',
      'copy b.md c.md',
      'delete c.md',
      'ls',
    ].join('\n');
    await fs.writeFile(path.join(home, 'script'), `${script}\n`);
    const running = run('cadaver', ['-r', path.join(home, 'script'), `${base}/dav/`], {
      env: { ...process.env, HOME: home },
      timeout: 30_000,
    });
    running.child.stdin?.end(); // cadaver reads commands from its input once the script ends
    const { stdout } = await running;
    for (const step of [
      "Creating `cad': succeeded",
      "Locking `a.md': succeeded",
      "Setting property on `a.md': succeeded",
      'Value of colour is: blue',
      "Unlocking `a.md': succeeded",
      "to `/dav/cad/b.md':  succeeded",
      "to `/dav/cad/c.md':  succeeded",
      "Deleting `c.md': succeeded",
    ]) {
      assert.ok(stdout.includes(step), `${step}\n${stdout}`);
    }
    assert.match(stdout, /b\.md\s+19/);
    assert.doesNotMatch(stdout, /c\.md\s+\d/);
    const titles = (
      (await ctx.app.inject({ method: 'GET', url: '/api/notes', headers: user.auth })).json() as Array<{
        title: string;
      }>
    ).map((n) => n.title);
    assert.ok(titles.includes('b') && !titles.includes('a') && !titles.includes('c'), JSON.stringify(titles));
    const trash = (
      (await ctx.app.inject({ method: 'GET', url: '/api/trash', headers: user.auth })).json() as Array<{
        title: string;
      }>
    ).map((n) => n.title);
    assert.ok(trash.includes('c'), 'the deleted note is in the trash');
  });
});

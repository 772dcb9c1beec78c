import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { forEachDatabase } from '../helpers/harness.js';
import { healthDuring, listening, STALL_P99_MS } from '../helpers/stall.js';
import { assertTooDeep, bodyRoutes, deepBody, deepBodyOfSize, injectBody, nearLimitSizes, type BodyRoute } from './deep-bodies.js';

/**
 * Issue #37, findings 3 and 6: a 168 KB PROPFIND of 24,000 nested elements held the event loop
 * 22 s, and 6.5 MiB of `[[[…]]]` on POST /api/notes 6.1 s. Now, for every route that takes a JSON
 * or XML body (the sweep of deep-bodies.ts), a body nested 10,000 deep and one as deep as the
 * route's limit allows are refused while another client's /healthz keeps answering within
 * STALL_P99_MS (CONTRACT.md part 3: "No request of any size holds the event loop for more than
 * 100 ms"). The bodies are built, and their clients started, before the clock starts.
 */

/**
 * A client in a process of its own, as a client would be (import-stall.test.ts: written by this
 * process, a 64 MiB body took 100-150 ms of the event loop being measured). It is started, and has
 * read the body, before the clock starts (forking this process can take that long too); `send`
 * tells it to go and resolves its answer.
 */
async function client(base: string, route: BodyRoute, body: Buffer): Promise<{ send(): Promise<Answer> }> {
  const file = path.join(directory, 'body');
  await writeFile(file, body);
  const script = `
    const http = require('node:http');
    const [url, method, headers, file] = JSON.parse(process.argv[1]);
    const body = require('node:fs').readFileSync(file);
    process.stdout.write('ready\\n');
    process.stdin.once('data', () => {
      const request = http.request(url, { method, agent: false, headers: { ...headers, 'content-length': body.length } }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => { text += chunk; });
        response.on('end', () => { process.stdout.write(JSON.stringify({ statusCode: response.statusCode, headers: response.headers, body: text })); process.exit(0); });
      });
      request.on('error', (error) => { process.stderr.write(String(error)); process.exit(1); });
      request.end(body);
    });`;
  const child = spawn(process.execPath, ['-e', script, JSON.stringify([`${base}${route.url}`, route.method, route.headers, file])], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { err += chunk; });
  const closed = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  await new Promise<void>((resolve, reject) => {
    const ready = () => (out.startsWith('ready\n') ? resolve() : undefined);
    child.stdout.on('data', ready);
    closed.then((code) => reject(new Error(`client exited ${code} before it was ready: ${err}`)), reject);
  });
  return {
    async send() {
      child.stdin.end('go\n');
      const code = await closed;
      if (code !== 0) throw new Error(`client exited ${code}: ${err}`);
      const answer = JSON.parse(out.slice('ready\n'.length)) as Omit<Answer, 'json'>;
      return { ...answer, json: () => JSON.parse(answer.body) };
    },
  };
}

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
  json(): unknown;
}

let directory: string;
before(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'vellum-deep-'));
});
after(async () => {
  await rm(directory, { recursive: true, force: true });
});

forEachDatabase('deep bodies stall', (ctx) => {
  let routes: BodyRoute[];
  let base: string;
  before(async () => {
    routes = await bodyRoutes(ctx);
    base = await listening(ctx.app);
  });

  async function assertNoStall(route: BodyRoute, body: Buffer, what: string): Promise<void> {
    const { send } = await client(base, route, body);
    const { result, samples, p99 } = await healthDuring(base, send);
    assertTooDeep(route, result);
    assert.ok(p99 < STALL_P99_MS, `${route.name}, ${what}: /healthz p99 ${p99.toFixed(1)} ms: ${samples.map((x) => x.toFixed(1)).join(' ')}`);
  }

  test('the 168 KB PROPFIND of 24,000 levels and 6.5 MiB of [[[…]]] on POST /api/notes (the report\'s own bodies)', async () => {
    const propfind = routes.find((r) => r.name === 'PROPFIND /dav/Deep.md')!;
    const notes = routes.find((r) => r.name === 'POST /api/notes')!;
    await assertNoStall(propfind, Buffer.from(deepBody('xml', 24_000)), '24,000 levels');
    await assertNoStall(notes, Buffer.from(deepBodyOfSize('json', 6.5 * 1024 * 1024)), '6.5 MiB');
  });

  test('every JSON and XML route: 10,000 levels, and as deep as its body limit allows', async () => {
    for (const route of routes) {
      await assertNoStall(route, Buffer.from(deepBody(route.kind, 10_000, false)), '10,000 levels');
      // The largest size the route takes, found outside the measurement.
      let near: Buffer | undefined;
      for (const size of nearLimitSizes(route.kind)) {
        const body = deepBodyOfSize(route.kind, size);
        if ((await injectBody(ctx.app, route, body)).statusCode !== 413) {
          near = Buffer.from(body);
          break;
        }
      }
      assert.ok(near, route.name);
      await assertNoStall(route, near, `${near.length} bytes`);
    }
  });
});

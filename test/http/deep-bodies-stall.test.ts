import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { forEachDatabase } from '../helpers/harness.js';
import { assertNoStall, healthDuring, listening, STALL_ENV } from '../helpers/stall.js';
import {
  assertTooDeep,
  bodyRoutes,
  deepBody,
  deepBodyOfSize,
  injectBody,
  nearLimitSizes,
  type BodyRoute,
} from './deep-bodies.js';

/**
 * Issue #37, findings 3 and 6: a 168 KB PROPFIND of 24,000 nested elements held the event loop
 * 22 s, and 6.5 MiB of `[[[…]]]` on POST /api/notes 6.1 s. Now, for every route that takes a JSON
 * or XML body (the sweep of deep-bodies.ts), a body nested 10,000 deep and one as deep as the
 * route's limit allows are refused while another client's /healthz keeps answering and no turn of the
 * event loop takes long (helpers/stall.ts; the wall-clock figure, "no request of any size holds the
 * event loop for more than 100 ms", is bench/stall.ts's). The bodies are built, and their clients started, before the clock starts.
 */

/** One request of the hostile sequence: the body waits in a file. */
interface Job {
  route: BodyRoute;
  file: string;
}

/**
 * A client in a process of its own, as a client would be (import-stall.test.ts: written by this
 * process, a 64 MiB body took 100-150 ms of the event loop being measured), started before the
 * clock (forking this process can take that long too). `send` tells it to go: it sends the jobs
 * one after the other, each body read from its file just before, and resolves their answers.
 */
async function client(base: string, jobs: Job[]): Promise<{ send(): Promise<Answer[]> }> {
  const script = `
    const http = require('node:http');
    const fs = require('node:fs');
    const jobs = JSON.parse(process.argv[1]);
    const one = ({ url, method, headers, file }) => new Promise((resolve, reject) => {
      const body = fs.readFileSync(file);
      const request = http.request(url, { method, agent: false, headers: { ...headers, 'content-length': body.length } }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => { text += chunk; });
        response.on('end', () => resolve({ statusCode: response.statusCode, headers: response.headers, body: text }));
      });
      request.on('error', reject);
      request.end(body);
    });
    process.stdout.write('ready\\n');
    process.stdin.once('data', async () => {
      const answers = [];
      for (const job of jobs) answers.push(await one(job));
      process.stdout.write(JSON.stringify(answers));
      process.exit(0);
    });`;
  const list = jobs.map(({ route, file }) => ({
    url: `${base}${route.url}`,
    method: route.method,
    headers: route.headers,
    file,
  }));
  const child = spawn(process.execPath, ['-e', script, JSON.stringify(list)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const closed = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => (out.startsWith('ready\n') ? resolve() : undefined));
    closed.then((code) => reject(new Error(`client exited ${code} before it was ready: ${err}`)), reject);
  });
  return {
    async send() {
      child.stdin.end('go\n');
      const code = await closed;
      if (code !== 0) throw new Error(`client exited ${code}: ${err}`);
      const answers = JSON.parse(out.slice('ready\n'.length)) as Array<Omit<Answer, 'json'>>;
      return answers.map((answer) => ({ ...answer, json: () => JSON.parse(answer.body) }));
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
let files = 0;
before(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'vellum-deep-'));
});
after(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function job(route: BodyRoute, body: string): Promise<Job> {
  const file = path.join(directory, `body-${files++}`);
  await writeFile(file, body);
  return { route, file };
}

forEachDatabase(
  'deep bodies stall',
  (ctx) => {
    let routes: BodyRoute[];
    let base: string;
    before(async () => {
      routes = await bodyRoutes(ctx);
      base = await listening(ctx.app);
    });

    /** Sends the jobs in a row from one client while /healthz is probed; every answer is the 400. */
    async function assertRefusedNoStall(label: string, jobs: Job[]): Promise<void> {
      const { send } = await client(base, jobs);
      const probed = await healthDuring(base, send);
      const { result } = probed;
      jobs.forEach(({ route }, i) => assertTooDeep(route, result[i]!));
      assertNoStall(probed, `[${ctx.kind}] ${label}`);
    }

    test("the 168 KB PROPFIND of 24,000 levels and 6.5 MiB of [[[…]]] on POST /api/notes (the report's own bodies)", async () => {
      const propfind = routes.find((r) => r.name === 'PROPFIND /dav/Deep.md')!;
      const notes = routes.find((r) => r.name === 'POST /api/notes')!;
      await assertRefusedNoStall("the report's own bodies", [
        await job(propfind, deepBody('xml', 24_000)),
        await job(notes, deepBodyOfSize('json', 6.5 * 1024 * 1024)),
      ]);
    });

    test('every JSON and XML route: 10,000 levels, and as deep as its body limit allows', async () => {
      const jobs: Job[] = [];
      for (const route of routes) {
        jobs.push(await job(route, deepBody(route.kind, 10_000, false)));
        // The largest size the route takes, found before the clock starts.
        let near: string | undefined;
        for (const size of nearLimitSizes(route.kind)) {
          const body = deepBodyOfSize(route.kind, size);
          if ((await injectBody(ctx.app, route, body)).statusCode !== 413) {
            near = body;
            break;
          }
        }
        assert.ok(near !== undefined, route.name);
        jobs.push(await job(route, near));
      }
      await assertRefusedNoStall('every JSON and XML route', jobs);
    });

    // Review of #37: shallow 1 MiB XML bodies that saxes reads a character at a time still held the
    // loop 131-226 ms (one CDATA section of `]`, a processing instruction of `?`, a comment of `-a`,
    // CR LF text). The WebDAV XML limit is now 256 KiB (XML_LIMITS): each of them at that size.
    test('WebDAV XML read a character at a time, as large as the limit allows: answered, /healthz answered meanwhile', async () => {
      const propfind = routes.find((r) => r.name === 'PROPFIND /dav/Deep.md')!;
      const size = nearLimitSizes('xml')[0]! - 100;
      const wrap = (inner: string) =>
        `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop>${inner}</D:propfind>`;
      const bodies = [
        wrap(`<![CDATA[${']'.repeat(size)}]]>`),
        `<?xml version="1.0"?><?pi ${'?'.repeat(size)}?>${wrap('')}`,
        wrap(`<!--${'-a'.repeat(size / 2)}-->`),
        wrap('\r\n'.repeat(size / 2)),
        wrap('\r'.repeat(size)),
      ];
      const jobs = await Promise.all(bodies.map((body) => job(propfind, body)));
      const { send } = await client(base, jobs);
      const probed = await healthDuring(base, send);
      const { result } = probed;
      for (const answer of result)
        assert.ok(
          answer.statusCode === 207 || answer.statusCode === 400,
          `${answer.statusCode} ${answer.body.slice(0, 200)}`,
        );
      assertNoStall(probed, `[${ctx.kind}] WebDAV XML read a character at a time`);
    });
  },
  STALL_ENV,
);

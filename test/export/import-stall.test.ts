import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { before, test } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { assertNoStall, healthDuring, listening, STALL_ENV } from '../helpers/stall.js';

/**
 * Issue #19, finding 3: a 64 MiB import document of 22 million `{}` froze the process for 30 s and
 * took 2.7 GB. Now its bytes go to a worker thread as they arrive, their counts are checked before
 * anything is built, and /healthz keeps answering; a large valid import does not stall either.
 */

const IMPORT_MAX_BYTES = 64 * 1024 * 1024;
const peakRssMiB = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

/** The peak RSS growth, for bench/stall.ts (VELLUM_STALL_FIGURES): a figure, not a test's bound. */
function recordRss(label: string, grownMiB: number): void {
  const file = process.env.VELLUM_STALL_FIGURES;
  if (file) fs.appendFileSync(file, `${JSON.stringify({ kind: 'rss', label, grownMiB })}\n`);
}

function post(
  base: string,
  s: Session,
  body: Buffer,
  type = 'application/json',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${base}/api/import`,
      {
        method: 'POST',
        agent: false,
        headers: { ...s.auth, 'content-type': type, 'content-length': body.length },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode!, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A valid document of `count` notes of about 16 KB each (over 256 KiB: it takes the worker path). */
function documentOf(count: number): Buffer {
  const content = 'lorem ipsum dolor sit amet '.repeat(600);
  const notes = Array.from({ length: count }, (_, i) => ({
    id: 'x',
    title: `Note ${i}`,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
    versions: [
      {
        version: 1,
        title: `Note ${i}`,
        content: `${i} ${content}`,
        created_at: '2025-01-01T00:00:00.000Z',
        label: null,
        restored_from: null,
      },
    ],
  }));
  return Buffer.from(
    JSON.stringify({
      format: 'vellum-export',
      format_version: 1,
      exported_at: '2026-01-01T00:00:00.000Z',
      username: 'x',
      notes,
    }),
  );
}

/**
 * POSTs `head`, then `count` × `{},` (the last without its comma), then `]}` from a child process:
 * built and sent by this test's own process, the 64 MiB body took the event loop from the service
 * it measures (the probes' latency rose while the client wrote it, by 100-150 ms at times).
 */
function postFromChild(
  base: string,
  s: Session,
  head: string,
  count: number,
): Promise<{ status: number; body: string }> {
  const script = `
    const http = require('node:http');
    const [url, auth, head, count] = JSON.parse(process.argv[1]);
    const body = Buffer.concat([Buffer.from(head), Buffer.alloc(count * 3 - 1, '{},'), Buffer.from(']}')]);
    const request = http.request(url, { method: 'POST', agent: false, headers: { ...auth, 'content-type': 'application/json', 'content-length': body.length } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { text += chunk; });
      response.on('end', () => process.stdout.write(JSON.stringify({ status: response.statusCode, body: text })));
    });
    request.on('error', (error) => { process.stderr.write(String(error)); process.exitCode = 1; });
    request.end(body);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, JSON.stringify([`${base}/api/import`, s.auth, head, count])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as { status: number; body: string })
        : reject(new Error(`client exited ${code}: ${err}`)),
    );
  });
}

// A request time-out of its own: on a busy machine these bodies took longer than the default 30 s to
// arrive and be read (408, or a reset), which is not what these tests are about.
forEachDatabase(
  'import stall',
  (ctx) => {
    before(async () => {
      // The first worker of a test process loads its modules through tsx's loader (compiling them):
      // a start-up cost of running from source, which the built service does not pay and these
      // tests do not measure.
      const s = await newSession(ctx.app);
      const res = await post(await listening(ctx.app), s, documentOf(20));
      assert.equal(res.status, 201, res.body);
    });

    test('64 MiB of `{}` notes: 400 naming the limit (counted, not built), /healthz answered meanwhile', async () => {
      const head =
        '{"format":"vellum-export","format_version":1,"exported_at":"2026-01-01T00:00:00.000Z","username":"x","notes":[';
      const count = Math.floor((IMPORT_MAX_BYTES - head.length - 1) / 3);
      const length = head.length + count * 3 - 1 + 2;
      assert.ok(length <= IMPORT_MAX_BYTES && count > 22_000_000);
      const s = await newSession(ctx.app);
      const base = await listening(ctx.app);
      const rssBefore = peakRssMiB();
      const probed = await healthDuring(base, () => postFromChild(base, s, head, count));
      const { result } = probed;
      assert.equal(result.status, 400, result.body);
      assert.deepEqual(JSON.parse(result.body), {
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail: 'Invalid import document: notes must hold at most 100000 notes',
        code: 'invalid_import',
      });
      // Before: JSON.parse built 22 million objects, 2.2 GB more at its peak. The memory is bounded by
      // construction now: the body goes to the worker (never gathered on the main thread), whose heap
      // is capped (workerHeapMb); building these notes there would exceed the cap and answer "it needs
      // more memory to read than an import may use", not the count above, which is read before anything
      // is built. The RSS figure is bench/stall.ts's.
      assertNoStall(probed, `[${ctx.kind}] import of 64 MiB of {}`);
      recordRss(`[${ctx.kind}] import of 64 MiB of {}`, peakRssMiB() - rssBefore);
    });

    test('a large valid import (24 MB, 1,500 notes) answers 201, /healthz answered meanwhile', async () => {
      const body = documentOf(1500);
      const s = await newSession(ctx.app);
      const base = await listening(ctx.app);
      const probed = await healthDuring(base, () => post(base, s, body));
      const { result } = probed;
      assert.equal(result.status, 201, result.body);
      assert.deepEqual(JSON.parse(result.body), { notes: 1500, versions: 1500 });
      assertNoStall(probed, `[${ctx.kind}] import of 1,500 notes`);
      const list = await ctx.app.inject({ method: 'GET', url: '/api/notes', headers: s.auth });
      assert.equal((list.json() as unknown[]).length, 1500);
    });

    // Review of #37: the archive's file ids were rewritten by one regular expression alternating all
    // of them, run over the whole document on the event loop before it was checked: 2.4 s from a
    // 198 KB zip; here 10.7-12.5 s: one turn of the event loop, over the CPU bound of assertNoStall.
    test('an archive of 1,000 files and a 32 MiB document of near-ids: 400, /healthz answered meanwhile', async () => {
      const files: Record<string, Uint8Array> = {};
      for (let i = 0; i < 1_000; i++) files[`attachments/${randomUUID()}`] = strToU8(`f${i}`);
      files['vellum-export.json'] = strToU8('0123456789abcdef-'.repeat(Math.ceil((32 << 20) / 17)));
      const zip = Buffer.from(zipSync(files, { level: 9 }));
      const s = await newSession(ctx.app);
      const base = await listening(ctx.app);
      const probed = await healthDuring(base, () => post(base, s, zip, 'application/zip'));
      const { result } = probed;
      assert.equal(result.status, 400, result.body);
      assertNoStall(probed, `[${ctx.kind}] zip of 1,000 files and 32 MiB of near-ids`);
      assert.deepEqual(
        JSON.parse((await ctx.app.inject({ method: 'GET', url: '/api/attachments', headers: s.auth })).body),
        [],
      );
    });

    // An archive refused after its files were stored takes them back: on SQLite each delete
    // answers without leaving the turn, so 1,000 of them were one turn of ~190 ms CPU, 3,000 over
    // half a second. Now the loop yields every 50. SQLite only: a PostgreSQL statement leaves the
    // turn while it waits for its answer, and 3,000 uploads are 18 CPU-s of the suite.
    if (ctx.kind === 'sqlite')
      test('an archive of 3,000 files refused after storing them: taken back, /healthz answered meanwhile', async () => {
        const files: Record<string, Uint8Array> = {};
        for (let i = 0; i < 3_000; i++) files[`attachments/${randomUUID()}`] = strToU8(`f${i}`);
        files['vellum-export.json'] = strToU8('{"format":"vellum-export"}');
        const zip = Buffer.from(zipSync(files, { level: 0 }));
        const s = await newSession(ctx.app);
        const base = await listening(ctx.app);
        const probed = await healthDuring(base, () => post(base, s, zip, 'application/zip'));
        assert.equal(probed.result.status, 400, probed.result.body);
        assertNoStall(probed, `[${ctx.kind}] zip of 3,000 files taken back`);
        assert.deepEqual(
          JSON.parse((await ctx.app.inject({ method: 'GET', url: '/api/attachments', headers: s.auth })).body),
          [],
        );
      });
  },
  STALL_ENV,
);

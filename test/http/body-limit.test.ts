import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { listening } from '../helpers/stall.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const RUNS = 20;

/**
 * Node's fetch (undici) in a process of its own, as a client would run it: POSTs `file` `runs`
 * times in a row and prints one line per run, "<status> <body>" or "error <cause code>".
 * `chunked` sends it as a stream, with no Content-Length.
 */
const FETCH_CLIENT = `
const [url, auth, file, runs, chunked] = process.argv.slice(1);
const body = require('node:fs').readFileSync(file);
(async () => {
  for (let i = 0; i < Number(runs); i++) {
    try {
      const init = { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' } };
      if (chunked === 'chunked') Object.assign(init, { body: new Blob([body]).stream(), duplex: 'half' });
      else init.body = body;
      const res = await fetch(url, init);
      console.log(res.status + ' ' + res.headers.get('content-type') + ' ' + res.headers.get('connection') + ' ' + (await res.text()));
    } catch (error) {
      console.log('error ' + (error.cause?.code ?? error.message));
    }
  }
})();
`;

async function fetchRuns(url: string, s: Session, file: string, chunked = false, runs = RUNS): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    ['-e', FETCH_CLIENT, url, s.auth.authorization, file, String(runs), chunked ? 'chunked' : ''],
    { maxBuffer: MiB },
  );
  return stdout.trim().split('\n');
}

/** curl without `Expect: 100-continue`: it sends the whole body without waiting for a go-ahead. */
async function curlRun(url: string, s: Session, file: string, chunked = false): Promise<string> {
  const args = [
    '-sS',
    '-H',
    'Expect:',
    '-H',
    `authorization: ${s.auth.authorization}`,
    '-H',
    'content-type: application/json',
    ...(chunked ? ['-H', 'Transfer-Encoding: chunked'] : []),
    '--data-binary',
    `@${file}`,
    '-o',
    '-',
    '-w',
    '\\n%{http_code} %{content_type}',
    url,
  ];
  try {
    const { stdout } = await run('curl', args, { maxBuffer: MiB });
    const [body, status] = stdout.split('\n');
    return `${status} ${body}`;
  } catch (error) {
    return `error ${String((error as { stderr?: string }).stderr ?? error).trim()}`;
  }
}

const TOO_LARGE = JSON.stringify({
  type: 'about:blank',
  title: 'Payload Too Large',
  status: 413,
  detail: 'Request body is too large',
  code: 'body_too_large',
});

function assertEveryRunRead413(lines: string[], what: string, runs = RUNS): void {
  assert.equal(lines.length, runs, what);
  const failed = lines.filter((line) => !line.startsWith('413 application/problem+json') || !line.endsWith(TOO_LARGE));
  assert.deepEqual(failed, [], `${what}: ${failed.length} of ${runs} runs did not read the 413`);
}

forEachDatabase("HTTP: a body over its route's limit is a readable 413", (ctx) => {
  let dir: string;
  let base: string;
  let s: Session;
  let noteId: string;
  let importFile: string;
  let noteFile: string;

  before(async () => {
    const app = await ctx.rebuild({ IMPORT_MAX_BYTES: String(MiB) });
    s = await newSession(app, 'big');
    noteId = (await app.inject({ method: 'POST', url: '/api/notes', headers: s.auth, payload: {} })).json().id;
    base = await listening(app);
    dir = await mkdtemp(path.join(os.tmpdir(), 'vellum-413-'));
    importFile = path.join(dir, 'import.json');
    noteFile = path.join(dir, 'note.json');
    // Valid-looking JSON: the size alone is what is refused.
    await writeFile(importFile, JSON.stringify({ format: 'vellum-export', notes: [], pad: 'x'.repeat(4 * MiB) }));
    await writeFile(noteFile, JSON.stringify({ title: 't', content: 'x'.repeat(8 * MiB) }));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test(`POST /api/import of 4 MiB over IMPORT_MAX_BYTES=1 MiB: fetch reads the 413 in ${RUNS} runs of ${RUNS}`, async () => {
    assertEveryRunRead413(await fetchRuns(`${base}/api/import`, s, importFile), 'fetch import');
  });

  test(`POST /api/import of 4 MiB over IMPORT_MAX_BYTES=1 MiB: curl without Expect reads the 413 in ${RUNS} runs of ${RUNS}`, async () => {
    const lines: string[] = [];
    for (let i = 0; i < RUNS; i++) lines.push(await curlRun(`${base}/api/import`, s, importFile));
    assertEveryRunRead413(lines, 'curl import');
  });

  test(`an 8 MiB note body: fetch and curl without Expect read the 413 in ${RUNS} runs of ${RUNS} each`, async () => {
    const url = `${base}/api/notes/${noteId}/versions`;
    assertEveryRunRead413(await fetchRuns(url, s, noteFile), 'fetch note');
    const lines: string[] = [];
    for (let i = 0; i < RUNS; i++) lines.push(await curlRun(url, s, noteFile));
    assertEveryRunRead413(lines, 'curl note');
  });

  test('a chunked body that grows past the limit: fetch and curl read the 413', async () => {
    const runs = 5;
    assertEveryRunRead413(
      await fetchRuns(`${base}/api/import`, s, importFile, true, runs),
      'fetch chunked import',
      runs,
    );
    const lines: string[] = [];
    for (let i = 0; i < runs; i++) lines.push(await curlRun(`${base}/api/notes/${noteId}/versions`, s, noteFile, true));
    assertEveryRunRead413(lines, 'curl chunked note', runs);
  });
});

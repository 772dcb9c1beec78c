// WebDAV benchmark: `npm run bench:dav [-- --db sqlite|postgres]` (also `npm run bench -- --only dav`).
// See BENCHMARKS.md, "WebDAV".
//
// In-process (the app factory and app.inject, like the tests) on a fresh database: one user, a
// folder of 1,000 notes and a 10 KiB note. Each WebDAV request is timed against the JSON API
// request that does the same work, interleaved, so both see the same machine:
//   PROPFIND Depth: 1 of the folder      vs  GET /api/notes?folder={id}
//   GET /dav/…/note.md (10 KiB)           vs  GET /api/notes/{id}
//   PUT /dav/…/note.md (10 KiB, changed)  vs  POST /api/notes/{id}/versions
// p50/p95 in ms, the ratio of the p50s, and CPU per request (this process: app and inject).
import os from 'node:os';
import { parseArgs } from 'node:util';
import { BENCH_USER, keepResult, withInProcessApp } from './lib/in-process.js';
import { percentiles, seededRandom } from './lib/scratch.js';
import { createFolder } from '../src/folders/folders.service.js';
import { createNote } from '../src/notes/notes.service.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite' },
    notes: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '200' },
    'no-write': { type: 'boolean', default: false },
  },
});
const kind = args.db === 'postgres' ? 'postgres' : 'sqlite';
const NOTES = Number(args.notes);
const RUNS = Number(args.runs);
const log = (message: string) =>
  process.stdout.write(`[dav bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const random = seededRandom(11);
const WORDS = ['notes', 'plan', 'meeting', 'draft', 'idea', 'review', 'today', 'later', 'budget', 'travel'];
const prose = (bytes: number) => {
  let out = '';
  while (out.length < bytes) out += `${WORDS[Math.floor(random() * WORDS.length)]} `;
  return out.slice(0, bytes);
};

async function main() {
  await withInProcessApp(kind, 'dav', async ({ app, database, ownerId, token: access, load }) => {
    log(`${kind}, load average ${load}`);
    const bearer = { authorization: `Bearer ${access}` };
    const token = (
      (
        await app.inject({
          method: 'POST',
          url: '/api/auth/tokens',
          headers: bearer,
          payload: { name: 'bench', scopes: ['dav'], password: BENCH_USER.password },
        })
      ).json() as { token: string }
    ).token;
    const basic = { authorization: `Basic ${Buffer.from(`${BENCH_USER.username}:${token}`).toString('base64')}` };
    log(`seeding a folder of ${NOTES} notes`);
    const folder = await createFolder(database.db, ownerId, { name: 'Big' });
    for (let i = 0; i < NOTES; i += 1)
      await createNote(database.db, ownerId, {
        title: `Note ${i} ${prose(20)}`,
        content: prose(400),
        folder_id: folder.id,
      });
    const target = await createNote(database.db, ownerId, { title: 'Ten KiB', content: prose(10 * 1024) });

    type Call = () => Promise<{ statusCode: number; body: string }>;
    const pairs: Record<string, { dav: Call; api: Call; davStatus: number; apiStatus: number }> = {
      'list a folder of 1,000 notes': {
        dav: () => app.inject({ method: 'PROPFIND' as 'GET', url: '/dav/Big/', headers: { ...basic, depth: '1' } }),
        api: () => app.inject({ method: 'GET', url: `/api/notes?folder=${folder.id}`, headers: bearer }),
        davStatus: 207,
        apiStatus: 200,
      },
      'read a 10 KiB note': {
        dav: () => app.inject({ method: 'GET', url: '/dav/Ten%20KiB.md', headers: basic }),
        api: () => app.inject({ method: 'GET', url: `/api/notes/${target.id}`, headers: bearer }),
        davStatus: 200,
        apiStatus: 200,
      },
      'save a 10 KiB note (changed)': {
        dav: () => app.inject({ method: 'PUT', url: '/dav/Ten%20KiB.md', headers: basic, payload: prose(10 * 1024) }),
        api: () =>
          app.inject({
            method: 'POST',
            url: `/api/notes/${target.id}/versions`,
            headers: bearer,
            payload: { title: 'Ten KiB', content: prose(10 * 1024) },
          }),
        davStatus: 204,
        apiStatus: 204,
      },
    };
    const results: Record<string, unknown> = {};
    for (const [name, pair] of Object.entries(pairs)) {
      const samples = { dav: [] as number[], api: [] as number[] };
      const cpu = { dav: 0, api: 0 };
      for (let i = 0; i < RUNS + 5; i += 1) {
        for (const side of ['dav', 'api'] as const) {
          const cpuBefore = process.cpuUsage();
          const started = performance.now();
          const res = await pair[side]();
          const ms = performance.now() - started;
          const used = process.cpuUsage(cpuBefore);
          const expected = side === 'dav' ? pair.davStatus : pair.apiStatus;
          if (res.statusCode !== expected)
            throw new Error(`${name} (${side}): ${res.statusCode} ${res.body.slice(0, 300)}`);
          if (i >= 5) {
            samples[side].push(ms);
            cpu[side] += (used.user + used.system) / 1000;
          }
        }
      }
      const dav = percentiles(samples.dav);
      const api = percentiles(samples.api);
      const row = {
        dav_ms: dav,
        api_ms: api,
        ratio_p50: Math.round((dav.p50 / api.p50) * 100) / 100,
        cpu_ms_per_request: {
          dav: Math.round((cpu.dav / RUNS) * 100) / 100,
          api: Math.round((cpu.api / RUNS) * 100) / 100,
        },
      };
      results[name] = row;
      log(
        `${name}: WebDAV p50 ${dav.p50} ms (p95 ${dav.p95}), API p50 ${api.p50} ms (p95 ${api.p95}), x${row.ratio_p50}; ` +
          `CPU ${row.cpu_ms_per_request.dav} vs ${row.cpu_ms_per_request.api} ms`,
      );
    }
    const result = {
      db: kind,
      date: new Date().toISOString(),
      load_average: load,
      cpus: os.cpus().length,
      notes: NOTES,
      runs: RUNS,
      results,
    };
    keepResult('dav', result, !args['no-write'], log);
  });
}

await main();

// Search benchmark: `npm run bench:search -- [--db sqlite|postgres]`. See BENCHMARKS.md, "Search".
//
// In-process (the app factory and app.inject, like the tests) on a fresh database: one user with
// 10,000 notes for the current-version search, then 100,000 versions for history search, and the
// cost of a version write with search indexing against the same write without it (the write as it
// was before search existed: advance the note, insert the version, nothing else).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Kysely, type CompiledQuery } from 'kysely';
import { percentiles, scratchDatabase, seededRandom } from './lib/scratch.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { nowIso } from '../src/db/values.js';
import { importNotes } from '../src/export/import.service.js';
import { documentOf } from '../src/export/import-runner.js';
import type { ImportNote } from '../src/export/import.validate.js';
import * as notesRepo from '../src/notes/notes.repository.js';
import { addVersion, createNote } from '../src/notes/notes.service.js';
import { newId } from '../src/shared/ids.js';
import { indexMissingVersions } from '../src/search/search.index.js';
import { createPasswordHasher } from '../src/passwords/password-hasher.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite' },
    notes: { type: 'string', default: '10000' },
    versions: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '40' },
    writes: { type: 'string', default: '2000' },
    'no-write': { type: 'boolean', default: false },
  },
});
const kind = args.db === 'postgres' ? 'postgres' : 'sqlite';
const NOTES = Number(args.notes);
const VERSIONS = Number(args.versions);
const RUNS = Number(args.runs);
const WRITES = Number(args.writes);
const log = (message: string) =>
  process.stdout.write(`[search bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

// A deterministic vocabulary with a Zipf-like use: word k is used about 1/k as often as the first.
// A seeded generator, so every run searches the same corpus.
const random = seededRandom(42);
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'be', 'da', 'fo', 'gu', 'hi', 'jo', 'pe', 'zu'];
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => {
  let word = '';
  for (let n = i + 16; n > 0; n = Math.floor(n / 16)) word += SYLLABLES[n % 16];
  return word;
});
const HARMONIC = VOCABULARY.reduce((sum, _, k) => sum + 1 / (k + 1), 0);
function word(): string {
  let target = random() * HARMONIC;
  for (let k = 0; k < VOCABULARY.length; k += 1) {
    target -= 1 / (k + 1);
    if (target <= 0) return VOCABULARY[k]!;
  }
  return VOCABULARY.at(-1)!;
}
const text = (words: number) => Array.from({ length: words }, word).join(' ');

/** Queries of each kind the query language has, from very common words to rare ones. */
const QUERIES = [
  VOCABULARY[0]!,
  VOCABULARY[5]!,
  VOCABULARY[100]!,
  VOCABULARY[2000]!,
  `${VOCABULARY[3]!} ${VOCABULARY[50]!}`,
  `"${VOCABULARY[0]!} ${VOCABULARY[1]!}"`,
  `${VOCABULARY[200]!.slice(0, 3)}*`,
  `${VOCABULARY[10]!} -${VOCABULARY[0]!}`,
];

async function measureSearch(app: Awaited<ReturnType<typeof buildApp>>, token: string, history: boolean) {
  const samples: number[] = [];
  const perQuery: Record<string, { p50: number; p95: number; results: number }> = {};
  for (const q of QUERIES) {
    const own: number[] = [];
    let results = 0;
    for (let i = 0; i < RUNS; i += 1) {
      const started = performance.now();
      const res = await app.inject({
        method: 'GET',
        url: `/api/notes/search?q=${encodeURIComponent(q)}&history=${history}`,
        headers: { authorization: `Bearer ${token}` },
      });
      own.push(performance.now() - started);
      if (res.statusCode !== 200) throw new Error(`search ${q}: ${res.statusCode} ${res.body}`);
      results = (res.json() as unknown[]).length;
    }
    samples.push(...own.slice(2));
    const p = percentiles(own.slice(2));
    perQuery[q] = { p50: p.p50, p95: p.p95, results };
  }
  return { all: percentiles(samples), perQuery };
}

/**
 * The whole request without indexing, for an honest comparison through HTTP: while this is off,
 * the index's own statements (src/search/search.index.ts: `insert into search_…`) are answered
 * without reaching the database. Term extraction and SQLite's marker trigger on the notes update
 * still run, so the difference slightly understates what indexing costs.
 */
let indexing = true;
let skipped = 0;
const execute = Kysely.prototype.executeQuery;
Kysely.prototype.executeQuery = function (this: Kysely<unknown>, query: CompiledQuery) {
  if (
    !indexing &&
    typeof (query as { sql?: unknown }).sql === 'string' &&
    (query as CompiledQuery).sql.startsWith('insert into search_')
  ) {
    skipped += 1;
    return Promise.resolve({ rows: [{ id: 0 }] });
  }
  return execute.call(this, query);
} as typeof execute;

/** The version write as it was before search: the same repository calls, without indexing. */
async function plainAddVersion(database: Database, ownerId: string, noteId: string, title: string, content: string) {
  await database.db.transaction().execute(async (trx) => {
    const versionId = newId();
    const next = await notesRepo.advanceVersion(trx, {
      ownerId,
      noteId,
      versionId,
      title,
      now: nowIso(),
      expected: undefined,
    });
    await notesRepo.insertVersion(trx, {
      id: versionId,
      note_id: noteId,
      version: next!.version,
      title,
      content,
      created_at: next!.updated_at,
      author_id: ownerId,
    });
  });
}

async function main() {
  const db = await scratchDatabase(kind, 'search');
  const config = loadConfig({
    DATABASE_URL: db.url,
    LOG_LEVEL: 'silent',
    RATE_LIMIT: 'off',
    PWNED_PASSWORDS_URL: 'off',
    JWT_SECRET: randomBytes(32).toString('hex'),
    CSRF_SECRET: randomBytes(32).toString('hex'),
  });
  const database = openDatabase(config.database);
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  log(`${kind}, load average ${load}`);
  try {
    await migrateToLatest(database.db);
    const app = await buildApp({ config, database, logger: false, hasher: createPasswordHasher() });
    const signup = await app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { username: 'bench', password: 'Vellum-bench: correct horse battery staple 42!' },
    });
    const ownerId = (signup.json() as { id: string }).id;
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'bench', password: 'Vellum-bench: correct horse battery staple 42!' },
    });
    const token = (login.json() as { access_token: string }).access_token;

    // 1. 10,000 notes of ~60 words, through the service (each write indexes).
    log(`seeding ${NOTES} notes`);
    const created: string[] = [];
    for (let i = 0; i < NOTES; i += 1)
      created.push((await createNote(database.db, ownerId, { title: text(4), content: text(60) })).id);

    // 2. Version writes, alternating with and without indexing on the same notes.
    log(`timing ${WRITES} version writes with indexing and ${WRITES} without`);
    const indexed: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < WRITES; i += 1) {
      const noteId = created[i % created.length]!;
      const [title, content] = [text(4), text(60)];
      let started = performance.now();
      await addVersion(database.db, ownerId, noteId, { title, content }, undefined);
      indexed.push(performance.now() - started);
      started = performance.now();
      await plainAddVersion(database, ownerId, noteId, title, content);
      plain.push(performance.now() - started);
    }

    // The same save through HTTP (app.inject: routing, auth, validation, JSON), alternately with
    // and without indexing (see `indexing` above), on the same notes.
    const http: number[] = [];
    const httpPlain: number[] = [];
    const post = async (noteId: string, into: number[]) => {
      const started = performance.now();
      const res = await app.inject({
        method: 'POST',
        url: `/api/notes/${noteId}/versions`,
        headers: { authorization: `Bearer ${token}` },
        payload: { title: text(4), content: text(60) },
      });
      into.push(performance.now() - started);
      if (res.statusCode !== 204) throw new Error(`POST versions: ${res.statusCode} ${res.body}`);
    };
    for (let i = 0; i < WRITES; i += 1) {
      const noteId = created[(i * 7) % created.length]!;
      indexing = i % 2 === 0;
      await post(noteId, indexing ? http : httpPlain);
      indexing = !indexing;
      await post(noteId, indexing ? http : httpPlain);
    }
    indexing = true;
    if (skipped !== WRITES)
      throw new Error(`expected the index statements of ${WRITES} requests skipped, got ${skipped}`);
    // The versions written without indexing are indexed now, so every note is found as in use.
    const healed = await indexMissingVersions(database.db);
    log(`indexed ${healed.versions} versions written without indexing`);

    log('searching the current versions');
    const current = await measureSearch(app, token, false);

    // 3. History: more versions through import (one transaction per 100 notes), up to VERSIONS in all.
    const existing = NOTES + 4 * WRITES;
    const toAdd = Math.max(0, VERSIONS - existing);
    log(`adding ${toAdd} versions for history search (${VERSIONS} in all)`);
    const perNote = 50;
    for (let done = 0; done < toAdd; ) {
      const batch: ImportNote[] = [];
      for (let n = 0; n < 100 && done < toAdd; n += 1) {
        const count = Math.min(perNote, toAdd - done);
        const base = Date.UTC(2025, 0, 1) + done * 1000;
        let body = text(60);
        batch.push({
          created_at: new Date(base).toISOString(),
          versions: Array.from({ length: count }, (_, v) => {
            body = `${body.split(' ').slice(3).join(' ')} ${text(3)}`;
            return {
              version: v + 1,
              title: text(4),
              content: body,
              created_at: new Date(base + v).toISOString(),
              label: null,
              restored_from: null,
            };
          }),
        });
        done += count;
      }
      await importNotes(database.db, ownerId, documentOf(batch));
    }
    log('searching history');
    const history = await measureSearch(app, token, true);
    // Current search again, now that the notes have this many old versions.
    log('searching the current versions again, with the whole history indexed');
    const currentDeep = await measureSearch(app, token, false);
    await app.close();

    const result = {
      db: kind,
      date: new Date().toISOString(),
      load_average: load,
      cpus: os.cpus().length,
      notes: NOTES,
      versions: VERSIONS,
      runs_per_query: RUNS,
      write_ms: {
        with_index: percentiles(indexed),
        without_index: percentiles(plain),
        http_post_with_index: percentiles(http),
        http_post_without_index: percentiles(httpPlain),
      },
      search_current_ms: current,
      search_history_ms: history,
      search_current_after_history_ms: currentDeep,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    const w = result.write_ms;
    const slower = (w.with_index.p50 / w.without_index.p50 - 1) * 100;
    const httpSlower = (w.http_post_with_index.p50 / w.http_post_without_index.p50 - 1) * 100;
    log(
      `write p50 ${w.without_index.p50} -> ${w.with_index.p50} ms (+${slower.toFixed(0)} % of the database work); ` +
        `HTTP POST versions p50 ${w.http_post_without_index.p50} -> ${w.http_post_with_index.p50} ms (+${httpSlower.toFixed(0)} %); ` +
        `search p50/p95: current ${current.all.p50}/${current.all.p95} ms, history ${history.all.p50}/${history.all.p95} ms, ` +
        `current with ${VERSIONS} versions ${currentDeep.all.p50}/${currentDeep.all.p95} ms`,
    );
    if (!args['no-write']) {
      const file = path.join('bench', 'results', `search-${kind}-${result.date.slice(0, 10)}.json`);
      fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
      log(`wrote ${file}`);
    }
  } finally {
    await database.close();
    await db.drop();
  }
}

await main();

// Organise benchmark: `npx tsx bench/organise.ts [--db sqlite|postgres]` (also `npm run bench -- --only organise`).
// See BENCHMARKS.md, "Organise".
//
// In-process (the app factory and app.inject, like the tests) on a fresh database: one user with
// 10,000 notes in 500 folders (50 top-level folders of 9 subfolders each, and the top level) and
// tags from a vocabulary of 200, used Zipf-like. It times GET /api/notes?tag=…, ?folder=…, and
// GET /api/tags, and a 1 KiB save through HTTP three ways, interleaved on the same notes: content
// without tags (tag extraction stops at "no #"), with tags that stay the same (extraction runs, no
// tag rows written), and with tags that change on every save (extraction, notes.tags and note_tags
// rewritten). The second and third against the first are what tags add to a save.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { keepResult, withInProcessApp } from './lib/in-process.js';
import { percentiles, seededRandom } from './lib/scratch.js';
import { createFolder } from '../src/folders/folders.service.js';
import { createNote } from '../src/notes/notes.service.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite' },
    notes: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '60' },
    writes: { type: 'string', default: '600' },
    'no-write': { type: 'boolean', default: false },
  },
});
const kind = args.db === 'postgres' ? 'postgres' : 'sqlite';
const NOTES = Number(args.notes);
const RUNS = Number(args.runs);
const WRITES = Number(args.writes);
const log = (message: string) =>
  process.stdout.write(`[organise bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const random = seededRandom(7);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const WORDS = [
  'notes',
  'plan',
  'meeting',
  'draft',
  'idea',
  'review',
  'today',
  'later',
  'budget',
  'travel',
  'recipe',
  'book',
  'call',
  'email',
];
const prose = (bytes: number) => {
  let out = '';
  while (out.length < bytes) out += `${pick(WORDS)} `;
  return out.slice(0, bytes);
};
const TAGS = Array.from({ length: 200 }, (_, i) => (i % 10 === 0 ? `area${i}/sub${i % 7}` : `tag${i}`));
/** Zipf-like: tag k about 1/k as often as the first. */
const HARMONIC = TAGS.reduce((sum, _, k) => sum + 1 / (k + 1), 0);
function tag(): string {
  let target = random() * HARMONIC;
  for (let k = 0; k < TAGS.length; k += 1) {
    target -= 1 / (k + 1);
    if (target <= 0) return TAGS[k]!;
  }
  return TAGS.at(-1)!;
}

async function main() {
  await withInProcessApp(kind, 'organise', async ({ app, database, ownerId, token, load }) => {
    log(`${kind}, load average ${load}`);
    const get = async (url: string) => {
      const started = performance.now();
      const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      const ms = performance.now() - started;
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return { ms, rows: (res.json() as unknown[]).length };
    };

    log('seeding 500 folders');
    const folders: string[] = [];
    for (let top = 0; top < 50; top += 1) {
      const parent = await createFolder(database.db, ownerId, { name: `Area ${top}` });
      folders.push(parent.id);
      for (let sub = 0; sub < 9; sub += 1)
        folders.push((await createFolder(database.db, ownerId, { name: `Project ${sub}`, parent_id: parent.id })).id);
    }
    log(`seeding ${NOTES} notes`);
    const created: string[] = [];
    for (let i = 0; i < NOTES; i += 1) {
      const tags = Array.from({ length: 1 + Math.floor(random() * 3) }, () => `#${tag()}`).join(' ');
      const folderId = random() < 0.1 ? null : pick(folders);
      created.push(
        (
          await createNote(database.db, ownerId, {
            title: prose(20),
            content: `${prose(400)} ${tags}`,
            folder_id: folderId,
          })
        ).id,
      );
    }

    const filters: Record<string, string> = {
      'tag, the most used, every note': `?tag=${TAGS[0]}`,
      'tag, the most used, first page of 50': `?tag=${TAGS[0]}&limit=50`,
      'tag, rank 20, every note': `?tag=${TAGS[19]}`,
      'tag, rank 150, every note': `?tag=${TAGS[150]}`,
      'tag parent (area0 for area0/sub0), every note': '?tag=area0',
      'folder, every note': `?folder=${folders[1]}`,
      'folder=root, every note': '?folder=root',
      'folder=root, first page of 50': '?folder=root&limit=50',
      'no filter, first page of 50': '?limit=50',
    };
    const lists: Record<string, ReturnType<typeof percentiles> & { rows: number }> = {};
    for (const [name, query] of Object.entries(filters)) {
      const samples: number[] = [];
      let rows = 0;
      for (let i = 0; i < RUNS + 3; i += 1) {
        const r = await get(`/api/notes${query}`);
        if (i >= 3) samples.push(r.ms);
        rows = r.rows;
      }
      lists[name] = { ...percentiles(samples), rows };
      log(`GET /api/notes${query}: ${rows} rows, p50 ${lists[name].p50} ms, p95 ${lists[name].p95} ms`);
    }
    const tagSamples: number[] = [];
    let tagRows = 0;
    for (let i = 0; i < RUNS + 3; i += 1) {
      const r = await get('/api/tags');
      if (i >= 3) tagSamples.push(r.ms);
      tagRows = r.rows;
    }
    const tagsList = { ...percentiles(tagSamples), rows: tagRows };
    log(`GET /api/tags: ${tagRows} tags, p50 ${tagsList.p50} ms, p95 ${tagsList.p95} ms`);
    const folderSamples: number[] = [];
    for (let i = 0; i < RUNS + 3; i += 1) {
      const r = await get('/api/folders');
      if (i >= 3) folderSamples.push(r.ms);
    }
    const foldersList = percentiles(folderSamples);
    log(`GET /api/folders: p50 ${foldersList.p50} ms, p95 ${foldersList.p95} ms`);

    log(`timing ${WRITES} saves of each kind, interleaved`);
    const kinds = {
      no_tags: [] as number[],
      same_tags: [] as number[],
      changed_tags: [] as number[],
    };
    const post = async (noteId: string, content: string, into: number[]) => {
      const started = performance.now();
      const res = await app.inject({
        method: 'POST',
        url: `/api/notes/${noteId}/versions`,
        headers: { authorization: `Bearer ${token}` },
        payload: { title: 'bench', content },
      });
      into.push(performance.now() - started);
      if (res.statusCode !== 204) throw new Error(`POST versions: ${res.statusCode} ${res.body}`);
    };
    // Each kind writes its own notes, so "same tags" really finds its previous tags unchanged.
    const own = (k: number, i: number) => created[(i * 3 + k) % 300]!;
    for (let i = 0; i < WRITES; i += 1) {
      const body = prose(1000);
      await post(own(0, i), `${body}`, kinds.no_tags);
      await post(own(1, i), `${body} #work #project/vellum #k${own(1, i).slice(0, 4)}`, kinds.same_tags);
      await post(own(2, i), `${body} #work #project/vellum #run${i}`, kinds.changed_tags);
    }
    const writes = {
      no_tags: percentiles(kinds.no_tags.slice(10)),
      same_tags: percentiles(kinds.same_tags.slice(10)),
      changed_tags: percentiles(kinds.changed_tags.slice(10)),
    };
    const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
    const result = {
      db: kind,
      date: new Date().toISOString(),
      load_average: load,
      cpus: os.cpus().length,
      notes: NOTES,
      folders: folders.length,
      runs: RUNS,
      writes_per_kind: WRITES,
      list_ms: lists,
      tags_ms: tagsList,
      folders_ms: foldersList,
      save_ms: writes,
      save_ratio_p50: {
        same_tags: ratio(writes.same_tags.p50, writes.no_tags.p50),
        changed_tags: ratio(writes.changed_tags.p50, writes.no_tags.p50),
      },
    };
    keepResult('organise', result, !args['no-write'], log);
    log(
      `save p50: no tags ${writes.no_tags.p50} ms, same tags ${writes.same_tags.p50} ms (x${result.save_ratio_p50.same_tags}), ` +
        `changed tags ${writes.changed_tags.p50} ms (x${result.save_ratio_p50.changed_tags})`,
    );
  });
}

await main();

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { parseQuery, type Clause } from '../../src/search/query.js';
import { tokenize } from '../../src/search/text.js';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { buildTestApp, newSession, testConfig, type Session } from '../helpers/harness.js';
import { notesClient } from '../notes/support.js';
import { searchClient } from './support.js';

/**
 * One fixed corpus, loaded into every database under test: each query must find exactly the notes
 * a plain reference matcher finds (every wanted clause in the title or the content, no excluded
 * one), so SQLite and PostgreSQL agree with it and with each other.
 */
const CORPUS: Array<[string, string]> = [
  ['Straße und Maß', 'Die Straße ist groß. STRASSE in Großbuchstaben.'],
  ['İstanbul trip', 'Istanbul, İzmir and ıspanak; DİKKAT.'],
  ['Ligatures', 'The ﬁnal ﬂight: ﬁsh and ﬂour. ½ cup, ² squared, ① first.'],
  ['Ελληνικά', 'Καλημέρα κόσμε, ΚΑΛΗΜΈΡΑ. Ωραία μέρα.'],
  ['Русский', 'Привет, мир! Ёлка и елка. ПРИВЕТ.'],
  ['日本語のメモ', '東京タワー と 富士山。ｶﾀｶﾅ half-width.'],
  ['Emoji 🎉', 'Party 🎉🎉 time 👨‍👩‍👧 family; café ☕ at 10:30.'],
  ['Hyphen-ated words', 'e-mail, state-of-the-art, well-known; O\'Brien\'s dog.'],
  ['Numbers', 'Version 2.0.1 released on 2026-11-23; pi is 3.14159; 1,000,000 users.'],
  ['Code', 'const x_y = foo.bar(baz); // TODO: fix_me; snake_case CamelCase'],
  ['Accents', 'Crème brûlée, jalapeño, São Paulo, Ångström, Łódź, Dvořák.'],
  ['Combining', 'Cafe\u0301 and re\u0301sume\u0301 typed with combining marks.'],
  ['Repeated', 'echo echo echo echo echo echo echo echo'],
  ['Empty content', ''],
  ['', 'A note without a title, about echoes and lighthouses.'],
  ['NUL and controls', 'before\u0000after\ttab\r\nnewline\u0007bell'],
  ['Long word', `${'x'.repeat(150)} short ${'y'.repeat(100)} ${'z'.repeat(101)}`],
  ['Phrase test', 'the quick brown fox jumps over the lazy dog'],
  ['Phrase split', 'quick. Brown! fox? — quick brown'],
  ['Title only fox', 'nothing relevant'],
];

const QUERIES = [
  'strasse', 'straße', 'STRASSE', 'gross', 'groß', 'mass',
  'istanbul', 'İSTANBUL', 'izmir', 'ıspanak', 'dikkat',
  'final', 'flight', 'fish', 'fl*', '1', '2 cup', 'first',
  'καλημερα', 'ΚΑΛΗΜΕΡΑ', 'ωραια', 'привет', 'елка', 'ёлка',
  '東京タワー', '富士山', 'カタカナ', 'half width', '"half-width"',
  'party', 'family', 'cafe', 'café', 'resume', 'creme brulee', 'jalapeno', 'sao', 'angstrom', 'lodz', 'dvorak',
  'e-mail', 'email', '"state of the art"', "o'brien's", 'brien', 'dog',
  '2.0.1', '2026', '3.14159', '14159', '1,000,000',
  'x_y', 'foo.bar', 'fix_me', 'camelcase', 'snake',
  'echo', '"echo echo"', 'lighthouses', 'light*', 'echoes',
  'before', 'after', 'newline', 'bell', 'short', `${'y'.repeat(100)}`, `${'z'.repeat(101)}`, 'x*',
  '"quick brown"', '"brown fox"', '"quick brown fox"', 'quick -"brown fox"', '"fox quick"', '"quick brown"*', '"qu br"*',
  'fox', '-fox', '-echo -quick', 'fox -title', '"title only"', 'title only', 'relevant -nothing',
  '"', '-', '*', '"" ""', '-"', 'the', 'a', 'AND', 'OR NOT',
];

/** Reference matcher: does one clause occur in this text, as consecutive terms? */
function clauseIn(terms: string[], clause: Clause): boolean {
  outer: for (let i = 0; i + clause.terms.length <= terms.length; i += 1) {
    for (let k = 0; k < clause.terms.length; k += 1) {
      const wanted = clause.terms[k]!;
      const term = terms[i + k]!;
      const last = k === clause.terms.length - 1;
      if (!(last && clause.prefix ? term.startsWith(wanted) : term === wanted)) continue outer;
    }
    return true;
  }
  return false;
}

function expected(q: string): string[] {
  const query = parseQuery(q);
  if (query.impossible || (query.include.length === 0 && query.exclude.length === 0)) return [];
  return CORPUS.filter(([title, content]) => {
    const fields = [title, content].map((text) => [...tokenize(text)].map((t) => t.term));
    const has = (c: Clause) => fields.some((terms) => clauseIn(terms, c));
    return query.include.every(has) && !query.exclude.some(has);
  }).map(([title]) => title).sort();
}

interface Instance {
  kind: string;
  scratch: ScratchDatabase;
  database: Database;
  app: FastifyInstance;
  session: Session;
}

const instances: Instance[] = [];

before(async () => {
  for (const kind of databaseKinds) {
    const scratch = await createScratchDatabase(kind);
    const config = testConfig(scratch.url);
    const database = openDatabase(config.database);
    await migrateToLatest(database.db);
    const app = await buildTestApp(config, database);
    const session = await newSession(app);
    const api = notesClient(() => app);
    for (const [title, content] of CORPUS) {
      // Each note reaches its text through a second version, so the current index is rewritten once.
      const note = await api.createOk(session, { title: 'draft', content: 'draft' });
      await api.addVersionOk(session, note.id, { title, content });
    }
    instances.push({ kind, scratch, database, app, session });
  }
});

after(async () => {
  for (const instance of instances) {
    await instance.app.close();
    await instance.database.close();
    await instance.scratch.drop();
  }
});

test(`a fixed corpus: every database finds exactly the reference notes (${databaseKinds.join(', ')})`, async () => {
  for (const q of QUERIES) {
    const want = expected(q);
    for (const { kind, app, session } of instances) {
      const found = (await searchClient(() => app).titles(session, q, '&limit=100')).sort();
      assert.deepEqual(found, want, `${kind}: q=${JSON.stringify(q)}`);
    }
  }
  // The corpus exercises what it claims to: folding found these.
  assert.deepEqual(expected('strasse'), ['Straße und Maß']);
  assert.deepEqual(expected('istanbul'), ['İstanbul trip']);
  assert.deepEqual(expected('final'), ['Ligatures']);
  assert.deepEqual(expected('resume'), ['Combining']);
  assert.deepEqual(expected('ωραια'), ['Ελληνικά']);
  // Punctuation between words does not break a phrase, as in every full-text engine.
  assert.deepEqual(expected('"brown fox"'), ['Phrase split', 'Phrase test']);
  assert.deepEqual(expected('"fox quick"'), ['Phrase split']);
  assert.deepEqual(expected(`${'y'.repeat(100)}`), ['Long word']);
  assert.deepEqual(expected(`${'z'.repeat(101)}`), []);
});

test('the same results in the same order on every database, history included', async () => {
  if (instances.length < 2) return;
  for (const q of ['echo', 'fox', 'quick', '-fox', 'draft', 'cafe']) {
    for (const extra of ['', '&history=true']) {
      const [first, ...rest] = await Promise.all(instances.map(({ app, session }) =>
        searchClient(() => app).search(session, q, `&limit=100${extra}`)));
      const shape = (rows: typeof first) => rows!.map((r) => [r.title, r.snippet, r.highlights, r.version]);
      for (const other of rest) assert.deepEqual(shape(other), shape(first), `q=${q}${extra}`);
    }
  }
});

test('any query string of up to 256 characters is answered 200 (property-based): never a 5xx', async () => {
  const alphabet = fc.constantFrom('"', '-', '*', ' ', '\u0000', '(', ')', ':', '{', '}', '^', '+', '&', '|', '!', "'", '\\', 'AND', 'OR', 'NOT', 'NEAR', 'a', 'é', '😀', 'ß', 'İ', '\u0301', '\t');
  const query = fc.oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 256 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 256 }),
    fc.array(alphabet, { minLength: 1, maxLength: 60 }).map((parts) => parts.join('')),
  ).filter((q) => [...q].length <= 256 && q.isWellFormed());
  for (const { kind, app, session } of instances) {
    await fc.assert(fc.asyncProperty(query, fc.boolean(), async (q, history) => {
      const res = await app.inject({
        method: 'GET', url: `/api/notes/search?q=${encodeURIComponent(q)}&history=${history}&limit=100`, headers: session.auth,
      });
      assert.equal(res.statusCode, 200, `${kind}: q=${JSON.stringify(q)}: ${res.body}`);
      const found = (res.json() as Array<{ title: string }>).map((r) => r.title).sort();
      if (!history) assert.deepEqual(found, expected(q), `${kind}: q=${JSON.stringify(q)}`);
    }), { numRuns: 150 });
  }
});

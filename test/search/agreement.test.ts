import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
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
  ['Hyphen-ated words', "e-mail, state-of-the-art, well-known; O'Brien's dog."],
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
  'strasse',
  'straße',
  'STRASSE',
  'gross',
  'groß',
  'mass',
  'istanbul',
  'İSTANBUL',
  'izmir',
  'ıspanak',
  'dikkat',
  'final',
  'flight',
  'fish',
  'fl*',
  '1',
  '2 cup',
  'first',
  'καλημερα',
  'ΚΑΛΗΜΕΡΑ',
  // Letters without a lower case that decompose to capitals: the mathematical script O is o.
  '𝒪',
  '𝐃𝐎𝐆',
  'ℍalf',
  'ωραια',
  'привет',
  'елка',
  'ёлка',
  '東京タワー',
  '富士山',
  'カタカナ',
  'half width',
  '"half-width"',
  'party',
  'family',
  'cafe',
  'café',
  'resume',
  'creme brulee',
  'jalapeno',
  'sao',
  'angstrom',
  'lodz',
  'dvorak',
  'e-mail',
  'email',
  '"state of the art"',
  "o'brien's",
  'brien',
  'dog',
  '2.0.1',
  '2026',
  '3.14159',
  '14159',
  '1,000,000',
  'x_y',
  'foo.bar',
  'fix_me',
  'camelcase',
  'snake',
  'echo',
  '"echo echo"',
  'lighthouses',
  'light*',
  'echoes',
  'before',
  'after',
  'newline',
  'bell',
  'short',
  `${'y'.repeat(100)}`,
  `${'z'.repeat(101)}`,
  'x*',
  '"quick brown"',
  '"brown fox"',
  '"quick brown fox"',
  'quick -"brown fox"',
  '"fox quick"',
  '"quick brown"*',
  '"qu br"*',
  'fox',
  '-fox',
  '-echo -quick',
  'fox -title',
  '"title only"',
  'title only',
  'relevant -nothing',
  '"',
  '-',
  '*',
  '"" ""',
  '-"',
  'the',
  'a',
  'AND',
  'OR NOT',
];

// The reference matcher: CONTRACT.md "Search" and docs/operations.md "Search" restated as plainly as they read,
// with nothing taken from src/search (no parser, no tokenizer, no folding): a fault in those must
// show up here as a disagreement, not be shared by the expectation.
//
// - Matching ignores case and diacritics: lower-cased, compatibility-decomposed, marks dropped.
// - A word is a run of letters and digits (with the marks on them); `e-mail` is `e` and `mail`,
//   and a query `e-mail` is that phrase. Words over 100 characters are not indexed.
// - In q, clauses are separated by spaces: `word`, `"a phrase"` (to the closing quote, or the end),
//   `-` before either excludes it, `*` at its end makes its last word a prefix.
// - A note is found when every wanted clause occurs in its title or its content, as consecutive
//   words, and no excluded one does. A query without any word finds nothing.

const LONGEST_INDEXED_WORD = 100;

function plain(word: string): string {
  return word.toLowerCase().normalize('NFKD').toLowerCase().replace(/\p{M}/gu, '');
}

/** The words of a text as search sees them, in order (a folded word that falls apart, like ½, is split). */
function wordsOf(text: string): string[] {
  return (text.match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).flatMap((word) => plain(word).match(/[\p{L}\p{N}]+/gu) ?? []);
}

interface ReferenceClause {
  words: string[];
  prefix: boolean;
  excluded: boolean;
}

/** One clause per match: an optional `-` (when something follows it), then a quoted phrase or a run of non-spaces. */
const CLAUSE = /\s*(-(?=\S))?(?:"([^"]*)"?(\*?)|(\S+))/uy;

function clausesOf(q: string): ReferenceClause[] {
  const clauses: ReferenceClause[] = [];
  CLAUSE.lastIndex = 0;
  for (let m = CLAUSE.exec(q); m !== null && m[0] !== ''; m = CLAUSE.exec(q)) {
    const text = m[4] ?? `${m[2]}${m[3]}`;
    const words = wordsOf(text);
    if (words.length > 0) clauses.push({ words, prefix: text.endsWith('*'), excluded: m[1] !== undefined });
  }
  return clauses;
}

/** Does the clause occur in these words: its words one after the other, the last as a prefix if starred? */
function occursIn(words: string[], clause: ReferenceClause): boolean {
  return words.some((_, start) =>
    clause.words.every((wanted, k) => {
      const word = words[start + k];
      if (word === undefined) return false;
      return k === clause.words.length - 1 && clause.prefix ? word.startsWith(wanted) : word === wanted;
    }),
  );
}

function expected(q: string): string[] {
  const clauses = clausesOf(q);
  if (clauses.length === 0) return [];
  return CORPUS.filter(([title, content]) => {
    const fields = [title, content].map((text) => wordsOf(text).filter((w) => w.length <= LONGEST_INDEXED_WORD));
    const found = (clause: ReferenceClause) => fields.some((words) => occursIn(words, clause));
    return clauses.every((clause) => found(clause) !== clause.excluded);
  })
    .map(([title]) => title)
    .sort();
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
  assert.deepEqual(expected('𝒪'), ['Hyphen-ated words']);
  assert.deepEqual(expected('𝐃𝐎𝐆'), ['Hyphen-ated words', 'Phrase test']);
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
      const [first, ...rest] = await Promise.all(
        instances.map(({ app, session }) => searchClient(() => app).search(session, q, `&limit=100${extra}`)),
      );
      const shape = (rows: typeof first) => rows!.map((r) => [r.title, r.snippet, r.highlights, r.version]);
      for (const other of rest) assert.deepEqual(shape(other), shape(first), `q=${q}${extra}`);
    }
  }
});

test('any query string of up to 256 characters is answered 200 (property-based): never a 5xx', async () => {
  const alphabet = fc.constantFrom(
    '"',
    '-',
    '*',
    ' ',
    '\u0000',
    '(',
    ')',
    ':',
    '{',
    '}',
    '^',
    '+',
    '&',
    '|',
    '!',
    "'",
    '\\',
    'AND',
    'OR',
    'NOT',
    'NEAR',
    'a',
    'é',
    '😀',
    'ß',
    'İ',
    '\u0301',
    '\t',
  );
  const query = fc
    .oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 256 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 256 }),
      fc.array(alphabet, { minLength: 1, maxLength: 60 }).map((parts) => parts.join('')),
    )
    .filter((q) => [...q].length <= 256 && q.isWellFormed());
  for (const { kind, app, session } of instances) {
    await fc.assert(
      fc.asyncProperty(query, fc.boolean(), async (q, history) => {
        const res = await app.inject({
          method: 'GET',
          url: `/api/notes/search?q=${encodeURIComponent(q)}&history=${history}&limit=100`,
          headers: session.auth,
        });
        assert.equal(res.statusCode, 200, `${kind}: q=${JSON.stringify(q)}: ${res.body}`);
        const found = (res.json() as Array<{ title: string }>).map((r) => r.title).sort();
        if (!history) assert.deepEqual(found, expected(q), `${kind}: q=${JSON.stringify(q)}`);
      }),
      { numRuns: 150 },
    );
  }
});

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectInvalidBody, expectNoContent, notesClient, okJson, type Note, type VersionRow } from './support.js';

const MiB = 1024 * 1024;
/** The first field found broken is named (title before content). */
const notUnicode = (field: string) => `${field} must be valid Unicode (no unpaired surrogates)`;

/** Strings that must come back exactly as sent, as title and as content. */
const SAMPLES: Record<string, string> = {
  nul: 'a\u0000b\u0000',
  'only NUL': '\u0000',
  'control characters': '\u0001\u0007\b\t\n\u000b\f\r\u001b\u001f\u007f\u0085',
  emoji: '😀 👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇫🇷',
  arabic: 'مرحبا بالعالم',
  hebrew: 'שלום עולם',
  'mixed direction': 'abc \u202eשלום\u202c مرحبا 123 \u200fx\u200e',
  'combining marks': 'e\u0301 a\u0308 Z\u0351\u0352\u0353\u0354\u0355 \u1100\u1161\u11a8',
  normalization: '\u00e9 e\u0301 \u212b \u00c5 \ufb01',
  'line separators': '\u2028\u2029\r\n',
  'BOM and zero width': '\ufeffstart\u200b\u200c\u200d\u2060end',
  'non-characters': '\ufffe\uffff\u{10ffff}\u{1fffe}',
  'astral planes': '\u{10000}\u{1d11e}\u{20000}\u{e0001}',
  'replacement character': '\ufffd',
  'JSON metacharacters': '"\\/{}[],:\u003c/script>',
};

forEachDatabase('notes Unicode round-trip', (ctx) => {
  const api = notesClient(() => ctx.app);
  let s: Session;

  before(async () => {
    s = await newSession(ctx.app);
  });

  /** Title and content as stored, through every read route. */
  async function assertRoundTrip(noteId: string, title: string, content: string, label: string) {
    const note = okJson<Note>(await api.get(s, noteId));
    assert.equal(note.title, title, `${label}: GET note title`);
    assert.equal(note.content, content, `${label}: GET note content`);
    const version = okJson<{ title: string; content: string }>(await api.version(s, noteId, note.version_id));
    assert.equal(version.title, title, `${label}: GET version title`);
    assert.equal(version.content, content, `${label}: GET version content`);
    const row = okJson<Array<{ id: string; title: string }>>(await api.list(s)).find((r) => r.id === noteId);
    assert.equal(row?.title, title, `${label}: list title`);
    const history = okJson<VersionRow[]>(await api.versions(s, noteId, '?limit=1'));
    assert.equal(history[0]?.title, title, `${label}: history title`);
    // In storage the bytes are the UTF-8 encoding, unchanged.
    const stored = await ctx.database.db
      .selectFrom('note_versions')
      .select(['title', 'content'])
      .where('id', '=', note.version_id)
      .executeTakeFirstOrThrow();
    assert.ok(Buffer.from(stored.title).equals(Buffer.from(title, 'utf8')), `${label}: stored title bytes`);
    assert.ok(Buffer.from(stored.content).equals(Buffer.from(content, 'utf8')), `${label}: stored content bytes`);
  }

  test('titles and contents round-trip unchanged on create', async () => {
    for (const [label, text] of Object.entries(SAMPLES)) {
      const note = await api.createOk(s, { title: text, content: `${text}\n${text}` });
      assert.equal(note.title, text, label);
      assert.equal(note.content, `${text}\n${text}`, label);
      await assertRoundTrip(note.id, text, `${text}\n${text}`, label);
    }
  });

  test('titles and contents round-trip unchanged on a new version, and older versions keep theirs', async () => {
    const note = await api.createOk(s, { title: 'plain', content: 'plain' });
    const all = Object.values(SAMPLES).join('|');
    for (const [label, text] of Object.entries(SAMPLES)) {
      await api.addVersionOk(s, note.id, { title: text, content: text + all });
      await assertRoundTrip(note.id, text, text + all, label);
    }
    const history = await api.history(s, note.id);
    const expected = ['plain', ...Object.values(SAMPLES)].reverse();
    assert.deepEqual(
      history.map((r) => r.title),
      expected,
    );
    const first = okJson<{ title: string; content: string }>(await api.version(s, note.id, history.at(-1)!.id));
    assert.deepEqual([first.title, first.content], ['plain', 'plain']);
  });

  test('a title of 200 NULs and a 1 MiB content of NULs (~6 MiB of escaped JSON) round-trip', async () => {
    const title = '\u0000'.repeat(200);
    const content = '\u0000'.repeat(MiB);
    const body = JSON.stringify({ title, content });
    assert.ok(body.length > 6 * MiB, 'every NUL is escaped as \\u0000');
    const created = await api.createOk(s, { title, content });
    assert.equal(created.content.length, MiB);
    await assertRoundTrip(created.id, title, content, 'NUL on create');

    const note = await api.createOk(s, { title: 'before', content: '' });
    await api.addVersionOk(s, note.id, { title, content });
    await assertRoundTrip(note.id, title, content, 'NUL on a new version');
    // The raw response carries the escapes, and is valid JSON of the right size.
    const raw = await api.get(s, note.id);
    assert.ok(raw.body.includes('\\u0000\\u0000'));
    assert.equal((JSON.parse(raw.body) as Note).content, content);
  });

  test('1 MiB of mixed NUL, emoji and RTL content round-trips', async () => {
    const unit = '\u0000😀שע\u0301';
    const content = unit.repeat(Math.floor(MiB / Buffer.byteLength(unit)));
    assert.ok(Buffer.byteLength(content) <= MiB);
    const note = await api.createOk(s, { title: unit, content });
    await assertRoundTrip(note.id, unit, content, 'mixed 1 MiB');
  });

  test('lone surrogates are 400 in title or content, on create and on a new version', async () => {
    const note = await api.createOk(s, { title: 'keep', content: 'keep' });
    const json = { 'content-type': 'application/json' };
    for (const bad of [
      '\ud800',
      '\udc00',
      'a\ud800b',
      '\udfff\ud800',
      '😀'.slice(0, 1),
      '😀'.slice(1),
      `${'x'.repeat(100)}\udbff`,
    ]) {
      // JSON.stringify writes lone surrogates as \uXXXX escapes: what a client would send.
      for (const fields of [
        { title: bad, content: 'ok' },
        { title: 'ok', content: bad },
        { title: bad, content: bad },
      ]) {
        const payload = JSON.stringify(fields);
        const field = fields.title === bad ? 'title' : 'content';
        expectInvalidBody(await api.create(s, payload, json), notUnicode(field));
        expectInvalidBody(await api.addVersion(s, note.id, payload, json), notUnicode(field));
      }
    }
    expectInvalidBody(await api.create(s, JSON.stringify({ title: '\ud800' }), json), notUnicode('title'));
    expectInvalidBody(await api.create(s, JSON.stringify({ content: '\udc00' }), json), notUnicode('content'));
    const current = okJson<Note>(await api.get(s, note.id));
    assert.deepEqual([current.title, current.content, current.version], ['keep', 'keep', 1]);
    // A surrogate pair written as two escapes is one well-formed character.
    expectNoContent(await api.addVersion(s, note.id, '{"title":"\\ud83d\\ude00","content":"\\u0000"}', json));
    await assertRoundTrip(note.id, '😀', '\u0000', 'escaped pair');
  });
});

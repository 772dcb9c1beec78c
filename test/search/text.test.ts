import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { documentTerms, fold, tokenize } from '../../src/search/text.js';

const terms = (text: string) => [...tokenize(text)].map((t) => t.term);

test('documentTerms gives exactly the terms tokenize() finds, on its ASCII fast path and off it', () => {
  const ascii = fc.string({ unit: fc.constantFrom(...'aZ09 _-.,\'"\n\u0000*x'.split('')), maxLength: 300 });
  const any = fc.string({ unit: 'grapheme', maxLength: 200 });
  fc.assert(
    fc.property(fc.oneof(ascii, any), fc.oneof(ascii, any), (title, content) => {
      assert.deepEqual(documentTerms(title, content), { title: terms(title), body: terms(content) });
    }),
    { numRuns: 500 },
  );
  const long = `${'a'.repeat(101)} ok ${'b'.repeat(100)}`;
  assert.deepEqual(documentTerms('', long).body, ['ok', 'b'.repeat(100)]);
});

test('folding: case, diacritics, compatibility forms; offsets point at the original words', () => {
  assert.equal(fold('Ǆemal RÉSUMÉ ﬁnal İstanbul'), 'dzemal resume final istanbul');
  assert.deepEqual(
    [...tokenize('Crème ½ 😀 naïve')],
    [
      { term: 'creme', start: 0, end: 5 },
      { term: '1', start: 6, end: 7 },
      { term: '2', start: 6, end: 7 },
      { term: 'naive', start: 11, end: 16 },
    ],
  );
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asYouType } from '../src/notes/search-query.ts';

test('search as you type: the last word being typed matches the start of words, and nothing else changes', () => {
  const cases: Array<[string, string]> = [
    ['road', 'road*'],
    ['spring road', 'spring road*'],
    ['road ', 'road'], // a space ends the word: whole words only
    ['"road', '"road'], // inside an open phrase
    ['"road map"', '"road map"'],
    ['plan -road', 'plan -road'], // an excluded word excludes that word
    ['tag:work', 'tag:work'],
    ['road*', 'road*'],
    ['été', 'été*'],
  ];
  for (const [typed, sent] of cases) assert.equal(asYouType(typed), sent, typed);
});

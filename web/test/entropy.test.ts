// The web client's copy of the password entropy (web/src/auth/entropy.ts) gives the server's
// answer (src/passwords/entropy.ts) for every password, so the strength shown while typing is the
// verdict the server will give.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import * as server from '../../src/passwords/entropy.js';
import * as web from '../src/auth/entropy.js';

const PUBLISHED = [
  '',
  'a',
  'aaaa',
  '11112222',
  'aa123456',
  '876543',
  'qwerty123456z',
  'zyxw',
  'poiuy',
  'q1w2e3',
  'ééé',
  '😀',
  'correct horse battery staple',
  'Tr0ub4dor&3',
  'password',
  'P@ssw0rd!',
  'abcdefghijklmnopqrstuvwxyz0123456789',
];

describe("the web client's password entropy", () => {
  it('agrees with the server on known passwords', () => {
    for (const password of PUBLISHED) {
      assert.equal(web.entropyBase(password), server.entropyBase(password), password);
      assert.equal(web.entropyLength(password), server.entropyLength(password), password);
      assert.equal(web.passwordEntropy(password), server.passwordEntropy(password), password);
    }
  });

  it('agrees with the server on any password', () => {
    const keyboardish = fc.string({ unit: fc.constantFrom(...'aabc123qwezyx!@_-. "#~éA😀'), maxLength: 40 });
    fc.assert(
      fc.property(fc.oneof(keyboardish, fc.string({ unit: 'grapheme', maxLength: 40 })), (password) => {
        assert.equal(web.passwordEntropy(password), server.passwordEntropy(password));
      }),
      { numRuns: 2000 },
    );
  });
});

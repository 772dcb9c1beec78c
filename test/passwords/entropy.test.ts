import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { entropyBase, entropyLength, passwordEntropy } from '../../src/passwords/entropy.js';

describe('password entropy (CONTRACT.md "Entropy")', () => {
  test('length L: the published cases', () => {
    const published: Array<[string, number]> = [
      ['aaaa', 2],
      ['11112222', 4],
      ['aa123456', 4],
      ['876543', 2],
      ['qwerty123456z', 5],
    ];
    for (const [password, length] of published) assert.equal(entropyLength(password), length, password);
  });

  test('length L: runs collapse to two, other text is kept, and L counts UTF-8 bytes', () => {
    assert.equal(entropyLength(''), 0);
    assert.equal(entropyLength('a'), 1);
    assert.equal(entropyLength('aab'), 3);
    assert.equal(entropyLength('zyxw'), 2, 'a reversed sequence');
    assert.equal(entropyLength('poiuy'), 2, 'a reversed keyboard row');
    assert.equal(entropyLength('q1w2e3'), 6, 'interleaving is not a sequence');
    assert.equal(entropyLength('ééé'), 4, 'two kept, two bytes each');
    assert.equal(entropyLength('😀'), 4);
  });

  test('base B: the size of every class used, plus 1 per distinct unclassified character', () => {
    assert.equal(entropyBase(''), 0);
    assert.equal(entropyBase('abc'), 26);
    assert.equal(entropyBase('ABC'), 26);
    assert.equal(entropyBase('123'), 10);
    assert.equal(entropyBase('!@$&*'), 5);
    assert.equal(entropyBase('_-., '), 5);
    assert.equal(entropyBase('#%~'), 22);
    assert.equal(entropyBase('aB1'), 62);
    assert.equal(entropyBase('a!_#'), 26 + 5 + 5 + 22);
    assert.equal(entropyBase('é'), 1);
    assert.equal(entropyBase('ééü'), 2, 'distinct characters only');
    assert.equal(entropyBase('a€😀'), 28);
  });

  test('entropy is L × log2(B), and 0 for an empty password', () => {
    assert.equal(passwordEntropy(''), 0);
    assert.equal(passwordEntropy('aaaa'), 2 * Math.log2(26));
    assert.equal(passwordEntropy('aB1'), 3 * Math.log2(62));
    assert.equal(passwordEntropy('qwerty123456z'), 5 * Math.log2(36));
    assert.ok(
      passwordEntropy('violet-Harbor-lantern-42-quietly') >= 60,
      "the tests' good password passes the default 60 bits",
    );
    assert.ok(passwordEntropy('aaaaaaaaaaaaaaaaaaaa') < 60);
  });
});

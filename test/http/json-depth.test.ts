import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { JSON_MAX_DEPTH, jsonDepth, withinJsonDepth } from '../../src/shared/json-depth.js';

/**
 * The pre-parse depth scan (issue #37, finding 6) against JSON.parse itself: for any JSON text it
 * finds the depth of what JSON.parse builds, whatever the strings hold (brackets, quotes, runs of
 * backslashes, any Unicode), and its limit stops it exactly past that many levels.
 */

/** The depth of a parsed value: 0 for a scalar, 1 for `[]` or `{}`. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** Strings made of what could fool a scan: brackets, quotes, backslashes, multi-byte characters. */
const tricky = fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\\\', ':', ',', 'a', 'é', '€', '😀', '\u2028', '\n');
const values = fc.jsonValue({ maxDepth: 12, stringUnit: tricky });

/** Pretty or compact: whitespace between tokens does not matter. */
const layout = fc.constantFrom<string | number | undefined>(undefined, 0, 2, '\t');

test('the scan finds the depth JSON.parse builds, for any JSON text', () => {
  fc.assert(
    fc.property(values, layout, (value, indent) => {
      const text = JSON.stringify(value, null, indent);
      assert.equal(jsonDepth(bytes(text)), depthOf(JSON.parse(text)), text);
    }),
    { numRuns: 2000 },
  );
});

test('nesting built level by level, of arrays and objects with tricky keys, up to 200 deep', () => {
  const level = fc.record({
    object: fc.boolean(),
    key: fc.string({ unit: tricky, maxLength: 4 }),
    before: fc.array(values, { maxLength: 2 }),
  });
  fc.assert(
    fc.property(fc.array(level, { maxLength: 200 }), fc.jsonValue({ maxDepth: 2 }), (levels, leaf) => {
      let value: unknown = leaf;
      for (const { object, key, before } of levels) value = object ? { [key]: value } : [...before, value];
      const text = JSON.stringify(value);
      const depth = depthOf(JSON.parse(text));
      assert.equal(jsonDepth(bytes(text)), depth);
      // The limit: past it the scan stops and says so, at or under it the answer is exact.
      for (const limit of [0, depth - 1, depth, depth + 1].filter((l) => l >= 0)) {
        assert.equal(withinJsonDepth(bytes(text), limit), depth <= limit, `limit ${limit}, depth ${depth}`);
      }
    }),
    { numRuns: 500 },
  );
});

test('a body one level past the limit is refused, one at the limit is not; brackets in strings never count', () => {
  const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  assert.equal(withinJsonDepth(bytes(nested(JSON_MAX_DEPTH))), true);
  assert.equal(withinJsonDepth(bytes(nested(JSON_MAX_DEPTH + 1))), false);
  assert.equal(jsonDepth(bytes(`{"a":"${'['.repeat(1000)}","b":"\\"[[[\\\\"}`)), 1);
  assert.equal(jsonDepth(bytes(`["\\\\\\\\",[["\\\\\\"[["]]]`)), 3);
});

test('malformed text: exact up to where JSON.parse would stop; unterminated strings and stray closers end the scan', () => {
  // Unclosed: JSON.parse builds every level before it fails, so every level counts.
  assert.equal(jsonDepth(bytes('['.repeat(100_000)), JSON_MAX_DEPTH), JSON_MAX_DEPTH + 1);
  assert.equal(jsonDepth(bytes(`[["${'['.repeat(1000)}`)), 2);
  // JSON.parse refuses the first `]` of `]]]…`, so what follows it is never built.
  assert.equal(jsonDepth(bytes(`]]]${'['.repeat(1000)}`)), 0);
  assert.throws(() => JSON.parse(`]]]${'['.repeat(1000)}`));
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../src/errors.js';
import { createDiffRunner, INLINE_MAX_CHARS, INLINE_MAX_LINES, isTrivial } from '../../src/notes/diff-runner.js';

const MiB = 1024 * 1024;
const big = 'a\n'.repeat(MiB / 2);
const other = 'b\n'.repeat(MiB / 2);

type Outcome = { stats: { added: number; removed: number } } | AppError;
const settle = (job: Promise<Buffer>): Promise<Outcome> =>
  job.then(
    (json) => JSON.parse(json.toString('utf8')) as Outcome,
    (error: unknown) => {
      if (error instanceof AppError) return error;
      throw error;
    },
  );

function assertBusy(result: Outcome) {
  assert.ok(result instanceof AppError, `expected 503 busy, got ${JSON.stringify(result)}`);
  assert.deepEqual([result.status, result.code, result.headers], [503, 'busy', { 'retry-after': '1' }]);
}

test('only trivially small pairs count as trivial: by characters and by lines', () => {
  assert.equal(isTrivial('a\n'.repeat(50), 'b\n'.repeat(49)), true);
  assert.equal(isTrivial('a\n'.repeat(INLINE_MAX_LINES), ''), false);
  assert.equal(isTrivial('x'.repeat(INLINE_MAX_CHARS), 'y'), false);
  assert.equal(isTrivial('x'.repeat(INLINE_MAX_CHARS - 1), 'y'), true);
});

test('diffs beyond the queued-size bound are refused with 503 busy, the queued ones all answer', async () => {
  // One running and two waiting fill a queue of two pairs; the next two are refused.
  const runner = createDiffRunner({ maxChars: 2 * (big.length + other.length), maxWaitMs: 60_000 });
  try {
    const results = await Promise.all(
      Array.from({ length: 5 }, () => settle(runner.run(big, other, 3, '--- v1\n+++ v2\n'))),
    );
    for (const result of results.slice(0, 3))
      assert.deepEqual((result as { stats: unknown }).stats, { added: MiB / 2, removed: MiB / 2 });
    for (const result of results.slice(3)) assertBusy(result);
    // The queue drained: the next one is served.
    assert.deepEqual(((await settle(runner.run(big, other, 0, ''))) as { stats: unknown }).stats, {
      added: MiB / 2,
      removed: MiB / 2,
    });
  } finally {
    await runner.close();
  }
});

test('a diff that waits longer than the bound for the worker is refused with 503 busy', async () => {
  // The first diff keeps the worker busy (it starts the worker, then diffs 1 MiB) far longer than 1 ms.
  const runner = createDiffRunner({ maxChars: 64 * MiB, maxWaitMs: 1 });
  try {
    const [first, second] = await Promise.all([
      settle(runner.run(big, other, 3, '')),
      settle(runner.run(big, other, 3, '')),
    ]);
    assert.deepEqual((first as { stats: unknown }).stats, { added: MiB / 2, removed: MiB / 2 });
    assertBusy(second!);
  } finally {
    await runner.close();
  }
});

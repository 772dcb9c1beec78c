import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../src/errors.js';
import { createDiffRunner, INLINE_LIMIT, MAX_QUEUED } from '../../src/notes/diff-runner.js';

test('large diffs beyond the queue bound are refused with 503 busy, the queued ones all answer', async () => {
  const runner = createDiffRunner();
  try {
    const big = 'a\n'.repeat(INLINE_LIMIT);
    const other = 'b\n'.repeat(INLINE_LIMIT);
    const jobs = Array.from({ length: MAX_QUEUED + 2 }, () => runner.run(big, other, 3, '--- v1\n+++ v2\n').then(
      (json) => JSON.parse(json.toString('utf8')) as { stats: { added: number; removed: number } },
      (error: unknown) => error,
    ));
    const results = await Promise.all(jobs);
    for (const result of results.slice(0, MAX_QUEUED)) assert.deepEqual((result as { stats: unknown }).stats, { added: INLINE_LIMIT, removed: INLINE_LIMIT });
    for (const result of results.slice(MAX_QUEUED)) {
      assert.ok(result instanceof AppError);
      assert.deepEqual([result.status, result.code, result.headers], [503, 'busy', { 'retry-after': '1' }]);
    }
    // The queue drained: the next one is served.
    assert.equal(JSON.parse((await runner.run(big, other, 0, '')).toString('utf8')).complete, true);
  } finally {
    await runner.close();
  }
});

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { assertNoStall, healthDuring, listening, STALL_ENV } from '../helpers/stall.js';
import { fewValues } from './diff-texts.js';
import { notesClient } from './support.js';

/** Issue #19, finding 5: fifty concurrent diffs of ~60 K versions stalled /healthz 1.9-4.2 s. */
forEachDatabase(
  'diff stall',
  (ctx) => {
    const api = notesClient(() => ctx.app);
    let s: Session;
    before(async () => {
      s = await newSession(ctx.app);
    });

    async function noteWith(from: string, to: string): Promise<string> {
      const note = await api.createOk(s, { title: 'budget', content: from });
      await api.addVersionOk(s, note.id, { title: 'budget', content: to });
      return note.id;
    }

    test('50 concurrent diffs of two ~60 K versions: /healthz answered meanwhile, no long turn; each diff answers or is refused busy', async () => {
      const id = await noteWith(fewValues(60_000, 9), fewValues(60_000, 10));
      const base = await listening(ctx.app);
      // Warm: the first diff starts the worker, and this process's first fetch loads its HTTP client.
      assert.equal((await fetch(`${base}/api/notes/${id}/diff`, { headers: s.auth })).status, 200);
      const probed = await healthDuring(base, () =>
        Promise.all(
          Array.from({ length: 50 }, async () => {
            const res = await fetch(`${base}/api/notes/${id}/diff`, { headers: s.auth });
            return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
          }),
        ),
      );
      assertNoStall(probed, `[${ctx.kind}] 50 concurrent diffs`);
      const { result } = probed;
      const answered = result.filter((r) => r.status === 200);
      const refused = result.filter((r) => r.status !== 200);
      assert.ok(answered.length > 0);
      // Every answer the same; every refusal 503 busy, retry in a second.
      assert.equal(new Set(answered.map((r) => r.body)).size, 1);
      for (const r of refused) {
        assert.deepEqual([r.status, r.retryAfter, JSON.parse(r.body).code], [503, '1', 'busy']);
      }
    });
  },
  STALL_ENV,
);

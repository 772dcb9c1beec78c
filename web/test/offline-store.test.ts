// Issue 40: the offline cache is bounded, gives way to unsaved text, and never drops a draft.
// fake-indexeddb gives Node the IndexedDB the browser has; each test starts from an empty one.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { listDrafts, saveDraft } from '../src/notes/drafts.js';
import { findAnswer, forgetKept, keepAnswer, keptSize, LIMITS, trimKept } from '../src/offline/store.js';
import { fullDatabases } from '../src/shared/idb.js';
import { until } from '../../test/helpers/until.js';

const answer = (body: string, savedAt: string) => ({
  body,
  contentType: 'application/json',
  etag: null,
  total: null,
  savedAt,
});
/** The n-th second of a day: later answers were fetched later. */
const at = (n: number) => new Date(Date.UTC(2026, 10, 27, 0, 0, n)).toISOString();

beforeEach(async () => {
  await forgetKept();
});

describe('the offline cache', () => {
  it('keeps at most the answers limit, dropping those fetched longest ago', async () => {
    for (let i = 0; i < 10; i += 1) await keepAnswer('u1', `/api/notes/${i}`, answer(`{"n":${i}}`, at(i)));
    // Note 2 seen again: fetched last now.
    await keepAnswer('u1', '/api/notes/2', answer('{"n":2}', at(20)));
    const gone = await trimKept({ answers: 4, bytes: LIMITS.bytes });
    assert.equal(gone, 6);
    const left: number[] = [];
    for (let i = 0; i < 10; i += 1) if ((await findAnswer('u1', `/api/notes/${i}`)) !== undefined) left.push(i);
    assert.deepEqual(left, [2, 7, 8, 9]);
    assert.equal((await keptSize()).answers, 4);
  });

  it('keeps at most the bytes limit, counting each body in UTF-8', async () => {
    // 300 bytes of body each ("é" is two bytes), plus the 200 counted for the rest of the answer.
    for (let i = 0; i < 5; i += 1) await keepAnswer('u1', `/api/notes/${i}`, answer('é'.repeat(150), at(i)));
    assert.deepEqual(await keptSize(), { answers: 5, bytes: 2500 });
    await trimKept({ answers: LIMITS.answers, bytes: 1600 });
    assert.deepEqual(await keptSize(), { answers: 3, bytes: 1500 });
    assert.equal(await findAnswer('u1', '/api/notes/1'), undefined);
    assert.notEqual(await findAnswer('u1', '/api/notes/2'), undefined);
  });

  it('trims by itself past the limits after keeping an answer', async () => {
    const before = LIMITS.answers;
    LIMITS.answers = 3;
    try {
      for (let i = 0; i < 6; i += 1) await keepAnswer('u1', `/api/notes/${i}`, answer('{}', at(i)));
      await until(async () => (await keptSize()).answers === 3, 'the trim after keeping');
      assert.equal(await findAnswer('u1', '/api/notes/0'), undefined);
      assert.notEqual(await findAnswer('u1', '/api/notes/5'), undefined);
    } finally {
      LIMITS.answers = before;
    }
  });

  it('never touches unsaved text: drafts are kept apart and outlive any trim', async () => {
    await saveDraft('u1', 'n1', { title: 'T', content: 'typed offline', baseVersion: 3, savedAt: at(0) });
    for (let i = 0; i < 5; i += 1) await keepAnswer('u1', `/api/notes/${i}`, answer('{}', at(i + 1)));
    await trimKept({ answers: 0, bytes: 0 });
    assert.equal((await keptSize()).answers, 0);
    assert.deepEqual(
      (await listDrafts('u1')).map((d) => d.draft.content),
      ['typed offline'],
    );
    assert.equal(fullDatabases().size, 0);
  });
});

describe('a full device (QuotaExceededError)', () => {
  it('refuses a draft plainly, makes room by dropping the oldest half of the cache, then keeps the next', async () => {
    for (let i = 0; i < 10; i += 1) await keepAnswer('u1', `/api/notes/${i}`, answer('{}', at(i)));
    const put = IDBObjectStore.prototype.put;
    let refuse = true;
    // The drafts' database refuses writes as a full disk does, until the cache has given way.
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['put']>) {
      if (refuse && this.transaction.db.name === 'vellum-drafts')
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return put.apply(this, args);
    };
    try {
      const draft = { title: 'T', content: 'typed on a full disk', baseVersion: 1, savedAt: at(30) };
      assert.equal(await saveDraft('u1', 'n1', draft), undefined);
      assert.deepEqual([...fullDatabases()], ['vellum-drafts']);
      await until(async () => (await keptSize()).answers === 5, 'the cache giving way');
      assert.equal(await findAnswer('u1', '/api/notes/4'), undefined);
      assert.notEqual(await findAnswer('u1', '/api/notes/5'), undefined);
      refuse = false;
      await saveDraft('u1', 'n1', draft);
      assert.deepEqual(
        (await listDrafts('u1')).map((d) => d.draft.content),
        ['typed on a full disk'],
      );
      assert.equal(fullDatabases().size, 0);
    } finally {
      IDBObjectStore.prototype.put = put;
    }
  });
});

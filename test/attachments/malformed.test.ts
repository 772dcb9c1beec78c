import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession, problemOf } from '../helpers/harness.js';

/** Found by the fuzz test: a multipart body the parser cannot read was a 500. */
forEachDatabase('attachments: unreadable multipart bodies', (ctx) => {
  test('a multipart body without its boundary, or with a broken part header, is 400, never 500', async () => {
    const user = await newSession(ctx.app, 'mp');
    for (const payload of [
      '{"username":"","password":"x"}',
      '--x\r\nContent-Disposition\r\n\r\nx\r\n--x--\r\n',
      '--x\r\n',
    ]) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/attachments',
        headers: { ...user.auth, 'content-type': 'multipart/form-data; boundary=x' },
        payload,
      });
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      assert.match(problemOf(res).detail, /multipart body/);
    }
  });
});

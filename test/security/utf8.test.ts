import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { expectProblem } from '../notes/support.js';

const DETAIL = 'Invalid request body: it is not valid UTF-8';

/** A JSON body whose content string holds these raw bytes. */
const bodyWith = (bytes: number[]) =>
  Buffer.concat([Buffer.from('{"title":"t","content":"a'), Buffer.from(bytes), Buffer.from('b"}')]);

const INVALID: Array<[string, number[]]> = [
  ['a lone continuation byte', [0x80]],
  ['0xFF', [0xff]],
  ['an overlong "/"', [0xc0, 0xaf]],
  ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ['a sequence cut short', [0xe2, 0x82]],
  ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
];

forEachDatabase('JSON bodies that are not UTF-8', (ctx) => {
  test('are 400 on every JSON route, and nothing is stored', async () => {
    const s = await newSession(ctx.app, 'utf8');
    for (const [what, bytes] of INVALID) {
      const create = await ctx.app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: { ...s.auth, 'content-type': 'application/json' },
        payload: bodyWith(bytes),
      });
      assert.equal(create.statusCode, 400, what);
      expectProblem(create, 400, DETAIL, 'validation_failed');
      const signup = await ctx.app.inject({
        method: 'POST',
        url: '/api/auth/signup',
        headers: { 'content-type': 'application/json' },
        payload: Buffer.concat([
          Buffer.from('{"username":"u'),
          Buffer.from(bytes),
          Buffer.from('x","password":"violet-Harbor-lantern-42-quietly"}'),
        ]),
      });
      assert.equal(signup.statusCode, 400, what);
      expectProblem(signup, 400, DETAIL, 'validation_failed');
    }
    const list = await ctx.app.inject({ method: 'GET', url: '/api/notes', headers: s.auth });
    assert.deepEqual(list.json(), [], 'no note was created from a body with bad bytes');
  });

  test('valid multi-byte text still round-trips', async () => {
    const s = await newSession(ctx.app, 'utf8ok');
    const content = 'é 中 😀 \u{10FFFF}';
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: { ...s.auth, 'content-type': 'application/json' },
      payload: Buffer.from(JSON.stringify({ title: 't', content })),
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal((created.json() as { content: string }).content, content);
  });
});

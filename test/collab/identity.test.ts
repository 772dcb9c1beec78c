import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COLLAB_CONNECTIONS_PER_USER, TOO_MANY_CONNECTIONS } from '../../src/collab/collab.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { connect, listening, sharedNote, type Client } from './support.js';

interface Shown {
  user?: { name?: string; color?: string; colorLight?: string };
  cursor?: unknown;
}

forEachDatabase('who is shown at /api/collab, and how many connections an account may hold', (ctx) => {
  let url: string;
  let owner: Session;
  const clients: Client[] = [];
  const open = (noteId: string, token: string) => {
    const client = connect(url, noteId, token);
    clients.push(client);
    return client;
  };

  test.before(async () => {
    url = await listening(ctx.app);
    owner = await newSession(ctx.app, 'idn');
  });
  test.afterEach(() => {
    for (const client of clients.splice(0)) client.destroy();
  });

  test("a client claiming another person's name and colour is shown with its own account's", async () => {
    const mallory = await newSession(ctx.app, 'mal');
    const id = await sharedNote(ctx.app, owner, mallory);
    const o = open(id, owner.accessToken);
    const m = open(id, mallory.accessToken);
    assert.equal(await o.ready, true);
    assert.equal(await m.ready, true);
    // What a modified client could announce: the owner's name, any colour, and a cursor.
    m.provider.setAwarenessField('user', { name: owner.username, color: '#000000', colorLight: '#00000033' });
    m.provider.setAwarenessField('cursor', { anchor: 3 });
    const state = await until(() => {
      const shown = o.provider.awareness?.getStates().get(m.doc.clientID) as Shown | undefined;
      return shown?.user !== undefined && shown.cursor !== undefined ? shown : undefined;
    }, "mallory's state at the owner's");
    assert.equal(state.user?.name, mallory.username);
    assert.notEqual(state.user?.color, '#000000');
    assert.deepEqual(state.cursor, { anchor: 3 }, 'the rest of the state is passed on');
    // Claimed again later (a changed state): still the account's name.
    m.provider.setAwarenessField('user', { name: `${owner.username} (owner)` });
    m.provider.setAwarenessField('cursor', { anchor: 4 });
    const again = await until(() => {
      const shown = o.provider.awareness?.getStates().get(m.doc.clientID) as Shown | undefined;
      return (shown?.cursor as { anchor?: number } | undefined)?.anchor === 4 ? shown : undefined;
    }, "mallory's second state");
    assert.equal(again.user?.name, mallory.username);
    // A client announcing its own name honestly is shown with it.
    o.provider.setAwarenessField('user', { name: owner.username });
    const honest = await until(
      () => (m.provider.awareness?.getStates().get(o.doc.clientID) as Shown | undefined)?.user,
      "the owner's state at mallory's",
    );
    assert.equal(honest.name, owner.username);
  });

  test(`an account may hold ${COLLAB_CONNECTIONS_PER_USER} connections on an instance; one more is refused with ${TOO_MANY_CONNECTIONS}`, async () => {
    const many = await newSession(ctx.app, 'cap');
    const other = await newSession(ctx.app, 'oth');
    const id = await sharedNote(ctx.app, owner, many, other);
    const held: Client[] = [];
    for (let i = 0; i < COLLAB_CONNECTIONS_PER_USER; i += 1) held.push(open(id, many.accessToken));
    assert.deepEqual(
      await Promise.all(held.map((c) => c.ready)),
      held.map(() => true),
    );
    const refused = open(id, many.accessToken);
    assert.equal(await refused.ready, false);
    assert.equal(refused.refusedReason(), TOO_MANY_CONNECTIONS);
    // Another account is not held back by it.
    assert.equal(await open(id, other.accessToken).ready, true);
    // One closed: one more may open.
    held[0]!.destroy();
    await until(
      () => ctx.app.collab.connectionCount === COLLAB_CONNECTIONS_PER_USER /* 19 of many's and other's */,
      'the closed connection gone',
    );
    assert.equal(await open(id, many.accessToken).ready, true);
  });
});

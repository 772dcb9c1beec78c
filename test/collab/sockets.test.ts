import assert from 'node:assert/strict';
import net from 'node:net';
import { mock, test } from 'node:test';
import WebSocket from 'ws';
import { AUTHENTICATION_MS, UNAUTHENTICATED_BYTES } from '../../src/collab/socket-guard.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { connect, frame, listening, sharedNote } from './support.js';

/**
 * The socket-level limits of /api/collab (collab/socket-guard.ts): a broken frame ends its socket
 * and nothing else; a socket that is not let into a note in time, or sends too much before, is
 * closed (1008).
 */

/** A raw TCP connection upgraded to a WebSocket by hand, to send frames no WebSocket client would. */
async function rawSocket(url: string): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  socket.write(
    'GET /api/collab HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  const head = await new Promise<string>((resolve) =>
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString())),
  );
  assert.match(head, /^HTTP\/1\.1 101 /);
  return { socket, closed };
}

const MASK = [0, 0, 0, 0];

/** Each message of a flood: a sync message of 64 KiB. */
const CHUNK = 64 * 1024;

/** Sends sync messages for `documentName` until the allowance is spent or the socket closes; bytes sent. */
function flood(ws: WebSocket, documentName: string): number {
  const message = Buffer.concat([frame(documentName, 0), Buffer.alloc(CHUNK)]);
  let sent = 0;
  for (; ws.readyState === WebSocket.OPEN && sent <= UNAUTHENTICATED_BYTES; sent += message.length) ws.send(message);
  return sent;
}

forEachDatabase('the sockets of /api/collab', (ctx) => {
  test('a frame unmasked, with a reserved opcode, or longer than allowed ends its socket; the service carries on', async () => {
    const url = await listening(ctx.app);
    const owner = await newSession(ctx.app, 'frm');
    const frames: Record<string, Buffer> = {
      unmasked: Buffer.from([0x82, 0x01, 0x00]),
      'opcode 3': Buffer.from([0x83, 0x80, ...MASK]),
      // A binary frame announcing 9 MiB (over the 8 MiB allowed): refused on its header.
      'too long': Buffer.from([0x82, 0xff, 0, 0, 0, 0, 0, 0x90, 0, 0, ...MASK]),
    };
    for (const [what, frame] of Object.entries(frames)) {
      const { socket, closed } = await rawSocket(url);
      socket.write(frame);
      await closed;
      const health = await fetch(`${url.replace('ws:', 'http:').replace('/api/collab', '')}/healthz`);
      assert.equal(health.status, 200, what);
    }
    // Co-editing still works.
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: owner.auth,
      payload: { title: 'After', content: 'x\n' },
    });
    const client = connect(url, created.json().id, owner.accessToken);
    try {
      assert.equal(await client.ready, true);
    } finally {
      client.destroy();
    }
  });

  test('a socket sending more than the allowance before it is let into a note is closed, 1008', async () => {
    const url = await listening(ctx.app);
    const ws = new WebSocket(url);
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await new Promise((resolve) => ws.once('open', resolve));
    // Sync messages for a note it never authenticated for: Hocuspocus would keep them all.
    const sent = flood(ws, '00000000-0000-4000-8000-000000000000');
    assert.deepEqual(await closed, { code: 1008, reason: 'too much before authentication' });
    assert.ok(sent > UNAUTHENTICATED_BYTES - CHUNK, `${sent} bytes sent`);
  });

  // A time-out of its own: were the allowance not counted again, the socket would stay open and the test wait.
  test("a note's connection ended (the socket stays): what is sent for it counts again", {
    timeout: 20_000,
  }, async () => {
    const url = await listening(ctx.app);
    const owner = await newSession(ctx.app, 'lft');
    const editor = await newSession(ctx.app, 'lfe');
    const id = await sharedNote(ctx.app, owner, editor);
    // Hocuspocus' own messages, by hand: a provider would reconnect on its own when the socket closes.
    const ws = new WebSocket(url);
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(frame(id, 2, 0, editor.accessToken)); // Auth, token
    await until(() => ctx.app.collab.connectionCount === 1, 'let into the note');
    const removed = await ctx.app.inject({
      method: 'DELETE',
      url: `/api/notes/${id}/members/${editor.userId}`,
      headers: owner.auth,
    });
    assert.equal(removed.statusCode, 204, removed.body);
    await until(() => ctx.app.collab.connectionCount === 0, 'the note connection ended');
    assert.equal(ws.readyState, WebSocket.OPEN, 'the socket stays');
    flood(ws, id);
    assert.equal(await closed, 1008);
  });

  test('a socket not let into any note within the time allowed is closed, 1008; one let in stays', async () => {
    const url = await listening(ctx.app);
    const owner = await newSession(ctx.app, 'tmo');
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: owner.auth,
      payload: { title: 'Open', content: 'x\n' },
    });
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const idle = new WebSocket(url);
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        idle.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      await new Promise((resolve) => idle.once('open', resolve));
      const client = connect(url, created.json().id, owner.accessToken);
      assert.equal(await client.ready, true);
      mock.timers.tick(AUTHENTICATION_MS);
      assert.deepEqual(await closed, { code: 1008, reason: 'authentication required' });
      assert.equal(client.closeCode(), undefined, 'the socket let into a note stays open');
      client.destroy();
    } finally {
      mock.timers.reset();
    }
  });
});

import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, forEachDatabase } from '../helpers/harness.js';

/**
 * Node counts a connection that never sent a request as busy until its headers timeout (60 s):
 * close() waited for it that long (a diff stall test's close took 62 s in CI). The time-out makes
 * a hang a failure; it measures nothing.
 */
forEachDatabase('close with unused connections', (ctx) => {
  test('close() ends a connection that never sent a byte and one idle after its answer, and answers one whose request is arriving', {
    timeout: 20_000,
  }, async () => {
    const app = await buildTestApp(ctx.config, ctx.database);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as net.AddressInfo;
    /** A client socket, and the server's side of it. */
    const connect = async () => {
      const accepted = once(app.server, 'connection') as Promise<[net.Socket]>;
      const socket = net.connect(port, '127.0.0.1');
      const [, [server]] = await Promise.all([once(socket, 'connect'), accepted]);
      return { socket, server };
    };
    const silent = await connect();
    const used = await connect();
    used.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const [answer] = (await once(used.socket, 'data')) as [Buffer];
    assert.match(answer.toString(), /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer.toString(), /\r\nconnection: keep-alive\r\n/i);
    // A request half-way in when close begins is not cut: it gets its answer.
    const arriving = await connect();
    arriving.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    while (arriving.server.bytesRead === 0) await new Promise((resolve) => setImmediate(resolve));
    const reply = once(arriving.socket, 'data') as Promise<[Buffer]>;

    const ended = [once(silent.socket, 'close'), once(used.socket, 'close')];
    const closed = app.close();
    arriving.socket.write('\r\n');
    const [late] = await reply;
    assert.match(late.toString(), /^HTTP\/1\.1 (200 OK|503 Service Unavailable)\r\n/);
    await closed;
    await Promise.all(ended);
  });
});

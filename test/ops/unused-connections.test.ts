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
  test('close() ends a connection that never sent a request, and one left idle after its answer', { timeout: 20_000 }, async () => {
    const app = await buildTestApp(ctx.config, ctx.database);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as net.AddressInfo;
    const connect = async () => {
      const accepted = once(app.server, 'connection');
      const socket = net.connect(port, '127.0.0.1');
      await Promise.all([once(socket, 'connect'), accepted]);
      return socket;
    };
    const silent = await connect();
    const used = await connect();
    used.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const [answer] = await once(used, 'data') as [Buffer];
    assert.match(answer.toString(), /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer.toString(), /\r\nconnection: keep-alive\r\n/i);

    const ended = [once(silent, 'close'), once(used, 'close')];
    await app.close();
    await Promise.all(ended);
  });
});

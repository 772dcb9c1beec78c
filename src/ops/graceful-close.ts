import type { FastifyInstance } from 'fastify';

/**
 * Graceful shutdown: app.close() stops accepting connections, closes the idle keep-alive ones and
 * waits for the rest. A connection whose request is still running only becomes idle after its
 * response, and Node then keeps it open for the client's next request, so close() waited until
 * the client dropped it (up to keepAliveTimeout) and main.ts's shutdown deadline exited with 1.
 * While closing, every response says `Connection: close`, so each connection ends with it.
 */
export function registerGracefulClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    // HTTP/2 has no Connection header (and closes streams, not connections).
    if (closing && request.raw.httpVersionMajor < 2) reply.header('connection', 'close');
    return payload;
  });
}

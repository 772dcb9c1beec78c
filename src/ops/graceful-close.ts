import type { FastifyInstance } from 'fastify';

/**
 * Graceful shutdown: app.close() stops accepting connections, closes the idle keep-alive ones and
 * waits for the rest. A connection whose request is still running only becomes idle after its
 * response, and Node then keeps it open for the client's next request, so close() waited until
 * the client dropped it (up to keepAliveTimeout) and main.ts's shutdown deadline exited with 1.
 * While closing, every response says `Connection: close` (set by the response-header hook in
 * http/security-headers.ts), so each connection ends with it.
 *
 * Returns whether the app is closing.
 */
export function registerGracefulClose(app: FastifyInstance): () => boolean {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  return () => closing;
}

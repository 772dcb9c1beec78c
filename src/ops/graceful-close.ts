import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Graceful shutdown in two steps.
 *
 * 1. Drain (drainAndClose below): /readyz answers 503 at once, so a load balancer stops sending
 *    new traffic here, but the listener stays open for SHUTDOWN_DRAIN_SECONDS. Requests already in
 *    flight, and those that arrive meanwhile (sent before the balancer noticed, or still in the
 *    accept queue), are served. Closing the listener at once reset every connection still waiting
 *    to be accepted (measured: 98–120 of a burst of 140).
 * 2. Close: app.close() stops accepting connections, closes the idle keep-alive ones and those that
 *    never sent a request, and waits for the rest.
 *
 * From the drain on, every response says `Connection: close` (set by the response-header hook in
 * http/security-headers.ts), so each keep-alive connection ends with its next response instead of
 * being kept for a request that would arrive after the listener closed. Without it, a connection
 * whose request was running only became idle after its response, Node kept it open for the
 * client's next request, and close() waited until the client dropped it.
 *
 * Returns whether the app is draining or closing.
 */
export function registerGracefulClose(app: FastifyInstance): () => boolean {
  const state = { draining: false };
  drainState.set(app, state);
  // Connections that never sent a byte (a browser's preconnect, a client pool's spare socket): Node
  // counts them as busy, so close() waited for them until the socket time-out (connectionTimeout,
  // 60 s). Nothing of theirs is lost by ending them at close; one whose first request is arriving
  // (bytes read, no 'request' yet) is left to be served.
  const unused = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  app.server.on('request', (request: IncomingMessage) => unused.delete(request.socket));
  app.addHook('preClose', async () => {
    state.draining = true;
    for (const socket of unused) if (socket.bytesRead === 0) socket.destroy();
  });
  return () => state.draining;
}

const drainState = new WeakMap<FastifyInstance, { draining: boolean }>();

/** Marks the app as draining (readiness 503, `Connection: close`), waits `drainMs`, then closes it. */
export async function drainAndClose(app: FastifyInstance, drainMs: number): Promise<void> {
  const state = drainState.get(app);
  if (state !== undefined) state.draining = true;
  if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
  await app.close();
}

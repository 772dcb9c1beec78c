import type { IncomingMessage } from 'node:http';

/**
 * How much of a refused request body is read and thrown away so the client can read the answer.
 * An answer that closes the connection while the client is still sending ends in a TCP reset
 * (the kernel resets a socket closed with unread data), and most clients then report the reset
 * (EPIPE, ECONNRESET, "fetch failed") instead of the 413. Past these bounds the client is told
 * anyway and may see the reset: a body that much too large is not an honest mistake.
 */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
export const DISCARD_MAX_MS = 10_000;

/**
 * Reads and discards the rest of `request`'s body: resolves once it has all arrived, the
 * connection has gone, or more than `maxBytes` (beyond what was already read) or `maxMs` went by.
 * Never rejects. A body announced more than `maxBytes` over `limit` (the route's body limit) is
 * not read at all: it would not fit the bound anyway.
 */
export function discardBody(
  request: IncomingMessage,
  limit: number,
  maxBytes = DISCARD_MAX_BYTES,
  maxMs = DISCARD_MAX_MS,
): Promise<void> {
  // `complete`: Node's own flag; `readableEnded` also covers requests made without a socket (inject).
  if (request.complete || request.readableEnded || request.destroyed) return Promise.resolve();
  const announced = Number(request.headers['content-length']);
  if (Number.isFinite(announced) && announced - limit > maxBytes) return Promise.resolve();
  return new Promise((resolve) => {
    let discarded = 0;
    const finish = () => {
      clearTimeout(timer);
      request.off('data', onData).off('end', finish).off('close', finish).off('error', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > maxBytes) finish();
    };
    const timer = setTimeout(finish, maxMs);
    // A route that read its own body (POST /import, through the stream's async iterator) and
    // stopped at the limit leaves its 'readable' listener, which keeps the stream paused for good.
    request.removeAllListeners('readable');
    request.on('data', onData).on('end', finish).on('close', finish).on('error', finish);
    request.resume();
  });
}

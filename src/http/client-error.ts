import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { Errors } from '../errors.js';
import { PROBLEM_CONTENT_TYPE, problemOf, type Problem } from './problem.js';
import { securityHeaders } from './security-headers.js';

/** What Node's HTTP parser refuses before any route runs, as problem+json. */
function answerFor(code: string | undefined): Problem {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problemOf(Errors.requestTimeout());
    case 'HPE_HEADER_OVERFLOW':
      return problemOf(Errors.headersTooLarge());
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return problemOf(Errors.chunkExtensionsTooLarge());
    default:
      return problemOf(Errors.malformedRequest());
  }
}

/**
 * Fastify's `clientErrorHandler`: the server's 'clientError' event, for what fails below Fastify
 * (headers or body not arrived within HEADERS_TIMEOUT_SECONDS / REQUEST_TIMEOUT_SECONDS, headers
 * too large, malformed HTTP). Fastify's default writes its own JSON shape; this writes the same
 * problem+json as every other error, with the security headers, then closes the connection as
 * Node does: the parser is in no state to read another request.
 */
export function clientErrorHandler(config: Config) {
  const headerLines = Object.entries({ ...securityHeaders(config), 'cache-control': 'no-store' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return function onClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
    // A reset connection has nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const body = answerFor(error.code);
    this.log.debug({ err: error, status: body.status }, 'client error');
    // As Node does: write only if no response has started on this connection, or the bytes
    // would land in the middle of one. (_httpMessage is the response in flight on the socket.)
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && (inFlight == null || !inFlight.headersSent)) {
      const json = JSON.stringify(body);
      socket.write(
        `HTTP/1.1 ${body.status} ${body.title}\r\n` +
          `content-type: ${PROBLEM_CONTENT_TYPE}\r\n` +
          `content-length: ${Buffer.byteLength(json)}\r\n` +
          headerLines +
          'connection: close\r\n\r\n' +
          json,
      );
    }
    socket.destroy();
  };
}

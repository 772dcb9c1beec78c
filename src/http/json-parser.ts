import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { Errors } from '../errors.js';
import { JSON_MAX_DEPTH, withinJsonDepth } from '../shared/json-depth.js';

/**
 * Fastify's own JSON parser (prototype poisoning refused), except that an empty body counts as
 * no body: routes whose body is optional (POST /api/notes) then work with any client, and routes
 * that need one still answer 400 through their schema. Bytes that are not UTF-8 are a 400, and so
 * is a body nested deeper than JSON_MAX_DEPTH, found by a scan before JSON.parse builds anything.
 */
export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // Fastify also accepts text/plain by default, which turned a non-JSON body into a 400 instead of
  // the 415 of docs/api.md, "Statuses"; it is also a type a cross-site form can send without a CORS preflight.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // Decoding would silently turn invalid bytes into U+FFFD and store text the client never sent.
    if (!isUtf8(body as Buffer))
      return done(Errors.validation('Invalid request body: it is not valid UTF-8'), undefined);
    // JSON.parse pays for every level it builds (6.5 MiB of `[[[…]]]` held the event loop for seconds).
    if (!withinJsonDepth(body as Buffer)) return done(Errors.nestedTooDeep(JSON_MAX_DEPTH), undefined);
    const text = body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    parse(request, text, done);
  });
}

import type { FastifyInstance } from 'fastify';

/**
 * Fastify's own JSON parser (prototype poisoning refused), except that an empty body counts as
 * no body: routes whose body is optional (POST /api/notes) then work with any client, and routes
 * that need one still answer 400 through their schema.
 */
export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // Fastify also accepts text/plain by default, which turned a non-JSON body into a 400 instead of
  // CONTRACT.md's 415; it is also a type a cross-site form can send without a CORS preflight.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text.trim() === '') return done(null, undefined);
    parse(request, text, done);
  });
}

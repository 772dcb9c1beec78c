import { callerClaims, callerId } from '../http/caller.js';
import type { FastifyPluginAsync } from 'fastify';
import { Errors } from '../errors.js';
import type { LiveEvents } from './live.js';
import type { StreamCredential } from './stream-credentials.js';

/** A personal token's stream lasts this long (its claims last a minute); the client reconnects. */
const PERSONAL_STREAM_MS = 15 * 60_000;

/** GET /api/events: server-sent events of the caller's notes and the notes shared with them. */
export const eventsRoutes: FastifyPluginAsync<{ live: LiveEvents; headers: Record<string, string> }> = async (
  app,
  { live, headers },
) => {
  app.get(
    '/events',
    {
      config: { policy: { auth: 'access', noStore: true }, docs: { errors: [429] } },
      schema: {
        tags: ['sharing'],
        operationId: 'liveEvents',
        summary: 'Live changes (server-sent events)',
        description:
          'A `text/event-stream` of `note.created`, `note.updated` ({id, version, author_username}), `note.filed`, `note.trashed`, ' +
          "`note.restored`, `note.deleted` and `share.changed` events, each with a JSON `data` line holding at least the note's `id`, for every " +
          'note the caller owns or is a member of, from every instance. `event: resync` with `data: {"reason":"events_missed"}` (no ' +
          'note id): this instance lost its connection to the others and has it back, so events may have been missed; fetch again ' +
          'everything shown. A comment line at least every 25 s; the stream ends when the access ' +
          'token expires (reconnect with a fresh one), and within 5 s of its session ending (logout, password change, session revoke, ' +
          '"sign out everywhere else", account deletion) or, for a personal access token, of its deletion or expiry. An access token ' +
          'whose session has ended is refused (401). At most 20 streams per user (429).',
        response: {
          200: { description: 'the event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        },
      },
    },
    async (request, reply) => {
      const userId = callerId(request);
      const claims = callerClaims(request);
      const personal = request.personalToken;
      // A personal token was just looked up by the access layer; an access token's session was not.
      const credential: StreamCredential =
        personal === null
          ? { kind: 'session', userId, jti: claims.jti }
          : { kind: 'personal', userId, tokenId: personal.id };
      if (personal === null && !(await live.isValid(credential))) throw Errors.unauthorized();
      if (live.count(userId) >= live.options.perUser) {
        throw Errors.tooManyStreams(live.options.perUser);
      }
      const lifetime =
        personal === null
          ? claims.exp * 1000 - Date.now()
          : Math.min(
              PERSONAL_STREAM_MS,
              personal.expiresAt === null ? Infinity : Date.parse(personal.expiresAt) - Date.now(),
            );
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        ...headers,
        'x-request-id': request.id,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        // nginx and others would buffer the stream otherwise.
        'x-accel-buffering': 'no',
      });
      raw.write('retry: 3000\n: connected\n\n');
      const stream = live.add(userId, raw, credential);
      const expiry = setTimeout(stream.end, Math.max(0, lifetime));
      raw.on('close', () => clearTimeout(expiry));
    },
  );
};

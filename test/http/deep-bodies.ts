import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { TestContext } from '../helpers/harness.js';
import { GOOD_PASSWORD, problemOf } from '../helpers/harness.js';
import { newAdminSession } from '../helpers/auth.js';
import { docOperations, openApiDoc } from '../helpers/openapi-check.js';

/**
 * The routes of issue #37's sweep: every documented operation that takes a JSON body, and the
 * WebDAV methods that take XML (PROPFIND, PROPPATCH, LOCK), each with the credentials that get a
 * request past its onRequest hooks to the body parser (an administrator's: it may call them all).
 */
export interface BodyRoute {
  /** `POST /api/notes/{noteID}/versions`, or `PROPFIND /dav/…` */
  name: string;
  method: string;
  url: string;
  kind: 'json' | 'xml';
  headers: Record<string, string>;
}

/** Every path parameter gets this id: path parameters are checked after the body is parsed. */
const SOME_ID = '0b7e5c1e-8d7a-4c55-9a3e-3f1d2a6b9c10';

export async function bodyRoutes(ctx: TestContext): Promise<BodyRoute[]> {
  const admin = await newAdminSession(ctx);
  const routes: BodyRoute[] = [];
  for (const [name, op] of docOperations(await openApiDoc(ctx.app))) {
    if (op.requestBody?.content['application/json'] === undefined) continue;
    const [method, path] = name.split(' ') as [string, string];
    routes.push({
      name,
      method,
      url: path.replace(/\{[^}]+\}/g, SOME_ID),
      kind: 'json',
      headers: { ...admin.auth, 'content-type': 'application/json' },
    });
  }
  // WebDAV: a note to address, and a dav token to do it with.
  const note = await ctx.app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: admin.auth,
    payload: { title: 'Deep', content: 'x' },
  });
  assert.equal(note.statusCode, 201, note.body);
  const token = await ctx.app.inject({
    method: 'POST',
    url: '/api/auth/tokens',
    headers: admin.auth,
    payload: { name: 'dav', scopes: ['dav'], password: GOOD_PASSWORD },
  });
  assert.equal(token.statusCode, 201, token.body);
  const basic = `Basic ${Buffer.from(`${admin.username}:${token.json().token}`).toString('base64')}`;
  for (const method of ['PROPFIND', 'PROPPATCH', 'LOCK']) {
    routes.push({
      name: `${method} /dav/Deep.md`,
      method,
      url: '/dav/Deep.md',
      kind: 'xml',
      headers: { authorization: basic, depth: '0', 'content-type': 'application/xml' },
    });
  }
  return routes;
}

const KiB = 1024;
const MiB = 1024 * KiB;
/** The body limits of the service (JSON: auth and default, notes, import; XML: WebDAV), largest first. */
const JSON_LIMITS = [64 * MiB, 7 * MiB, 16 * KiB];
const XML_LIMITS = [256 * KiB];
/** Left for the headers' and framing's sake: "near the limit", not over it. */
const MARGIN = 256;

/** A body `levels` deep, closed (`[[…]]`, `<a><a>…</a></a>`) or left open when `closed` is false. */
export function deepBody(kind: 'json' | 'xml', levels: number, closed = true): string {
  if (kind === 'json') return `${'['.repeat(levels)}${closed ? ']'.repeat(levels) : ''}`;
  return `<?xml version="1.0"?>${'<a>'.repeat(levels)}${closed ? '</a>'.repeat(levels) : ''}`;
}

/** As deep as `bytes` allows, balanced (the shape JSON.parse and saxes paid most for). */
export function deepBodyOfSize(kind: 'json' | 'xml', bytes: number): string {
  return kind === 'json' ? deepBody('json', Math.floor(bytes / 2)) : deepBody('xml', Math.floor((bytes - 21) / 7));
}

/** The body sizes to try for "near the route's limit", largest first: the first not refused as too large is it. */
export const nearLimitSizes = (kind: 'json' | 'xml'): number[] =>
  (kind === 'json' ? JSON_LIMITS : XML_LIMITS).map((limit) => limit - MARGIN);

/** Asserts the 400 problem+json of a body nested too deep, naming the limit (import: its own, 10). */
export function assertTooDeep(
  route: BodyRoute,
  res: { statusCode: number; headers: Record<string, unknown>; body: string; json(): unknown },
): void {
  assert.equal(res.statusCode, 400, `${route.name}: ${res.body.slice(0, 300)}`);
  const problem = problemOf(res as Parameters<typeof problemOf>[0]);
  const expected =
    route.kind === 'xml'
      ? { code: 'invalid_xml', detail: /elements nested deeper than 64$/ }
      : route.name === 'POST /api/import'
        ? { code: 'invalid_import', detail: /must not be nested more than 10 levels deep$/ }
        : { code: 'body_too_deep', detail: /^Invalid request body: nested deeper than 64 levels$/ };
  assert.equal(problem.code, expected.code, `${route.name}: ${problem.detail}`);
  assert.match(problem.detail, expected.detail, route.name);
}

export const injectBody = (app: FastifyInstance, route: BodyRoute, payload: string) =>
  app.inject({ method: route.method as 'POST', url: route.url, headers: route.headers, payload });

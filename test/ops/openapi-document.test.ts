import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { EVENT_KINDS } from '../../src/audit/audit.service.js';
import { VELLUM_LOGO_SVG } from '../../src/ops/logo.js';
import { buildOpenApiDocument } from '../../src/openapi-dump.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';

type Schema = Record<string, unknown>;
type Parameter = { name: string; in: string; required?: boolean; schema: Schema };
type Response = {
  description: string;
  headers?: Record<string, unknown>;
  links?: Record<string, { operationId: string }>;
};
type Operation = {
  operationId?: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, Response>;
};
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  tags: Array<{ name: string; description?: string }>;
  servers?: unknown[];
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

function operations(doc: Doc): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.has(m))
      .map(([m, op]) => [`${m.toUpperCase()} ${p}`, op] as [string, Operation]),
  );
}

const param = (op: Operation, name: string) => op.parameters?.find((p) => p.name === name);

describe('the OpenAPI document', () => {
  let doc: Doc;
  before(async () => {
    doc = (await buildOpenApiDocument()) as Doc;
  });

  test('limit and offset are documented as the integers the server accepts', () => {
    for (const [route, noDefault] of [
      ['/api/notes', true],
      ['/api/notes/{noteID}/versions', false],
      ['/api/auth/admin/all', false],
      ['/api/auth/admin/events', false],
    ] as const) {
      const op = doc.paths[route]!.get!;
      const limit = { type: 'integer', minimum: 1, maximum: 100, ...(noDefault ? {} : { default: 50 }) };
      assert.deepEqual(
        { ...param(op, 'limit')!.schema, description: undefined },
        { ...limit, description: undefined },
        route,
      );
      assert.deepEqual(
        { ...param(op, 'offset')!.schema, description: undefined },
        { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: undefined },
        route,
      );
    }
  });

  test('the audit filter documents every kind and a UUID user id', () => {
    const op = doc.paths['/api/auth/admin/events']!.get!;
    assert.deepEqual(param(op, 'kind')!.schema.enum, [...EVENT_KINDS]);
    assert.equal(EVENT_KINDS.length, 27);
    const pattern = new RegExp(String(param(op, 'user_id')!.schema.pattern));
    assert.ok(pattern.test('3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60'));
    assert.ok(!pattern.test('not-a-uuid'));
  });

  test('signup states its username and password rules; login does not', () => {
    const signup = doc.paths['/api/auth/signup']!.post!.requestBody!.content['application/json']!.schema as {
      properties: Record<string, Schema>;
    };
    const { username, password } = signup.properties;
    assert.equal(username!.minLength, 3);
    assert.equal(username!.maxLength, 32);
    const rule = new RegExp(String(username!.pattern));
    for (const ok of ['abc', 'Alice', 'a.b-c_d', 'x'.repeat(32)]) assert.ok(rule.test(ok), ok);
    for (const bad of ['ab', '.abc', 'abc-', 'a b c', 'x'.repeat(33)]) assert.ok(!rule.test(bad), bad);
    // The pattern is the rule applied to the name as sent: exactly the characters that lower-case into it.
    const sent = new RegExp(String(username!.pattern), 'u');
    const stored = /^[a-z0-9][a-z0-9._-]{1,30}[a-z0-9]$/;
    for (let code = 0; code <= 0x10ffff; code++) {
      const c = String.fromCodePoint(code);
      for (const name of [`${c}bc`, `a${c}c`])
        assert.equal(sent.test(name), stored.test(name.toLowerCase()), `U+${code.toString(16)}`);
    }
    assert.equal(password!.minLength, 15);
    assert.equal(password!.maxLength, 256);
    assert.match(String(password!.description), /breach/);
    assert.match(String(password!.description), /entropy/);
    const login = doc.paths['/api/auth/login']!.post!.requestBody!.content['application/json']!.schema as {
      properties: Record<string, Schema>;
    };
    assert.equal(
      login.properties.password!.minLength,
      undefined,
      'a short password at login is a 401, not a schema error',
    );
  });

  test('the signup minimum follows PASSWORD_MIN_LENGTH', async () => {
    const other = (await buildOpenApiDocument({ PASSWORD_MIN_LENGTH: '20' })) as Doc;
    const schema = other.paths['/api/auth/signup']!.post!.requestBody!.content['application/json']!.schema as {
      properties: Record<string, Schema>;
    };
    assert.equal(schema.properties.password!.minLength, 20);
  });

  test('If-Match is documented as entity tags', () => {
    const pattern = new RegExp(
      String(param(doc.paths['/api/notes/{noteID}/versions']!.post!, 'if-match')!.schema.pattern),
    );
    for (const ok of ['"3"', '*', 'W/"3"', '"1", "2"', ' "7" ', '\t"3"', '"\xe9"']) assert.ok(pattern.test(ok), ok);
    // RFC 9110's characters only: nothing a header cannot carry (line breaks, control characters, more than a byte).
    for (const bad of ['3', '"3', 'abc', '"1" "2"', '"\x01"', '\n"3"', '\v"3"', '"\u0100"', '"\x7f"'])
      assert.ok(!pattern.test(bad), JSON.stringify(bad));
  });

  test('the tag filter states its length, and its pattern needs no property escape inside [...]', () => {
    for (const route of ['/api/notes', '/api/notes/search']) {
      const schema = param(doc.paths[route]!.get!, 'tag')!.schema;
      assert.equal(schema.minLength, 1, route);
      assert.equal(schema.maxLength, 65, route);
      const pattern = new RegExp(String(schema.pattern), 'u');
      for (const ok of ['a', '#Work', 'projekt/übersicht', 'x'.repeat(64), `#${'é'.repeat(64)}`])
        assert.ok(pattern.test(ok), ok);
      for (const bad of ['', '#', 'a b', 'x'.repeat(65), 'a#b']) assert.ok(!pattern.test(bad), bad);
      assert.doesNotMatch(String(schema.pattern), /\[[^\]]*\\[pP]\{/);
    }
  });

  test("POST /api/notes: the body is optional and a deleted account's 404 is declared", () => {
    const op = doc.paths['/api/notes']!.post!;
    assert.equal(op.requestBody!.required, false);
    assert.ok(op.responses['404']);
    assert.equal(doc.paths['/api/notes/{noteID}/versions']!.post!.requestBody!.required, true);
  });

  test('every operation has a unique operationId and a summary; tags are described; servers are given', () => {
    const ids = operations(doc).map(([key, op]) => {
      assert.ok(op.operationId, `${key} has no operationId`);
      assert.ok(op.summary, `${key} has no summary`);
      return op.operationId;
    });
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    assert.ok(doc.tags.length >= 3);
    for (const tag of doc.tags) assert.ok(tag.description, `tag ${tag.name}`);
    assert.ok(Array.isArray(doc.servers) && doc.servers.length > 0);
  });

  test('one documented form per path', () => {
    assert.ok(doc.paths['/api/auth/owner']);
    for (const p of Object.keys(doc.paths)) assert.ok(!p.endsWith('/'), `${p} ends with a slash`);
  });

  test("response headers: X-Request-Id everywhere, WWW-Authenticate on 401, Retry-After on 429 and 503, and each route's own", () => {
    for (const [key, op] of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        assert.ok(response.headers?.['X-Request-Id'], `${key} ${status}: X-Request-Id`);
        if (status === '401') assert.ok(response.headers?.['WWW-Authenticate'], `${key} 401`);
        if (status === '429' || status === '503') assert.ok(response.headers?.['Retry-After'], `${key} ${status}`);
      }
    }
    const headersOf = (p: string, m: string, s: string) => Object.keys(doc.paths[p]![m]!.responses[s]!.headers ?? {});
    assert.ok(headersOf('/api/notes', 'post', '201').includes('Location'));
    assert.ok(headersOf('/api/notes', 'post', '201').includes('ETag'));
    assert.ok(headersOf('/api/notes/{noteID}', 'get', '200').includes('ETag'));
    assert.ok(headersOf('/api/notes/{noteID}/versions', 'post', '204').includes('ETag'));
    assert.ok(headersOf('/api/notes/{noteID}/versions', 'post', '412').includes('ETag'));
    assert.ok(headersOf('/api/auth/login', 'post', '200').includes('Set-Cookie'));
    assert.ok(headersOf('/api/auth/cookie/refresh', 'post', '200').includes('Set-Cookie'));
    assert.ok(headersOf('/api/auth/owner', 'put', '200').includes('Set-Cookie'));
    assert.ok(headersOf('/api/auth/owner', 'delete', '204').includes('Set-Cookie'));
    assert.ok(headersOf('/api/auth/logout', 'post', '204').includes('Set-Cookie'));
    assert.ok(headersOf('/api/auth/cookie/csrf', 'get', '204').includes('X-CSRF-Token'));
    assert.ok(
      param(doc.paths['/api/auth/cookie/refresh']!.post!, 'x-csrf-token'),
      'the refresh route documents X-CSRF-Token',
    );
  });

  test('a created note links to reading it, its history and a new version, by operations that exist', () => {
    const links = doc.paths['/api/notes']!.post!.responses['201']!.links!;
    const ids = new Set(operations(doc).map(([, op]) => op.operationId));
    assert.deepEqual(Object.keys(links).sort(), ['addVersion', 'getNote', 'listVersions']);
    for (const link of Object.values(links)) assert.ok(ids.has(link.operationId), link.operationId);
  });

  test("Redocly's recommended rules find no error", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(doc));
      const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
      const run = spawnSync(process.execPath, [cli, 'lint', file, '--extends=recommended', '--format=stylish'], {
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        timeout: 120_000,
      });
      assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout + run.stderr, /valid/i);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

forEachDatabase('methods a path does not have', (ctx) => {
  test('405 with Allow listing the methods the path has; unknown paths stay 404', async () => {
    const s = await newSession(ctx.app, 'allow');
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/api/auth/me', 'GET, HEAD'],
      ['PATCH', '/api/notes', 'GET, HEAD, POST'],
      ['PUT', '/api/notes/', 'GET, HEAD, POST'],
      ['POST', '/api/notes/3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60', 'DELETE, GET, HEAD, PATCH'],
      ['GET', '/api/auth/login', 'POST'],
      // A static segment wins over a parameter, as the router prefers it: `all` is the list route's
      // path, not also an `{id}` of GET /api/auth/admin/{id}; `search` is not a `{noteID}`.
      ['OPTIONS', '/api/auth/admin/all', 'GET, HEAD'],
      ['POST', '/api/auth/admin/all', 'GET, HEAD'],
      ['POST', '/api/auth/admin/3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60', 'DELETE, GET, HEAD, PATCH'],
      ['OPTIONS', '/api/notes/search', 'GET, HEAD'],
      ['OPTIONS', '/api/notes/3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60/versions', 'GET, HEAD, POST'],
      [
        'OPTIONS',
        '/api/notes/3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60/3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60',
        'GET, HEAD, PATCH',
      ],
    ];
    for (const [method, url, allow] of cases) {
      const res = await ctx.app.inject({ method: method as 'GET', url, headers: s.auth });
      assert.equal(res.statusCode, 405, `${method} ${url}`);
      assert.equal(res.headers.allow, allow, `${method} ${url}`);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(res.json(), {
        type: 'about:blank',
        title: 'Method Not Allowed',
        status: 405,
        detail: `Method ${method} is not allowed here; use ${allow}`,
        code: 'method_not_allowed',
      });
    }
    const unknown = await ctx.app.inject({ method: 'GET', url: '/api/nothing-here', headers: s.auth });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.headers.allow, undefined);
  });

  test("GET /api/docs carries Vellum's name and logo", async () => {
    const page = await ctx.app.inject({ method: 'GET', url: '/api/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>Vellum API<\/title>/);
    // Swagger UI swaps its top-bar logo for ours, carried as a data: URL in its initializer script.
    const script = await ctx.app.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    assert.equal(script.statusCode, 200);
    assert.ok(
      script.body.includes(`data:image/svg+xml;base64,${Buffer.from(VELLUM_LOGO_SVG).toString('base64')}`),
      "our logo replaces the framework's",
    );
  });
});

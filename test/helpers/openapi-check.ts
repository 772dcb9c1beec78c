import assert from 'node:assert/strict';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Schema } from './schema-arbitrary.js';

// Both packages are CommonJS with `exports.default`; under NodeNext the default import is module.exports.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

export type Parameter = {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
};
export type Response = {
  description?: string;
  content?: Record<string, { schema?: Schema }>;
  headers?: Record<string, { schema?: Schema }>;
};
export type Operation = {
  operationId?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses?: Record<string, Response>;
  security?: Array<Record<string, string[]>>;
};
export type OpenApiDoc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas?: Record<string, Schema> };
};

export const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export async function openApiDoc(app: FastifyInstance): Promise<OpenApiDoc> {
  const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return res.json() as OpenApiDoc;
}

/** `/api/notes/` and `/api/notes` are one route here; compare without a trailing slash. */
export const noSlash = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path);

/** Every documented operation, as `GET /api/notes/{noteID}`. */
export function docOperations(doc: OpenApiDoc): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.includes(method)) ops.set(`${method.toUpperCase()} ${noSlash(path)}`, op);
    }
  }
  return ops;
}

/** A JSON pointer fragment from its segments. */
export const pointer = (...segments: string[]) =>
  `#/${segments.map((s) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;

/** The document path a request path routes to: a literal segment wins over a {parameter}, as in the router. */
export function documentPathFor(doc: OpenApiDoc, url: string): string | undefined {
  const segments = noSlash(url.split('?')[0]!).split('/');
  const candidates = Object.keys(doc.paths).filter((path) => {
    const parts = noSlash(path).split('/');
    return (
      parts.length === segments.length &&
      parts.every((part, i) => (/^\{[^}]+\}$/.test(part) ? segments[i] !== '' : part === segments[i]))
    );
  });
  // Compare segment by segment: at the first place two candidates differ, the literal one wins.
  const literalRank = (path: string) =>
    noSlash(path)
      .split('/')
      .map((part) => (part.startsWith('{') ? '1' : '0'))
      .join('');
  return candidates.sort((a, b) => literalRank(a).localeCompare(literalRank(b)))[0];
}

/** Headers a response may only carry where the document lists them for that answer. */
const API_HEADERS = [
  'ETag',
  'Location',
  'Set-Cookie',
  'X-CSRF-Token',
  'Retry-After',
  'WWW-Authenticate',
  'Cache-Control',
];

/**
 * Checks answers against the document: the document itself is registered with Ajv (2020-12, the
 * dialect of OpenAPI 3.1), so `#/components/schemas/...` references resolve inside it, and each
 * schema is looked up by its JSON pointer.
 */
export class Conformance {
  readonly ajv;
  private readonly id = 'https://vellum.test/openapi.json';
  readonly seen: Array<{ operation: string; status: number }> = [];

  constructor(readonly doc: OpenApiDoc) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: this.id });
  }

  /** The compiled schema at a pointer into the document. */
  validator(ptr: string) {
    const validate = this.ajv.getSchema(`${this.id}${ptr}`);
    assert.ok(validate !== undefined, `no schema at ${ptr}`);
    return validate;
  }

  /** Ajv's complaint about `value` against the schema at `ptr`, or undefined when it is valid. */
  problemWith(ptr: string, value: unknown): string | undefined {
    const validate = this.validator(ptr);
    return validate(value) ? undefined : this.ajv.errorsText(validate.errors);
  }

  resolve(ref: string): Schema {
    const schema = this.ajv.getSchema(ref.startsWith('#') ? `${this.id}${ref}` : ref)?.schema;
    assert.ok(typeof schema === 'object' && schema !== null, `unresolved $ref ${ref}`);
    return schema as Schema;
  }

  check(method: string, url: string, res: LightMyRequestResponse): void {
    const path = documentPathFor(this.doc, url);
    assert.ok(path !== undefined, `${method} ${url}: no path of the document matches`);
    const op = this.doc.paths[path]![method.toLowerCase()];
    assert.ok(op !== undefined, `${method} ${path} is not in the document`);
    const status = res.statusCode;
    const declared = op.responses?.[String(status)];
    this.seen.push({ operation: `${method} ${noSlash(path)}`, status });
    assert.ok(
      declared !== undefined,
      `${method} ${path} answered ${status}, which the document does not declare: ${res.body.slice(0, 300)}`,
    );
    const documented = new Map(
      Object.entries(declared.headers ?? {}).map(([name, header]) => [name.toLowerCase(), { name, header }]),
    );
    // Every header the document promises for this answer is really sent, in the documented form.
    for (const [lower, { name, header }] of documented) {
      const value = res.headers[lower];
      assert.ok(value !== undefined, `${method} ${path} ${status}: the document promises a ${name} header`);
      const schema = header.schema;
      if (schema === undefined) continue;
      const ptr = pointer('paths', path, method.toLowerCase(), 'responses', String(status), 'headers', name, 'schema');
      for (const one of [value].flat()) {
        const typed = schema.type === 'integer' && /^\d+$/.test(String(one)) ? Number(one) : String(one);
        const problem = this.problemWith(ptr, typed);
        assert.ok(
          problem === undefined,
          `${method} ${path} ${status}: header ${name}: ${JSON.stringify(one)} ${problem}`,
        );
      }
    }
    // And the headers that mean something to a client are not sent where the document is silent.
    for (const name of API_HEADERS) {
      if (res.headers[name.toLowerCase()] !== undefined && !documented.has(name.toLowerCase())) {
        assert.fail(
          `${method} ${path} ${status}: sends ${name}: ${String(res.headers[name.toLowerCase()])}, which the document does not list for this answer`,
        );
      }
    }
    if (declared.content === undefined) {
      assert.equal(res.body, '', `${method} ${path} ${status} declares no content`);
      return;
    }
    const mediaType = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const entry = declared.content[mediaType];
    assert.ok(
      entry?.schema !== undefined,
      `${method} ${path} ${status} answered ${mediaType}; declared: ${Object.keys(declared.content).join(', ')}`,
    );
    if (!/json$/.test(mediaType)) return;
    const body: unknown = JSON.parse(res.body);
    const problem = this.problemWith(
      pointer('paths', path, method.toLowerCase(), 'responses', String(status), 'content', mediaType, 'schema'),
      body,
    );
    assert.ok(
      problem === undefined,
      `${method} ${path} ${status}: body does not match the document: ${problem}\n${res.body.slice(0, 500)}`,
    );
  }
}

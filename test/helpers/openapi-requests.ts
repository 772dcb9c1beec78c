import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { documentPathFor, pointer, type Conformance, type Operation, type Parameter } from './openapi-check.js';
import { invalidValue, typesAllowed, validValue, type Schema, type SchemaContext } from './schema-arbitrary.js';

/**
 * Requests generated from one operation of the OpenAPI document: proposals that follow it and
 * proposals that break one of its rules, turned into concrete requests once the test has put real
 * ids in, and classified with Ajv against the document (the verdict never trusts the generator).
 */

/** A path parameter: one of the test's real ids (filled in later), or a generated value. */
export type PathValue = { real: true } | { value: string };

export interface Proposal {
  path: Record<string, PathValue>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body: { contentType: string; value: unknown } | undefined;
  /** Send the caller's credentials (bearer token, refresh cookie). */
  credentials: boolean;
  /** Let the test put real values where the operation needs them to succeed (a password, a version). */
  real: boolean;
  /** A free number for the test's choices among real values. */
  pick: number;
  /** What an invalid proposal broke, for the report. */
  broken?: string;
}

export interface ApiRequest {
  method: string;
  /** The document path, e.g. `/api/notes/{noteID}`. */
  path: string;
  pathParams: Record<string, string>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body: { contentType: string; value: unknown } | undefined;
  credentials: boolean;
}

export const UNKNOWN_QUERY_PARAMETER = 'unknown_parameter';

/** How a value travels in a URL or header: strings as they are, arrays as repeated parameters. */
function toWire(value: unknown): string[] {
  if (Array.isArray(value)) return value.length === 0 ? [''] : value.flatMap(toWire);
  if (typeof value === 'string') return [value];
  if (value !== null && typeof value === 'object') return [JSON.stringify(value)];
  return [String(value)];
}

/**
 * What a header can carry (RFC 9110 field values: visible ASCII, space and tab; no line breaks),
 * with the surrounding whitespace that HTTP itself strips removed.
 */
export const headerSafe = (value: string) => value.replace(/\s/gu, ' ').replace(/[^\x20-\x7e]/gu, '?').trim();

export class OperationRequests {
  private readonly json: SchemaContext;
  private readonly wire: SchemaContext;
  readonly params: Parameter[];

  constructor(
    private readonly check: Conformance,
    readonly method: string,
    readonly path: string,
    readonly op: Operation,
  ) {
    this.json = { resolve: (ref) => check.resolve(ref), strings: 'json' };
    this.wire = { resolve: (ref) => check.resolve(ref), strings: 'wire' };
    this.params = op.parameters ?? [];
  }

  get secured(): boolean {
    return (this.op.security ?? []).length > 0;
  }

  private paramValue(param: Parameter): fc.Arbitrary<string[]> {
    const values = validValue(param.schema, this.wire).map(toWire);
    return param.in === 'header' ? values.map((list) => list.map(headerSafe)) : values;
  }

  /** Proposals the document accepts (before real ids are put in). */
  valid(): fc.Arbitrary<Proposal> {
    const path: Record<string, fc.Arbitrary<PathValue>> = {};
    const query: Array<fc.Arbitrary<Array<[string, string]>>> = [];
    const headers: Array<fc.Arbitrary<Array<[string, string]>>> = [];
    for (const param of this.params) {
      if (param.in === 'path') {
        path[param.name] = fc.oneof(
          { weight: 4, arbitrary: fc.constant({ real: true } as const) },
          { weight: 1, arbitrary: this.paramValue(param).map((v) => ({ value: v[0]! })) },
        );
        continue;
      }
      const pairs = this.paramValue(param).map((values) => values.map((v) => [param.name, v] as [string, string]));
      const maybe = param.required === true ? pairs : fc.option(pairs, { nil: [] as Array<[string, string]> });
      if (param.in === 'query') query.push(maybe);
      if (param.in === 'header') headers.push(maybe);
    }
    const body = this.op.requestBody;
    const media = body === undefined ? undefined : Object.keys(body.content)[0]!;
    const bodyArb: fc.Arbitrary<Proposal['body']> = body === undefined
      ? fc.constant(undefined)
      : (() => {
        const value = validValue(body.content[media!]!.schema, this.json).map((v) => ({ contentType: media!, value: v }));
        return body.required === true ? value : fc.option(value, { nil: undefined, freq: 4 });
      })();
    return fc.record({
      path: fc.record(path),
      query: fc.tuple(...query).map((lists) => lists.flat()),
      headers: fc.tuple(...headers).map((lists) => Object.fromEntries(lists.flat())),
      body: bodyArb,
      credentials: fc.constant(true),
      real: fc.boolean(),
      pick: fc.nat({ max: 1000 }),
    });
  }

  /** Proposals that break one rule the document states for this operation. */
  invalid(): fc.Arbitrary<Proposal> {
    const mutations: Array<fc.Arbitrary<(p: Proposal) => Proposal>> = [];
    const set = (broken: string, change: (p: Proposal) => Partial<Proposal>) => (p: Proposal): Proposal => ({ ...p, ...change(p), real: false, broken });
    mutations.push(fc.constant(set(`unknown query parameter ${UNKNOWN_QUERY_PARAMETER}`,
      (p) => ({ query: [...p.query, [UNKNOWN_QUERY_PARAMETER, '1']] }))));
    if (this.secured) mutations.push(fc.constant(set('no credentials', () => ({ credentials: false }))));
    for (const param of this.params) {
      const bad = invalidValue(param.schema, this.wire)?.map(toWire);
      const where = `${param.in} parameter ${param.name}`;
      if (param.in === 'path' && bad !== undefined) {
        mutations.push(bad.map((values) => set(`${where} = ${JSON.stringify(values[0])}`, (p) => ({ path: { ...p.path, [param.name]: { value: values[0]! } } }))));
      }
      if (param.in === 'query') {
        if (bad !== undefined) {
          mutations.push(bad.map((values) => set(`${where} = ${JSON.stringify(values)}`,
            (p) => ({ query: [...p.query.filter(([k]) => k !== param.name), ...values.map((v) => [param.name, v] as [string, string])] }))));
        }
        mutations.push(this.paramValue(param).map((values) => set(`${where} repeated`,
          (p) => ({ query: [...p.query.filter(([k]) => k !== param.name), ...[...values, ...values].map((v) => [param.name, v] as [string, string])] }))));
        if (param.required === true) mutations.push(fc.constant(set(`${where} missing`, (p) => ({ query: p.query.filter(([k]) => k !== param.name) }))));
      }
      if (param.in === 'header') {
        if (bad !== undefined) {
          mutations.push(bad.map((values) => headerSafe(values.join(','))).map((value) =>
            set(`${where} = ${JSON.stringify(value)}`, (p) => ({ headers: { ...p.headers, [param.name]: value } }))));
        }
        if (param.required === true) {
          mutations.push(fc.constant(set(`${where} missing`, (p) => {
            const { [param.name]: _gone, ...rest } = p.headers;
            return { headers: rest };
          })));
        }
      }
    }
    const body = this.op.requestBody;
    if (body !== undefined) {
      const media = Object.keys(body.content)[0]!;
      const bad = invalidValue(body.content[media]!.schema, this.json);
      if (bad !== undefined) {
        mutations.push(bad.map((value) => set(`body ${JSON.stringify(value).slice(0, 120)}`, () => ({ body: { contentType: media, value } }))));
      }
      if (body.required === true) mutations.push(fc.constant(set('body missing', () => ({ body: undefined }))));
      mutations.push(fc.constant(set('body as text/plain', (p) => ({ body: { contentType: 'text/plain', value: 'plain text' } }))));
    }
    return fc.tuple(this.valid(), fc.oneof(...mutations)).map(([proposal, mutate]) => mutate(proposal));
  }

  /** What the request breaks of the document (empty when it follows it). */
  violations(request: ApiRequest): string[] {
    const found: string[] = [];
    const method = this.method.toLowerCase();
    this.params.forEach((param, i) => {
      const ptr = pointer('paths', this.path, method, 'parameters', String(i), 'schema');
      const values = param.in === 'path' ? [request.pathParams[param.name]!]
        : param.in === 'query' ? request.query.filter(([k]) => k === param.name).map(([, v]) => v)
          : param.in === 'header' && request.headers[param.name] !== undefined ? [request.headers[param.name]!] : [];
      if (values.length === 0) {
        if (param.required === true) found.push(`${param.in} parameter ${param.name} missing`);
        return;
      }
      const problem = this.check.problemWith(ptr, this.fromWire(values, param.schema));
      if (problem !== undefined) found.push(`${param.in} parameter ${param.name}: ${problem}`);
    });
    const known = new Set(this.params.filter((p) => p.in === 'query').map((p) => p.name));
    for (const [name] of request.query) if (!known.has(name)) found.push(`unknown query parameter ${name}`);
    const body = this.op.requestBody;
    if (body !== undefined) {
      if (request.body === undefined) {
        if (body.required === true) found.push('body missing');
      } else if (body.content[request.body.contentType] === undefined) {
        found.push(`content type ${request.body.contentType}`);
      } else {
        const ptr = pointer('paths', this.path, method, 'requestBody', 'content', request.body.contentType, 'schema');
        const problem = this.check.problemWith(ptr, request.body.value);
        if (problem !== undefined) found.push(`body: ${problem}`);
      }
    }
    if (this.secured && !request.credentials) found.push('no credentials');
    return found;
  }

  /**
   * A parameter as its schema reads it: the document's integers, numbers and booleans in their
   * plain decimal or `true`/`false` form; anything else stays a string (and fails a numeric type).
   * A parameter given twice is an array.
   */
  private fromWire(values: string[], schema: Schema): unknown {
    if (values.length > 1) return values;
    const raw = values[0]!;
    const types = typesAllowed(schema, this.wire) ?? ['string'];
    if (types.includes('integer') && /^-?(0|[1-9][0-9]*)$/.test(raw)) return Number(raw);
    if (types.includes('number') && /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(raw)) return Number(raw);
    if (types.includes('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
    return raw;
  }

  /** The URL of a request; undefined when a generated path segment would route elsewhere (e.g. `search`). */
  url(request: ApiRequest): string | undefined {
    const path = this.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(request.pathParams[name] ?? ''));
    if (documentPathFor(this.check.doc, path) !== this.path) return undefined;
    const query = request.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return query === '' ? path : `${path}?${query}`;
  }

  inject(request: ApiRequest, url: string, credentials: { headers?: Record<string, string>; cookies?: Record<string, string> }): InjectOptions {
    const options: InjectOptions = { method: this.method as 'GET', url, headers: { ...request.headers } };
    if (request.credentials) {
      Object.assign(options.headers!, credentials.headers ?? {});
      if (credentials.cookies !== undefined) options.cookies = credentials.cookies;
    }
    if (request.body !== undefined) {
      options.headers!['content-type'] = request.body.contentType;
      if (request.body.contentType === 'multipart/form-data') {
        const form = formData(request.body.value);
        options.headers!['content-type'] = form.contentType;
        options.payload = form.payload;
      } else {
        options.payload = request.body.contentType === 'application/json' ? JSON.stringify(request.body.value) : String(request.body.value);
      }
    }
    return options;
  }
}

/**
 * A generated multipart/form-data body as a browser sends it: a string property named `file` as a
 * file part, every other property (and a `file` of another type) as a field holding its JSON.
 */
function formData(value: unknown): { contentType: string; payload: string } {
  const boundary = 'conformance-boundary-7d3f';
  const parts = typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.entries(value as Record<string, unknown>).map(([name, v]) => (name === 'file' && typeof v === 'string'
      ? `Content-Disposition: form-data; name="file"; filename="generated.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${v}`
      : `Content-Disposition: form-data; name="${name.replace(/["\r\n]/g, '_')}"\r\n\r\n${JSON.stringify(v)}`))
    : [];
  const payload = `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--\r\n`;
  return { contentType: `multipart/form-data; boundary=${boundary}`, payload };
}

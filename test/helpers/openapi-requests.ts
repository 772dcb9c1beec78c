import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { documentPathFor, pointer, type Conformance, type Operation, type Parameter } from './openapi-check.js';
import { deref, invalidValue, typesAllowed, validValue, type Schema, type SchemaContext } from './schema-arbitrary.js';

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
export const headerSafe = (value: string) =>
  value
    .replace(/\s/gu, ' ')
    .replace(/[^\x20-\x7e]/gu, '?')
    .trim();

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
    const bodyArb: fc.Arbitrary<Proposal['body']> =
      body === undefined
        ? fc.constant(undefined)
        : (() => {
            const value = validValue(body.content[media!]!.schema, this.json).map((v) => ({
              contentType: media!,
              value: v,
            }));
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
    const set =
      (broken: string, change: (p: Proposal) => Partial<Proposal>) =>
      (p: Proposal): Proposal => ({ ...p, ...change(p), real: false, broken });
    mutations.push(
      fc.constant(
        set(`unknown query parameter ${UNKNOWN_QUERY_PARAMETER}`, (p) => ({
          query: [...p.query, [UNKNOWN_QUERY_PARAMETER, '1']],
        })),
      ),
    );
    if (this.secured) mutations.push(fc.constant(set('no credentials', () => ({ credentials: false }))));
    for (const param of this.params) {
      const bad = invalidValue(param.schema, this.wire)?.map(toWire);
      const where = `${param.in} parameter ${param.name}`;
      if (param.in === 'path' && bad !== undefined) {
        mutations.push(
          bad.map((values) =>
            set(`${where} = ${JSON.stringify(values[0])}`, (p) => ({
              path: { ...p.path, [param.name]: { value: values[0]! } },
            })),
          ),
        );
      }
      if (param.in === 'query') {
        if (bad !== undefined) {
          mutations.push(
            bad.map((values) =>
              set(`${where} = ${JSON.stringify(values)}`, (p) => ({
                query: [
                  ...p.query.filter(([k]) => k !== param.name),
                  ...values.map((v) => [param.name, v] as [string, string]),
                ],
              })),
            ),
          );
        }
        mutations.push(
          this.paramValue(param).map((values) =>
            set(`${where} repeated`, (p) => ({
              query: [
                ...p.query.filter(([k]) => k !== param.name),
                ...[...values, ...values].map((v) => [param.name, v] as [string, string]),
              ],
            })),
          ),
        );
        if (param.required === true)
          mutations.push(
            fc.constant(set(`${where} missing`, (p) => ({ query: p.query.filter(([k]) => k !== param.name) }))),
          );
      }
      if (param.in === 'header') {
        if (bad !== undefined) {
          mutations.push(
            bad
              .map((values) => headerSafe(values.join(',')))
              .map((value) =>
                set(`${where} = ${JSON.stringify(value)}`, (p) => ({ headers: { ...p.headers, [param.name]: value } })),
              ),
          );
        }
        if (param.required === true) {
          mutations.push(
            fc.constant(
              set(`${where} missing`, (p) => {
                const { [param.name]: _gone, ...rest } = p.headers;
                return { headers: rest };
              }),
            ),
          );
        }
      }
    }
    const body = this.op.requestBody;
    if (body !== undefined) {
      const media = Object.keys(body.content)[0]!;
      const bad = invalidValue(body.content[media]!.schema, this.json);
      if (bad !== undefined) {
        mutations.push(
          bad.map((value) =>
            set(`body ${JSON.stringify(value).slice(0, 120)}`, () => ({ body: { contentType: media, value } })),
          ),
        );
      }
      if (body.required === true) mutations.push(fc.constant(set('body missing', () => ({ body: undefined }))));
      mutations.push(
        fc.constant(set('body as text/plain', (p) => ({ body: { contentType: 'text/plain', value: 'plain text' } }))),
      );
    }
    return fc.tuple(this.valid(), fc.oneof(...mutations)).map(([proposal, mutate]) => mutate(proposal));
  }

  /**
   * A proposal whose JSON body has every declared string at its maxLength (and every optional
   * property present): the document says a body like it is acceptable, so the route's body limit
   * must hold it. Sent as built (real: false), so that the test does not swap in a real body.
   * Undefined when the body has no such strings or a value cannot be built.
   */
  largest(): Proposal | undefined {
    const body = this.op.requestBody;
    if (body?.content['application/json'] === undefined) return undefined;
    const value = largestValue(body.content['application/json'].schema, this.json, 0);
    if (value === undefined || !JSON.stringify(value).includes(FILL)) return undefined;
    return {
      path: Object.fromEntries(this.params.filter((p) => p.in === 'path').map((p) => [p.name, { real: true }])),
      query: [],
      headers: {},
      body: { contentType: 'application/json', value },
      credentials: true,
      real: false,
      pick: 0,
    };
  }

  /** What the request breaks of the document (empty when it follows it). */
  violations(request: ApiRequest): string[] {
    const found: string[] = [];
    const method = this.method.toLowerCase();
    this.params.forEach((param, i) => {
      const ptr = pointer('paths', this.path, method, 'parameters', String(i), 'schema');
      const values =
        param.in === 'path'
          ? [request.pathParams[param.name]!]
          : param.in === 'query'
            ? request.query.filter(([k]) => k === param.name).map(([, v]) => v)
            : param.in === 'header' && request.headers[param.name] !== undefined
              ? [request.headers[param.name]!]
              : [];
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
    const path = this.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(request.pathParams[name] ?? ''),
    );
    if (documentPathFor(this.check.doc, path) !== this.path) return undefined;
    const query = request.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return query === '' ? path : `${path}?${query}`;
  }

  inject(
    request: ApiRequest,
    url: string,
    credentials: { headers?: Record<string, string>; cookies?: Record<string, string> },
  ): InjectOptions {
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
        options.payload =
          request.body.contentType === 'application/json'
            ? JSON.stringify(request.body.value)
            : String(request.body.value);
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
  const parts =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.entries(value as Record<string, unknown>).map(([name, v]) =>
          name === 'file' && typeof v === 'string'
            ? `Content-Disposition: form-data; name="file"; filename="generated.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${v}`
            : `Content-Disposition: form-data; name="${name.replace(/["\r\n]/g, '_')}"\r\n\r\n${JSON.stringify(v)}`,
        )
      : [];
  const payload = `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--\r\n`;
  return { contentType: `multipart/form-data; boundary=${boundary}`, payload };
}

const FILL_CHARACTERS = ['A', 'a', '0', 'x'];
/** The mark of a string built at its maxLength (every fill character above is one). */
const FILL = 'AAAA';

/**
 * The largest value a schema declares: strings at maxLength (a character the pattern takes,
 * repeated), every property, arrays at their minimum (one item when none). Undefined when the
 * schema gives no way to build it here; the caller classifies the result with Ajv anyway.
 */
function largestValue(input: Schema, ctx: SchemaContext, depth: number): unknown {
  if (depth > 12) return undefined;
  const schema = deref(input, ctx);
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches !== undefined) {
    for (const branch of branches) {
      const value = largestValue({ ...schema, anyOf: undefined, oneOf: undefined, ...branch }, ctx, depth + 1);
      if (value !== undefined && value !== null) return value;
    }
    return undefined;
  }
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const types = typesAllowed(schema, ctx) ?? [];
  if (types.includes('object')) {
    const out: Record<string, unknown> = {};
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      const value = largestValue(property, ctx, depth + 1);
      if (value === undefined) return undefined;
      out[name] = value;
    }
    return out;
  }
  if (types.includes('array')) {
    const count = Math.max(1, Number(schema.minItems ?? 0));
    const item = largestValue((schema.items ?? {}) as Schema, ctx, depth + 1);
    return item === undefined ? undefined : Array.from({ length: Math.min(count, 3) }, () => item);
  }
  if (types.includes('string')) {
    if (schema.format !== undefined) return undefined;
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
    const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
    const length = max ?? Math.max(1, Number(schema.minLength ?? 1));
    const fill = FILL_CHARACTERS.map((c) => c.repeat(length)).find(
      (candidate) => pattern === undefined || pattern.test(candidate),
    );
    return fill;
  }
  if (types.includes('integer') || types.includes('number'))
    return typeof schema.minimum === 'number' ? schema.minimum : 1;
  if (types.includes('boolean')) return true;
  if (types.includes('null')) return null;
  return undefined;
}

/** Whether a regular expression puts a Unicode property escape (\p{…}, \P{…}) inside a character class. */
function propertyEscapeInClass(source: string): boolean {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      if (inClass && (source[i + 1] === 'p' || source[i + 1] === 'P') && source[i + 2] === '{') return true;
      i++;
    } else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
  }
  return false;
}

/** What a header field value cannot carry (RFC 9110 §5.5): control characters but tab, DEL, anything past one byte. */
const NOT_IN_A_HEADER = ['\0', '\x01', '\n', '\r', '\v', '\f', '\x1f', '\x7f', '\u0100', '\u2028'];

/**
 * Where a parameter's pattern reads differently in the tools that read the document than in the
 * server: a property escape inside `[…]` (fuzzers that translate `\p{…}` for Python's `re` drop
 * the rule: "accepts any string"), and a header pattern that admits what no header can carry
 * (then a value the document allows never reaches the server as written).
 */
export function parameterPatternProblems(param: Parameter): string[] {
  const pattern = param.schema?.pattern;
  if (typeof pattern !== 'string') return [];
  const found: string[] = [];
  const where = `${param.in} parameter ${param.name}`;
  if (propertyEscapeInClass(pattern))
    found.push(`${where}: its pattern puts a Unicode property escape inside [...]: ${pattern}`);
  if (param.in === 'header') {
    const re = new RegExp(pattern, 'u');
    // The parameter's own example (where the document puts it) and its schema's.
    const examples = [(param as { example?: unknown }).example, ...((param.schema.examples ?? []) as unknown[])].filter(
      (e): e is string => typeof e === 'string',
    );
    for (const example of examples) {
      for (let at = 0; at <= example.length; at++) {
        const bad = NOT_IN_A_HEADER.find((c) => re.test(example.slice(0, at) + c + example.slice(at)));
        if (bad !== undefined) {
          found.push(
            `${where}: its pattern takes ${JSON.stringify(example.slice(0, at) + bad + example.slice(at))}, which no header can carry`,
          );
          break;
        }
      }
    }
  }
  return found;
}

import fc from 'fast-check';

/**
 * fast-check arbitraries from JSON Schema (the 2020-12 subset the OpenAPI document uses): values
 * that satisfy a schema, and values that break one of its rules. Written here because the npm
 * packages for this are archived or cover less (json-schema-fast-check: no oneOf, no formats;
 * openapi-fuzzer-core: Swagger 2, unmaintained). Generation only proposes: the caller classifies
 * every value with Ajv against the same schema, so a mistake here costs coverage, never a verdict.
 */

export type Schema = { [key: string]: unknown };

export interface SchemaContext {
  /** Looks up a `$ref` (the document's `#/components/schemas/...`). */
  resolve(ref: string): Schema;
  /** What a string may carry: headers and URLs cannot carry unpaired surrogates, JSON can. */
  strings: 'json' | 'wire';
}

/** Strings without maxLength stay short: long inputs are the budget tests' business. */
const DEFAULT_MAX_LENGTH = 24;
const MAX_ITEMS = 3;

const codePoint = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCodePoint(c));
const isSurrogate = (c: number) => c >= 0xd800 && c <= 0xdfff;

/** One code point per unit, so that fast-check's lengths are the code points Ajv counts. */
function unitOf(ctx: SchemaContext): fc.Arbitrary<string> {
  const units = [
    { weight: 6, arbitrary: codePoint(0x20, 0x7e) },
    {
      weight: 2,
      arbitrary: fc
        .integer({ min: 0, max: 0x10ffff })
        .filter((c) => !isSurrogate(c))
        .map((c) => String.fromCodePoint(c)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('\t', '\n', '\r', '\0', '\u007f', '\u0085', '\u00a0', '\u2028', '\ufeff', 'é', '😀'),
    },
  ];
  if (ctx.strings === 'json') units.push({ weight: 1, arbitrary: codePoint(0xd800, 0xdfff) });
  return fc.oneof(...units);
}

const codePoints = (s: string) => [...s].length;

export function deref(schema: Schema, ctx: SchemaContext): Schema {
  let current = schema;
  for (let i = 0; typeof current.$ref === 'string'; i++) {
    if (i > 20) throw new Error(`$ref loop at ${String(current.$ref)}`);
    current = ctx.resolve(current.$ref);
  }
  return current;
}

/** A union's branches with the keywords they share (JSON Schema applies both). */
function branchesOf(schema: Schema): Schema[] | undefined {
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches === undefined) return undefined;
  const { anyOf: _a, oneOf: _o, description: _d, ...shared } = schema;
  return branches.map((branch) => ({ ...shared, ...branch }));
}

export function typesOf(schema: Schema): string[] | undefined {
  if (Array.isArray(schema.type)) return schema.type as string[];
  return typeof schema.type === 'string' ? [schema.type] : undefined;
}

/** The types a schema allows, through `$ref`s and unions; undefined when it does not say. */
export function typesAllowed(input: Schema, ctx: SchemaContext): string[] | undefined {
  const schema = deref(input, ctx);
  const branches = branchesOf(schema);
  if (branches === undefined) return typesOf(schema);
  const all = branches.map((branch) => typesAllowed(branch, ctx));
  return all.some((types) => types === undefined) ? undefined : [...new Set(all.flat() as string[])];
}

function patternOf(schema: Schema): RegExp | undefined {
  return typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
}

const matchers = new Map<string, fc.Arbitrary<string>>();

/**
 * fc.stringMatching where it reads the pattern quickly; Unicode property classes (\p{...}) it
 * expands into every code point, seconds per use, so those are filtered strings instead.
 */
function matching(pattern: RegExp, ctx: SchemaContext, min: number, max: number): fc.Arbitrary<string> {
  const key = `${ctx.strings} ${min} ${max} ${pattern.source}`;
  let arb = matchers.get(key);
  if (arb === undefined) {
    const filtered = fc.string({ unit: unitOf(ctx), minLength: min, maxLength: max }).filter((s) => pattern.test(s));
    try {
      arb = /\\[pP]\{/.test(pattern.source) ? filtered : fc.stringMatching(pattern);
      fc.sample(arb, { numRuns: 1, seed: 0 });
    } catch {
      arb = filtered;
    }
    matchers.set(key, arb);
  }
  return arb;
}

/** RFC 3339 date-times across the whole range the format allows, with and without fractions and offsets. */
const dateTime = fc
  .tuple(
    fc.date({
      min: new Date('0000-01-01T00:00:00.000Z'),
      max: new Date('9999-12-31T23:59:59.999Z'),
      noInvalidDate: true,
    }),
    fc.constantFrom('ms', 'seconds', 'offset'),
  )
  .map(([date, form]) => {
    const iso = date.toISOString();
    if (form === 'seconds') return `${iso.slice(0, 19)}Z`;
    if (form === 'offset') return `${iso.slice(0, 23)}+00:00`;
    return iso;
  });

function validString(schema: Schema, ctx: SchemaContext): fc.Arbitrary<string> {
  if (schema.format === 'date-time') return dateTime;
  if (schema.format === 'uuid') return fc.uuid();
  const min = (schema.minLength as number | undefined) ?? 0;
  const max = (schema.maxLength as number | undefined) ?? Number.MAX_SAFE_INTEGER;
  // Generated lengths stay near the minimum; a pattern decides its own (a UUID is 36).
  const cap = Math.min(max, min + DEFAULT_MAX_LENGTH);
  const pattern = patternOf(schema);
  if (pattern === undefined) return fc.string({ unit: unitOf(ctx), minLength: min, maxLength: cap });
  return matching(pattern, ctx, min, cap).filter((s) => codePoints(s) >= min && codePoints(s) <= max);
}

function validNumber(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const exclusiveMin = schema.exclusiveMinimum as number | undefined;
  const exclusiveMax = schema.exclusiveMaximum as number | undefined;
  let min =
    (schema.minimum as number | undefined) ??
    (exclusiveMin === undefined ? undefined : exclusiveMin + (integer ? 1 : Number.EPSILON));
  let max =
    (schema.maximum as number | undefined) ??
    (exclusiveMax === undefined ? undefined : exclusiveMax - (integer ? 1 : Number.EPSILON));
  if (integer) {
    min = Math.max(min ?? -Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER);
    max = Math.min(max ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    return fc.integer({ min, max });
  }
  return fc
    .double({ min: min ?? -1e9, max: max ?? 1e9, noNaN: true, noDefaultInfinity: true })
    .map((n) => (Object.is(n, -0) ? 0 : n));
}

/**
 * Members no schema names, made once: fc.stringMatching reads its pattern at each call (14 % of the
 * conformance test's CPU when every object schema made its own).
 */
const extraMembers = fc.dictionary(
  fc.stringMatching(/^extra_[a-z0-9]{1,6}$/),
  fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null)),
  { maxKeys: 2 },
);

function validObject(schema: Schema, ctx: SchemaContext): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = ((schema.required ?? []) as string[]).filter((key) => key in properties);
  const record = fc.record(
    Object.fromEntries(Object.entries(properties).map(([key, child]) => [key, validValue(child, ctx)])),
    { requiredKeys: required },
  ) as fc.Arbitrary<Record<string, unknown>>;
  if (schema.additionalProperties === false) return record;
  // Members the schema does not name are allowed: send some, under names no schema uses.
  return fc.tuple(record, fc.option(extraMembers, { freq: 3 })).map(([value, more]) => ({ ...(more ?? {}), ...value }));
}

/** Values the schema accepts. */
export function validValue(input: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const schema = deref(input, ctx);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = branchesOf(schema);
  if (branches !== undefined) return fc.oneof(...branches.map((branch) => validValue(branch, ctx)));
  const types =
    typesOf(schema) ?? (schema.properties !== undefined ? ['object'] : ['string', 'integer', 'boolean', 'null']);
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'string':
          return validString(schema, ctx);
        case 'integer':
          return validNumber(schema, true);
        case 'number':
          return validNumber(schema, false);
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'object':
          return validObject(schema, ctx);
        case 'array':
          return fc.array(validValue((schema.items ?? {}) as Schema, ctx), {
            minLength: (schema.minItems as number | undefined) ?? 0,
            maxLength: Math.min((schema.maxItems as number | undefined) ?? MAX_ITEMS, MAX_ITEMS),
          });
        default:
          throw new Error(`no generator for type ${type}`);
      }
    }),
  );
}

/** One value of each JSON type; the wrong-type mutation picks those the schema does not allow. */
const ONE_OF_EACH_TYPE: unknown[] = ['text', 7, 2.5, true, null, [], {}];

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function allowsType(types: string[], value: unknown): boolean {
  const type = jsonType(value);
  return types.includes(type) || (type === 'integer' && types.includes('number'));
}

/**
 * Values that break one rule of the schema: wrong type, outside an enum, too short or long, pattern
 * or format broken, out of range, a required member missing, an unknown member where
 * additionalProperties is false, or one member or item broken. Undefined when nothing can break it.
 */
export function invalidValue(input: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> | undefined {
  const schema = deref(input, ctx);
  const options: Array<fc.Arbitrary<unknown>> = [];
  const branches = branchesOf(schema);
  const types = branches === undefined ? typesOf(schema) : branches.flatMap((b) => typesOf(deref(b, ctx)) ?? []);
  if (types !== undefined && types.length > 0) {
    const wrong = ONE_OF_EACH_TYPE.filter((value) => !allowsType(types, value));
    if (wrong.length > 0) options.push(fc.constantFrom(...wrong));
  }
  if (branches !== undefined) {
    for (const branch of branches) {
      const broken = invalidValue(branch, ctx);
      if (broken !== undefined) options.push(broken);
    }
  }
  if (Array.isArray(schema.enum) || 'const' in schema) {
    const allowed = (schema.enum ?? [schema.const]) as unknown[];
    options.push(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()).filter((v) => !allowed.includes(v)));
  }
  if (types?.includes('string')) options.push(...invalidStrings(schema, ctx));
  if (types?.includes('integer') || types?.includes('number'))
    options.push(...invalidNumbers(schema, types.includes('integer')));
  if (types?.includes('object') || (types === undefined && schema.properties !== undefined))
    options.push(...invalidObjects(schema, ctx));
  if (types?.includes('array')) options.push(...invalidArrays(schema, ctx));
  return options.length === 0 ? undefined : fc.oneof(...options);
}

function invalidStrings(schema: Schema, ctx: SchemaContext): Array<fc.Arbitrary<unknown>> {
  const options: Array<fc.Arbitrary<unknown>> = [];
  const unit = unitOf(ctx);
  const min = schema.minLength as number | undefined;
  const max = schema.maxLength as number | undefined;
  if (min !== undefined && min > 0) options.push(fc.string({ unit, maxLength: min - 1 }));
  if (max !== undefined) options.push(fc.string({ unit, minLength: max + 1, maxLength: max + 4 }));
  const pattern = patternOf(schema);
  if (pattern !== undefined)
    options.push(fc.string({ unit, maxLength: DEFAULT_MAX_LENGTH }).filter((s) => !pattern.test(s)));
  if (schema.format === 'date-time')
    options.push(fc.constantFrom('yesterday', '2026-01-31', '2026-13-01T00:00:00Z', '2026-01-31T12:00:00'));
  if (schema.format === 'uuid') options.push(fc.constantFrom('not-a-uuid', '3f1c2a9e8b7d4c6e9f0a1b2c3d4e5f60'));
  return options;
}

function invalidNumbers(schema: Schema, integer: boolean): Array<fc.Arbitrary<unknown>> {
  const options: Array<fc.Arbitrary<unknown>> = [];
  const min = (schema.minimum ?? schema.exclusiveMinimum) as number | undefined;
  const max = (schema.maximum ?? schema.exclusiveMaximum) as number | undefined;
  // The nearest values outside the range, and one far outside.
  if (min !== undefined) {
    const below = schema.minimum !== undefined ? min - 1 : min;
    options.push(fc.constantFrom(below, below - 1, below - 1000));
  }
  if (max !== undefined) {
    const above = schema.maximum !== undefined ? max + 1 : max;
    options.push(fc.constantFrom(above, above + 1, above + 1000));
  }
  if (integer) options.push(fc.constantFrom(1.5, (min ?? 0) + 0.25));
  return options;
}

function invalidObjects(schema: Schema, ctx: SchemaContext): Array<fc.Arbitrary<unknown>> {
  const options: Array<fc.Arbitrary<unknown>> = [];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  const whole = validObject(schema, ctx);
  if (required.length > 0) {
    options.push(
      fc.tuple(whole, fc.constantFrom(...required)).map(([value, key]) => {
        const { [key]: _dropped, ...rest } = value;
        return rest;
      }),
    );
  }
  if (schema.additionalProperties === false) {
    options.push(whole.map((value) => ({ ...value, unexpected_member: 1 })));
  }
  for (const [key, child] of Object.entries(properties)) {
    const broken = invalidValue(child, ctx);
    if (broken !== undefined) options.push(fc.tuple(whole, broken).map(([value, bad]) => ({ ...value, [key]: bad })));
  }
  return options;
}

function invalidArrays(schema: Schema, ctx: SchemaContext): Array<fc.Arbitrary<unknown>> {
  const items = (schema.items ?? {}) as Schema;
  const broken = invalidValue(items, ctx);
  if (broken === undefined) return [];
  return [fc.tuple(fc.array(validValue(items, ctx), { maxLength: 2 }), broken).map(([list, bad]) => [...list, bad])];
}

import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * The one validator of every input: the route schemas (the same objects the OpenAPI document is
 * generated from) compiled by Ajv. Nothing is coerced: a body's `"version": "3"` stays a string
 * and is refused. `verbose` keeps the failing schema and value on each error, which
 * schema-rules.ts turns into words. The import worker builds its own with this function.
 */
export function createAjv(): Ajv {
  const ajv = new Ajv({
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    verbose: true,
    addUsedSchema: false,
  });
  // ajv-formats is CommonJS: its plugin is the module's `default` member.
  formats.default(ajv);
  return ajv;
}

/**
 * Query strings and path parameters arrive as text. A member that the schema declares an integer
 * is converted when it is written as JSON writes an integer (an optional minus, then digits without
 * a leading zero) and left as text otherwise, so "1e2", " 5", "0x10", "5.0", "+5" and "007" are
 * refused as "must be an integer": the document's `integer` means exactly what String(n) writes.
 */
const DECIMAL = /^-?(?:0|[1-9]\d*)$/;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function integerMembers(schema: unknown): string[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  return Object.entries(schema.properties)
    .filter(([, member]) => isObject(member) && member.type === 'integer')
    .map(([name]) => name);
}

/**
 * Validators by schema object, for the process, each compiled when it first checks a value: a
 * process that serves a few routes (a test file, a short-lived worker) compiles a few of the ~300
 * schemas, not all of them (Ajv's compiling was a third of a small test process's CPU). A schema
 * shared by routes (`/owner/` and `/owner`), and every schema again when the app is built anew in
 * the same process (the tests build hundreds), is compiled once. The route schemas are constants
 * of their modules, never changed after; openapi-conformance sends every operation requests, so
 * a schema Ajv refuses fails the suite, not a user's first request.
 */
type Check = ((data: unknown) => boolean) & { errors?: ValidateFunction['errors'] };
let shared: ((schema: object) => ValidateFunction) | undefined;
function compiler(): (schema: object) => ValidateFunction {
  if (shared !== undefined) return shared;
  const ajv = createAjv();
  const compiled = new WeakMap<object, ValidateFunction>();
  shared = (schema) => {
    let validate = compiled.get(schema);
    if (validate === undefined) compiled.set(schema, (validate = ajv.compile(schema)));
    return validate;
  };
  return shared;
}

/** Fastify's validator compiler: one Ajv for every route and part; query strings and path parameters get their integers converted first. */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const compile = compiler();
  return ({ schema, httpPart }) => {
    const integers = httpPart === 'querystring' || httpPart === 'params' ? integerMembers(schema) : [];
    let validate: ValidateFunction | undefined;
    const check: Check = (data: unknown) => {
      if (integers.length > 0 && isObject(data)) {
        for (const name of integers) {
          const value = data[name];
          if (typeof value === 'string' && DECIMAL.test(value)) data[name] = Number(value);
        }
      }
      validate ??= compile(schema as object);
      const valid = validate(data) as boolean;
      check.errors = validate.errors;
      return valid;
    };
    check.errors = undefined;
    return check;
  };
}

import type { ErrorObject } from 'ajv';

/**
 * Ajv's errors in the words a 400 uses. A schema states a rule; most rules read well from the
 * schema itself ("must be an integer from 1 to 100"), and the few that do not (a pattern, a union)
 * carry their words here, beside the schema, never in the OpenAPI document. Pure: the import
 * worker uses it too.
 */

const RULE = Symbol('vellum.rule');

type Json = Record<string, unknown> & { [RULE]?: Rule };
/** The words for every failure of the schema, or per keyword (`pattern`, `anyOf`, ...). */
type Rule = string | Partial<Record<string, string>>;

/** Attaches the words a failure of `schema` is refused with; returns the schema itself. */
export function explain<T extends object>(schema: T, rule: Rule): T {
  (schema as Json)[RULE] = rule;
  return schema;
}

function ruleOf(schema: unknown, keyword: string): string | undefined {
  if (!isObject(schema)) return undefined;
  const rule = schema[RULE];
  return typeof rule === 'string' ? rule : rule?.[keyword];
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Values joined as a reader says them: `"a" or "b"`, or `one of a, b, c`. */
function choices(values: unknown[]): string {
  if (values.length === 1) return JSON.stringify(values[0]);
  if (values.length === 2) return `${JSON.stringify(values[0])} or ${JSON.stringify(values[1])}`;
  return `one of ${values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
}

/** Offsets and version numbers are bounded by what a JavaScript number holds exactly: no real bound. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** What a value of this schema is, as a noun: "an integer from 1 to 100", "a string of at most 200 characters". */
export function describe(schema: unknown): string | undefined {
  if (!isObject(schema)) return undefined;
  if (Array.isArray(schema.enum)) return choices(schema.enum);
  if ('const' in schema) return JSON.stringify(schema.const);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) {
    if (branches.every((b) => isObject(b) && 'const' in b)) return choices(branches.map((b) => (b as Json).const));
    const nouns = branches.map(describe);
    return nouns.every((n) => n !== undefined) ? nouns.join(' or ') : undefined;
  }
  const { minimum, maximum, minLength, maxLength, minItems } = schema as Record<string, number | undefined>;
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const what = schema.type === 'integer' ? 'an integer' : 'a number';
      if (minimum !== undefined && maximum !== undefined && maximum !== UNBOUNDED)
        return `${what} from ${minimum} to ${maximum}`;
      if (minimum !== undefined) return `${what} ${minimum} or more`;
      return maximum === undefined ? what : `${what} ${maximum} or less`;
    }
    case 'string':
      if (minLength !== undefined && maxLength !== undefined) return `${minLength} to ${maxLength} characters`;
      if (maxLength !== undefined) return `a string of at most ${maxLength} characters`;
      if (minLength !== undefined) return `a string of at least ${minLength} characters`;
      return 'a string';
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'object':
      return 'an object';
    case 'array':
      return minItems === 1 ? 'a non-empty array' : 'an array';
    default:
      return undefined;
  }
}

/** One refusal: where (a property path, '' for the whole value) and what is wrong, in words. */
export interface Failure {
  path: string;
  /** "must be ...", "is required", "is not allowed": reads after the path. */
  rule: string;
  /** The words came from explain(): a rule stated for people, not a shape mismatch. */
  explained: boolean;
  keyword: string;
  /** The value that failed (Ajv's `verbose` option). */
  data: unknown;
}

/** `/notes/0/versions/1/title` → `notes[0].versions[1].title`. */
export function pathOf(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path += /^\d+$/.test(segment) ? `[${segment}]` : path === '' ? segment : `.${segment}`;
  }
  return path;
}

const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

/**
 * The error a person should read first. Ajv (allErrors off) stops at the first failing keyword,
 * so the last error is the outermost one; for a union it is preceded by each branch's error. When
 * a branch got past the union's own level (a member of the right object failed), that inner error
 * says more than "matches no branch", so it is taken instead.
 */
function pick(errors: ErrorObject[]): ErrorObject {
  const last = errors.at(-1)!;
  if (last.keyword !== 'anyOf' && last.keyword !== 'oneOf') return last;
  const deeper = errors.filter(
    (e) =>
      e !== last && e.schemaPath.startsWith(`${last.schemaPath}/`) && e.instancePath.length > last.instancePath.length,
  );
  const branch = (e: ErrorObject) => e.schemaPath.slice(last.schemaPath.length + 1).split('/')[0];
  for (const candidate of deeper) {
    const siblings = errors.filter(
      (e) => e !== last && branch(e) === branch(candidate) && e.schemaPath.startsWith(`${last.schemaPath}/`),
    );
    if (siblings.every((e) => e.instancePath.length > last.instancePath.length)) return candidate;
  }
  return last;
}

/** The first refusal among Ajv's errors (at least one), in words. */
export function firstFailure(errors: ErrorObject[]): Failure {
  const error = pick(errors);
  const path = pathOf(error.instancePath);
  const explained = ruleOf(error.parentSchema, error.keyword);
  const base = { keyword: error.keyword, data: error.data };
  if (explained !== undefined) return { ...base, path, rule: explained, explained: true };
  switch (error.keyword) {
    case 'required': {
      const name = String(error.params.missingProperty);
      const property = (error.parentSchema?.properties as Record<string, unknown> | undefined)?.[name];
      const noun = describe(property);
      return {
        ...base,
        path: join(path, name),
        rule: noun === undefined ? 'is required' : `is required (${noun})`,
        explained: false,
      };
    }
    case 'additionalProperties':
      return {
        ...base,
        path: join(path, String(error.params.additionalProperty)),
        rule: 'is not allowed',
        explained: false,
      };
    case 'pattern':
      return { ...base, path, rule: `must match the pattern ${String(error.schema)}`, explained: false };
    case 'format':
      return { ...base, path, rule: `must be a valid ${String(error.schema)}`, explained: false };
    case 'minItems':
    case 'maxItems':
      if (error.parentSchema?.minItems !== 1 || error.keyword === 'maxItems') {
        return {
          ...base,
          path,
          rule: `must have ${error.keyword === 'minItems' ? 'at least' : 'at most'} ${String(error.schema)} items`,
          explained: false,
        };
      }
  }
  const noun = describe(error.parentSchema);
  return {
    ...base,
    path,
    rule: noun === undefined ? String(error.message ?? 'is invalid') : `must be ${noun}`,
    explained: false,
  };
}

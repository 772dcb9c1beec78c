import fastJsonStringify from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';

type Serialize = (data: unknown) => string;

/**
 * Response serializers by schema object, for the process: what Fastify's own compiler builds
 * (fast-json-stringify, no shared schemas here), but built once for a schema however many routes
 * and apps use it. An app built anew in the same process — the tests build hundreds — then compiles
 * nothing again. The route schemas are constants of their modules, never changed after.
 */
const compiled = new WeakMap<object, Serialize>();

export function createSerializerCompiler(): FastifySerializerCompiler<unknown> {
  return ({ schema }) => {
    let serialize = compiled.get(schema as object);
    if (serialize === undefined) compiled.set(schema as object, (serialize = fastJsonStringify(schema as object)));
    return serialize;
  };
}

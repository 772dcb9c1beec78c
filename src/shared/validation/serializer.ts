import fastJsonStringify from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';

type Serialize = (data: unknown) => string;

/**
 * Response serializers by schema object, for the process, each built when it first serializes: what
 * Fastify's own compiler builds (fast-json-stringify, no shared schemas here), but only for the
 * answers a process gives (a test file gives a few of them), and once for a schema however many
 * routes and apps use it. An app built anew in the same process — the tests build hundreds — then
 * compiles nothing again. The route schemas are constants of their modules, never changed after.
 */
const compiled = new WeakMap<object, Serialize>();

function serializerOf(schema: object): Serialize {
  let serialize = compiled.get(schema);
  if (serialize === undefined) compiled.set(schema, (serialize = fastJsonStringify(schema)));
  return serialize;
}

export function createSerializerCompiler(): FastifySerializerCompiler<unknown> {
  return ({ schema }) => {
    let serialize: Serialize | undefined;
    return (data) => {
      serialize ??= serializerOf(schema as object);
      return serialize(data);
    };
  };
}

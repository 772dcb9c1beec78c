// Prints the OpenAPI document the service serves at /api/openapi.json, without starting a server:
// `tsx scripts/openapi.ts > openapi.json`. Client type generation and the linter read it.
import { buildOpenApiDocument } from '../src/openapi-dump.js';

process.stdout.write(`${JSON.stringify(await buildOpenApiDocument(), null, 2)}\n`);

import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { AppError } from '../errors.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code?: string;
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export function problem(
  status: number,
  detail: string,
  code?: string,
  extensions: Record<string, unknown> = {},
): Problem {
  const body: Problem = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail };
  if (code !== undefined) body.code = code;
  // Extensions follow the standard members and can never replace them.
  for (const [key, value] of Object.entries(extensions)) if (!(key in body)) body[key] = value;
  return body;
}

/** RFC 9457 body; 401s also name the scheme the client should use (RFC 6750). */
export function sendProblem(reply: FastifyReply, body: Problem, headers: Record<string, string> = {}): FastifyReply {
  if (body.status === 401) reply.header('www-authenticate', 'Bearer');
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.code(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

/** An error of the catalogue (src/errors.ts) as its problem body. */
export function problemOf(error: AppError): Problem {
  return problem(error.status, error.detail, error.code, error.extensions);
}

/** Answers with an error of the catalogue: its problem body and its headers (Retry-After, Allow…). */
export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  return sendProblem(reply, problemOf(error), error.headers);
}

import type { FastifyInstance } from 'fastify';

/**
 * CONTRACT.md: a method that a path does not have is 405 with `Allow`, not 404. The router only
 * says "no match", so every route's path is kept as a pattern and the not-found handler asks which
 * methods the requested path has.
 */
export function trackAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const patterns = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    const source = route.url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')
      .replace(/\/+$/, '');
    const entry = patterns.get(source) ?? { pattern: new RegExp(`^${source}/?$`), methods: new Set<string>() };
    for (const method of [route.method].flat()) entry.methods.add(method);
    patterns.set(source, entry);
  });
  return (path) => {
    const allowed = new Set<string>();
    for (const { pattern, methods } of patterns.values()) {
      if (pattern.test(path)) for (const method of methods) allowed.add(method);
    }
    return [...allowed].sort();
  };
}

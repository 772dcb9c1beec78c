import type { FastifyInstance } from 'fastify';

/** How a route's path segment matches, in find-my-way's order of preference. */
const STATIC = 0;
const PARAMETER = 1;

interface Segment {
  kind: typeof STATIC | typeof PARAMETER;
  text: string;
}

interface Shape {
  segments: Segment[];
  methods: Set<string>;
}

const segmentsOf = (path: string): string[] => path.replace(/\/+$/, '').split('/').slice(1);

/**
 * How well `shape` matches the path: the kind of each segment it used, or undefined for no match.
 * A smaller vector (compared segment by segment) is the route the router prefers: a static
 * segment wins over a parameter, from the left. Wildcard routes (the web client's, the API docs'
 * files) are left out: they take any path, and a path they answer is not "a path with other methods".
 */
function rank(shape: Shape, parts: string[]): number[] | undefined {
  const kinds: number[] = [];
  for (const [i, segment] of shape.segments.entries()) {
    const part = parts[i];
    if (part === undefined) return undefined;
    if (segment.kind === STATIC ? part !== segment.text : part === '') return undefined;
    kinds.push(segment.kind);
  }
  return parts.length === shape.segments.length ? kinds : undefined;
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/**
 * docs/api.md, "Conventions": a method that a path does not have is 405 with `Allow`, not 404; CORS preflights
 * list the same methods. The router only says "no match", so every route's path shape is kept and
 * the methods are those of the shape the path matches best: `/api/auth/admin/all` is the static
 * route's (GET, HEAD), not also `DELETE /api/auth/admin/:id`'s, as find-my-way itself prefers a
 * static segment to a parameter.
 */
export function trackAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const shapes = new Map<string, Shape>();
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    const segments = segmentsOf(route.url).map(
      (text): Segment => ({ kind: text.startsWith(':') ? PARAMETER : STATIC, text }),
    );
    // Routes that differ only in their parameters' names have one shape.
    const key = segments.map((s) => (s.kind === STATIC ? `=${s.text}` : String(s.kind))).join('/');
    const shape = shapes.get(key) ?? { segments, methods: new Set<string>() };
    for (const method of [route.method].flat()) shape.methods.add(method);
    shapes.set(key, shape);
  });
  return (path) => {
    const parts = segmentsOf(path);
    let best: { rank: number[]; shape: Shape } | undefined;
    for (const shape of shapes.values()) {
      const r = rank(shape, parts);
      if (r !== undefined && (best === undefined || compare(r, best.rank) < 0)) best = { rank: r, shape };
    }
    return best === undefined ? [] : [...best.shape.methods].sort();
  };
}

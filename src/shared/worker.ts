import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module `name` beside the caller (`import.meta.url`): the built .js
 * file, or under tsx (tests, `npm run dev`) the .ts file loaded through tsx's loader, which worker
 * threads do not inherit.
 */
export function startWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const typescript = callerUrl.endsWith('.ts');
  const url = new URL(`./${name}${typescript ? '.ts' : '.js'}`, callerUrl);
  if (!typescript) return new Worker(url, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`,
    { ...options, eval: true },
  );
}

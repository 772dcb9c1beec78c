import { parentPort } from 'node:worker_threads';
import { lowerOwnThreadPriority } from '../ops/thread-priority.js';
import { diffJson } from './diff.js';
import { mergeContent } from './merge.js';

lowerOwnThreadPriority();

type Job =
  | { id: number; kind: 'diff'; from: string; to: string; context: number; header: string }
  | { id: number; kind: 'merge'; base: string; ours: string; theirs: string };

/**
 * Diffs every pair of versions but trivial ones off the event loop (see diff-runner); answers
 * with the diff's JSON already encoded as UTF-8, its memory handed over rather than copied, so
 * that neither the diff nor its encoding holds up the requests the event loop is serving. Merges
 * of contents (merge.ts) run here too, for the same reason.
 */
parentPort!.on('message', (job: Job) => {
  try {
    if (job.kind === 'merge') {
      parentPort!.postMessage({ id: job.id, outcome: mergeContent(job.base, job.ours, job.theirs) });
      return;
    }
    const bytes = new TextEncoder().encode(diffJson(job.from, job.to, job.context, job.header));
    parentPort!.postMessage({ id: job.id, bytes }, [bytes.buffer]);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: String(error) });
  }
});

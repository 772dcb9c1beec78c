import { toBlocks, type Blocks } from './markdown-blocks';

/**
 * Parses (and highlights) Markdown off the page's thread: a 1 MB note takes ~0.3–0.5 s to parse,
 * which in the page would hold up every keystroke typed meanwhile. Answers may come out of order
 * (highlighting loads on first need); each carries its request's id.
 */
const scope = self as unknown as {
  onmessage: ((event: MessageEvent<{ id: number; source: string }>) => void) | null;
  postMessage(message: { id: number; blocks?: Blocks; failed?: true }): void;
};

scope.onmessage = ({ data: { id, source } }) => {
  toBlocks(source).then(
    (blocks) => scope.postMessage({ id, blocks }),
    () => scope.postMessage({ id, failed: true }),
  );
};

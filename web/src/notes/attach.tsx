import { useRef, useState } from 'preact/hooks';
import { markdownFor, uploadFile } from '../files/api';

export interface Attacher {
  /** Uploads the files one after another, putting each one's link at the cursor once it is stored. */
  attach(files: File[]): void;
  /** The "Attach file" button with its hidden file picker. */
  button: preact.JSX.Element;
  /** The upload's progress or why it failed, for a live region. */
  message: preact.JSX.Element | null;
}

/**
 * Attaching files to a note: from the button, or pasted and dropped into the text. While a file
 * uploads its progress shows; a failure says why and leaves the text as it was.
 */
export function useAttacher(insert: (text: string) => void): Attacher {
  const picker = useRef<HTMLInputElement>(null);
  const [progress, setProgress] = useState<{ name: string; percent: number } | null>(null);
  const [failure, setFailure] = useState('');
  const queue = useRef(Promise.resolve());

  const attach = (files: File[]) => {
    setFailure('');
    for (const file of files) {
      queue.current = queue.current.then(async () => {
        setProgress({ name: file.name, percent: 0 });
        try {
          const stored = await uploadFile(file, (fraction) =>
            setProgress({ name: file.name, percent: Math.round(fraction * 100) }),
          );
          insert(`${markdownFor(stored)}${stored.content_type.startsWith('image/') ? '\n' : ''}`);
        } catch (e) {
          setFailure(`Could not attach “${file.name}”: ${e instanceof Error ? e.message : String(e)}`);
        } finally {
          setProgress(null);
        }
      });
    }
  };

  const button = (
    <>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        tabIndex={-1}
        aria-hidden="true"
        onChange={(e) => {
          attach([...(e.currentTarget.files ?? [])]);
          e.currentTarget.value = '';
        }}
      />
      <button type="button" class="secondary" onClick={() => picker.current?.click()}>
        Attach file
      </button>
    </>
  );
  const message =
    failure !== '' ? (
      <p class="error" role="alert">
        {failure}
      </p>
    ) : progress !== null ? (
      <p class="hint upload" role="status">
        Uploading “{progress.name}”…{' '}
        <progress max={100} value={progress.percent} aria-label={`Uploading ${progress.name}`} /> {progress.percent} %
      </p>
    ) : null;
  return { attach, button, message };
}

import { useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { attachmentUrl, attachmentUsage, deleteAttachment, listAttachments, saveFile, type AttachmentRow } from './api';
import { Loaded, useResource } from '../api/resource';
import { formatTime } from '../app/format';

const MiB = 1024 * 1024;
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * MiB) return `${(bytes / (1024 * MiB)).toFixed(1)} GiB`;
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

/** The account's files: space used against the quota, each file with where it is used, delete. */
export function Attachments() {
  const files = useResource(async (signal) => {
    const [rows, usage] = await Promise.all([listAttachments(100, signal), attachmentUsage(signal)]);
    return { rows, usage };
  }, []);
  const load = files.reload;
  const usage = files.data?.usage;
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const remove = async (row: AttachmentRow) => {
    if (!window.confirm(`Delete “${row.filename}” for good?`)) return;
    try {
      await deleteAttachment(row.id);
      setMessage({ ok: true, text: `“${row.filename}” deleted.` });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
    await load();
  };
  const download = async (row: AttachmentRow) => {
    try {
      saveFile(await attachmentUrl(row.id), row.filename);
    } catch {
      setMessage({
        ok: false,
        text: `“${row.filename}” could not be downloaded. Check your connection and try again.`,
      });
    }
  };
  return (
    <section aria-labelledby="files-heading">
      <h2 id="files-heading">Attachments</h2>
      {usage && (
        <p>
          {formatBytes(usage.used_bytes)} used{usage.quota_bytes > 0 ? ` of ${formatBytes(usage.quota_bytes)}` : ''}.{' '}
          {usage.quota_bytes > 0 && (
            <meter min={0} max={usage.quota_bytes} value={usage.used_bytes} aria-label="Storage used" />
          )}
        </p>
      )}
      {message && (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <Loaded resource={files} what="your files">
        {({ rows }: { rows: AttachmentRow[] }) =>
          rows.length === 0 ? (
            <p class="muted">No files yet. Attach one to a note, or paste an image into it.</p>
          ) : (
            <ul class="rows table" aria-label="Your files">
              {rows.map((row) => (
                <li key={row.id} aria-label={row.filename}>
                  <span class="row-title">{row.filename}</span>
                  <span class="meta">
                    {formatBytes(row.size)} · added {formatTime(row.created_at)} ·{' '}
                    {row.references === 0
                      ? 'not used in any note'
                      : `used in ${row.references} ${row.references === 1 ? 'version' : 'versions'}`}
                  </span>
                  <span class="actions">
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => download(row)}
                      aria-label={`Download ${row.filename}`}
                    >
                      Download
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => remove(row)}
                      aria-label={`Delete ${row.filename}`}
                    >
                      Delete
                    </button>
                  </span>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

import { api, raw, session, unwrap, type Attachment } from '../api/client';

export type { Attachment, AttachmentRow } from '../api/client';

/** The account's files, newest first, with how many notes use each. */
export async function listAttachments(limit: number, signal?: AbortSignal) {
  return unwrap(await api.GET('/api/attachments', { params: { query: { limit } }, signal }));
}

/** Space used against the quota. */
export async function attachmentUsage(signal?: AbortSignal) {
  return unwrap(await api.GET('/api/attachments/usage', { signal }));
}

export async function deleteAttachment(id: string): Promise<void> {
  unwrap(await api.DELETE('/api/attachments/{attachmentID}', { params: { path: { attachmentID: id } } }));
}

/**
 * Uploads one file as multipart/form-data with progress (fetch reports none for uploads, so
 * XMLHttpRequest), the access token in the header as every API call; a 401 refreshes and tries once
 * more. Resolves with the attachment, or rejects with the server's own words.
 */
export async function uploadFile(file: File, onProgress: (fraction: number) => void): Promise<Attachment> {
  for (let attempt = 0; ; attempt++) {
    const token = await session.token(attempt > 0);
    const result = await send(file, token, onProgress);
    if (result.status === 401 && attempt === 0) continue;
    if (result.status === 201) return result.body as Attachment;
    const detail = (result.body as { detail?: unknown } | null)?.detail;
    throw new Error(
      typeof detail === 'string'
        ? detail
        : result.status === 0
          ? 'The server cannot be reached. Check your connection and try again.'
          : `The upload failed (${result.status}).`,
    );
  }
}

function send(
  file: File,
  token: string | null,
  onProgress: (fraction: number) => void,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/attachments');
    if (token !== null) xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      resolve({ status: xhr.status, body });
    };
    xhr.onerror = () => resolve({ status: 0, body: null });
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

/** The Markdown that shows an uploaded file: an image for pictures, a link for the rest. */
export function markdownFor(attachment: Attachment): string {
  const name = attachment.filename.replace(/[[\]\\]/g, '');
  const url = `/api/attachments/${attachment.id}`;
  return attachment.content_type.startsWith('image/') ? `![${name}](${url})` : `[${name}](${url})`;
}

const objectUrls = new Map<string, Promise<string>>();

/**
 * An object URL for an attachment, fetched with the access token: an <img> cannot send the token,
 * and a token in a URL would leak into logs and history. Kept for the page's life (files never change).
 */
export function attachmentUrl(id: string): Promise<string> {
  let url = objectUrls.get(id);
  if (url === undefined) {
    url = raw(`/api/attachments/${id}`).then(async (response) => {
      if (!response.ok) throw new Error(`attachment ${id}: ${response.status}`);
      return URL.createObjectURL(await response.blob());
    });
    url.catch(() => objectUrls.delete(id));
    objectUrls.set(id, url);
  }
  return url;
}

/**
 * Hands a file the page holds (an object URL) to the browser as a download named `name`: a link
 * to /api/attachments/… cannot carry the access token, so the page fetches the bytes and saves them.
 */
export function saveFile(url: string, name: string): void {
  const link = document.createElement('a');
  link.href = url;
  link.download = name.trim() || 'file';
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
}

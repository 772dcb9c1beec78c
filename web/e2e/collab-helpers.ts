import type { Page } from '@playwright/test';
import { contentBox, expect } from './fixtures';

// Shared by the live co-editing specs (collab.spec.ts, collab-instances.spec.ts).

export async function share(owner: Page, username: string, role: 'editor' | 'viewer'): Promise<void> {
  const people = owner.getByRole('region', { name: 'People' });
  if (!(await people.isVisible())) await owner.getByRole('button', { name: 'Share' }).click();
  await people.getByLabel('Username').fill(username);
  await people.getByLabel('Role', { exact: true }).selectOption(role);
  await people.getByRole('button', { name: 'Add person' }).click();
  await expect(people.getByRole('status')).toContainText(`Shared with ${username}`);
}

/** The text on screen, without the others' cursors and names (widgets between the letters). */
export async function expectText(page: Page, text: string): Promise<void> {
  await expect
    .poll(() =>
      contentBox(page).evaluate((element) =>
        Array.from(element.querySelectorAll('.cm-line'))
          .map((line) => {
            const copy = line.cloneNode(true) as HTMLElement;
            copy.querySelectorAll('.cm-ySelectionCaret').forEach((caret) => caret.remove());
            return (copy.textContent ?? '').replaceAll('\u2060', '');
          })
          .join('\n'),
      ),
    )
    .toBe(text);
}

/** `#1f5fbf` as the browser reports a computed colour. */
export function rgb(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  return `rgb(${r}, ${g}, ${b})`;
}

export const liveState = (page: Page) => page.getByRole('status').filter({ hasText: /^Live/ });

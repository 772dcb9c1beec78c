import type { Page } from '@playwright/test';
import { contentBox, createNote, expect, expectContent, signUp } from './fixtures';

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

/**
 * carol and alice sign up with live editing on, alice writes "one / two / three" and shares it with
 * carol as an editor, and both have it open, each live with the other.
 */
export async function editTogether(
  alice: Page,
  carol: Page,
  title: string,
  { autosave = false }: { autosave?: boolean } = {},
): Promise<{ id: string; aliceName: string; carolName: string }> {
  const carolName = await signUp(carol, undefined, undefined, { live: true });
  const aliceName = await signUp(alice, undefined, undefined, { live: true, autosave });
  const id = await createNote(alice, title, 'one\ntwo\nthree');
  await share(alice, carolName, 'editor');
  await carol.goto(`/notes/${id}`);
  await expectContent(carol, 'one\ntwo\nthree');
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · Saved`);
  await expect(liveState(alice)).toHaveText(`Live with ${carolName} · Saved`);
  return { id, aliceName, carolName };
}

/** Both type at once, alice at the end of line 1, carol at the end of line 3; both see both lines. */
export async function typeOnTwoLines(alice: Page, carol: Page): Promise<void> {
  await contentBox(alice).click();
  await alice.keyboard.press('Control+Home');
  await alice.keyboard.press('End');
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await Promise.all([
    alice.keyboard.type(' and alice', { delay: 20 }),
    carol.keyboard.type(' and carol', { delay: 20 }),
  ]);
  await expectText(alice, 'one and alice\ntwo\nthree and carol');
  await expectText(carol, 'one and alice\ntwo\nthree and carol');
}

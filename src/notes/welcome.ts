import type { Db } from '../db/schema.js';
import { createNote } from './notes.service.js';

/** The note a new account starts with (WELCOME_NOTE=on): what Vellum is and how to begin. */
export const WELCOME_NOTE = {
  title: 'Welcome to Vellum',
  content: `# Welcome to Vellum

Vellum keeps your notes in Markdown, with **every version** saved: nothing you write is lost.

- [ ] Write your first note with **New note** (or press \`N\`)
- [ ] Find anything as you type in **Search notes** (or press \`/\`)
- [ ] Open the **History** of a note to see and restore its earlier versions
- [ ] Share a note by link, or with people, from **Share**

> Tip: press \`?\` for the keyboard shortcuts, and Ctrl+K (⌘K) to jump to a note.

Delete this note whenever you like: it goes to the trash like any other. #welcome
`,
} as const;

/** Creates the welcome note for a new account, through the one way notes are made (createNote). */
export async function createWelcomeNote(db: Db, userId: string): Promise<void> {
  await createNote(db, userId, { title: WELCOME_NOTE.title, content: WELCOME_NOTE.content });
}

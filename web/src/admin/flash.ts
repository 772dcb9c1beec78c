/** A message for the next Administration screen (an account deleted from its page shows on the list). */
let pending = '';

export function flashNext(message: string): void {
  pending = message;
}

export function takeFlash(): string {
  const message = pending;
  pending = '';
  return message;
}

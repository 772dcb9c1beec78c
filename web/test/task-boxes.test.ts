import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTask, taskMarks } from '../src/notes/task-boxes.ts';

const text = [
  '- [ ] one',
  '  - [x] nested',
  '1. [X] numbered',
  '> - [ ] quoted',
  '```',
  '- [ ] in code',
  '```',
  '~~~~',
  '- [ ] in code too',
  '```',
  '~~~~',
  '- [ ]',
  '- [ ] last',
].join('\n');

test('task boxes: each task item of the text, in order, as GFM renders them (not code, not an empty item)', () => {
  assert.deepEqual(
    taskMarks(text).map((at) => text.slice(0, at).split('\n').pop()! + text.slice(at).split('\n')[0]),
    ['- [ ] one', '  - [x] nested', '1. [X] numbered', '> - [ ] quoted', '- [ ] last'],
  );
});

test('ticking changes only that box; boxes that cannot be matched change nothing', () => {
  assert.equal(setTask(text, 0, true, 5), text.replace('- [ ] one', '- [x] one'));
  assert.equal(setTask(text, 2, false, 5), text.replace('1. [X]', '1. [ ]'));
  assert.equal(setTask('a\r\n- [ ] b', 0, true, 1), 'a\r\n- [x] b');
  // Raw HTML added a box of its own: the rendered boxes are not the text's.
  assert.equal(setTask(text, 0, true, 6), null);
  assert.equal(setTask(text, 9, true, 5), null);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { folderNameProblem, folderNameRefusal } from '../src/notes/folder-name.ts';

test('folder names: each way a name is refused is said in plain words', () => {
  assert.equal(folderNameProblem('Work', ['Home']), null);
  assert.equal(folderNameProblem('  ', []), 'Give the folder a name.');
  assert.match(folderNameProblem('x'.repeat(101), [])!, /at most 100 characters; this one has 101/);
  assert.equal(folderNameProblem('𝒪'.repeat(100), []), null);
  assert.match(folderNameProblem('a/b', [])!, /cannot contain \//);
  assert.match(folderNameProblem('Plans.', [])!, /end with a dot/);
  assert.match(folderNameProblem('con', [])!, /Windows keeps for a device/);
  assert.match(folderNameProblem('tab\there', [])!, /control characters/);
  assert.match(folderNameProblem(' work ', ['Work'])!, /already a folder called “work”/);
});

test("the server's refusals become the same plain words, never the schema's text", () => {
  const taken = { code: 'folder_name_taken', detail: 'A folder with this name already exists here' };
  assert.match(folderNameRefusal('Work', 409, taken, 'raw'), /already a folder called “Work”/);
  const schema = { code: 'validation_failed', detail: 'body/name must match pattern "^..."' };
  assert.match(folderNameRefusal('a:b', 400, schema, 'raw'), /cannot contain :/);
  assert.doesNotMatch(folderNameRefusal('x', 400, schema, 'raw'), /pattern|body\//);
  assert.equal(
    folderNameRefusal('x', 409, { code: 'folder_limit' }, 'An account holds at most'),
    'An account holds at most',
  );
});

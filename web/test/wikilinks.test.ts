import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toBlocks } from '../src/markdown/markdown-blocks.ts';

test('[[wikilinks]] render as links to the note of that title; code keeps them as text', async () => {
  const { html } = await toBlocks(
    'See [[Groceries]], [[Trip plan|the trip]] and [[Notes#Heading]].\n\n`[[code]]`\n\n```\n[[fenced]]\n```\n\n[[<b>x</b>]]',
  );
  assert.match(html[0]!, /<a class="wikilink" href="\/notes\/find\?title=Groceries">Groceries<\/a>/);
  assert.match(html[0]!, /<a class="wikilink" href="\/notes\/find\?title=Trip%20plan">the trip<\/a>/);
  assert.match(html[0]!, /href="\/notes\/find\?title=Notes">Notes<\/a>/);
  assert.doesNotMatch(html[1]!, /wikilink/);
  assert.doesNotMatch(html[2]!, /wikilink/);
  assert.match(html[3]!, /title=%3Cb%3Ex%3C%2Fb%3E">&lt;b&gt;x&lt;\/b&gt;<\/a>/);
});

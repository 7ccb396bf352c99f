// The storm's message check (tests/support/storm.mjs `missingAcknowledged`) names every turn
// answered 200 whose user message is not in the saved session: inputs repeat (a send retried
// after a 409 keeps its text), so one saved message cannot stand for two acknowledged turns.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { missingAcknowledged } from '../support/storm.mjs';

const user = (content) => ({ id: `m-${content}`, role: 'user', content });
const assistant = (content) => ({ id: `a-${content}`, role: 'assistant', content });

function check(name, acknowledged, messages, expected) {
  test(name, () => {
    assert.deepEqual(missingAcknowledged(new Map(acknowledged), messages), expected);
  });
}

check('every acknowledged message saved', [['t1', 'hi'], ['t2', 'yo']], [user('hi'), assistant('hi!'), user('yo')], []);
check('a lost message is named', [['t1', 'hi'], ['t2', 'yo']], [user('hi'), assistant('hi!')], ['t2']);
check('a repeated text needs one message per turn', [['t1', '/tool cats'], ['t2', '/tool cats']], [user('/tool cats')], ['t2']);
check("an assistant's text does not count", [['t1', 'hi']], [assistant('hi')], ['t1']);
check('unacknowledged extra messages are not its concern', [['t1', 'hi']], [user('hi'), user('other')], []);
check('nothing saved at all', [['t1', 'hi']], [], ['t1']);

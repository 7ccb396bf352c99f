// The ChatMemory conformance suite for JS-implemented memories (the contract:
// src/ports/chat.rs, `ChatMemory::save` and its fence; the rule: src/core/session/fence.rs).
//
// A memory is `{ load(options?), save(messages, options?) }`. A turn's saves carry
// `options.fence`, its claim's generation, which grows from claim to claim. A memory that keeps
// fences stores the highest fence it saved under and refuses (rejects, writing nothing) a save
// with a lower one, so a save that outlived its turn's lease and lands after a newer turn's
// cannot overwrite that turn's conversation. The same fence saves again (a turn saves its user
// message, then its answer), and a save without a fence saves as before.
//
// Runs in any runtime (Node, workerd, browsers): no imports.

export const CASES = Object.freeze({
  replaces: 'a save replaces the conversation, and load returns it',
  sameFence: 'a save under the same fence saves again',
  higherFence: 'a save under a higher fence saves',
  lowerFence: 'a save under a lower fence than the last is refused and changes nothing',
  unfenced: 'a save without a fence saves',
});

/**
 * Runs every case, each against a fresh memory from `makeMemory()` (may be async; one session).
 * @returns {Promise<{ passed: string[], failed: { name: string, detail: string }[] }>}
 */
export async function checkChatMemory(makeMemory) {
  const cases = [
    [CASES.replaces, replaces],
    [CASES.sameFence, sameFence],
    [CASES.higherFence, higherFence],
    [CASES.lowerFence, lowerFence],
    [CASES.unfenced, unfenced],
  ];
  const report = { passed: [], failed: [] };
  for (const [name, run] of cases) {
    try {
      await run(await makeMemory());
      report.passed.push(name);
    } catch (error) {
      report.failed.push({ name, detail: error instanceof CaseFailure ? error.message : `threw: ${describe(error)}` });
    }
  }
  return report;
}

/** A conversation of `n` canonical messages, its texts marked with `marker`. */
export function conformanceConversation(marker, n = 2) {
  return Array.from({ length: n }, (_, i) => ({
    id: `${marker}-${i}`,
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `${marker} message ${i}`,
    status: 'complete',
    createdAt: '2026-01-01T00:00:00.000Z',
  }));
}

class CaseFailure extends Error {}

function fail(message) {
  throw new CaseFailure(message);
}

const ids = (messages) => JSON.stringify((messages ?? []).map((m) => m.id));

async function expectSaved(memory, expected, what) {
  const loaded = await memory.load({});
  if (ids(loaded) !== ids(expected)) fail(`${what}: load returned ${ids(loaded)}, expected ${ids(expected)}`);
}

async function replaces(memory) {
  await memory.save(conformanceConversation('first', 3), {});
  await memory.save(conformanceConversation('second', 2), {});
  await expectSaved(memory, conformanceConversation('second', 2), 'after two saves');
}

async function sameFence(memory) {
  await memory.save(conformanceConversation('user-message', 1), { fence: 5 });
  await memory.save(conformanceConversation('answer', 2), { fence: 5 });
  await expectSaved(memory, conformanceConversation('answer', 2), 'after two saves under fence 5');
}

async function higherFence(memory) {
  await memory.save(conformanceConversation('older', 2), { fence: 5 });
  await memory.save(conformanceConversation('newer', 4), { fence: 9 });
  await expectSaved(memory, conformanceConversation('newer', 4), 'after fence 5 then fence 9');
}

async function lowerFence(memory) {
  await memory.save(conformanceConversation('newer', 4), { fence: 9 });
  let refused = false;
  try {
    await memory.save(conformanceConversation('late', 2), { fence: 5 });
  } catch {
    refused = true;
  }
  if (!refused) fail('a save under fence 5 after one under fence 9 was not refused');
  await expectSaved(memory, conformanceConversation('newer', 4), 'after the refused save');
}

async function unfenced(memory) {
  await memory.save(conformanceConversation('fenced', 2), { fence: 9 });
  await memory.save(conformanceConversation('unfenced', 3), {});
  await expectSaved(memory, conformanceConversation('unfenced', 3), 'after a save without a fence');
}

function describe(error) {
  return error instanceof Error ? error.message : String(error);
}

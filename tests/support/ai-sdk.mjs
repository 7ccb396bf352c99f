// The AI SDK's own client (ai 7) as the judge of turnkeep's UI message stream: AbstractChat is
// the class useChat (React, Vue, Svelte) wraps; this gives it the state useChat would keep.
import { AbstractChat } from 'ai';

/** What useChat keeps: messages, status, error (the AI SDK's ChatState contract). */
class State {
  constructor(messages = []) {
    this.messages = messages;
    this.status = 'ready';
    this.error = undefined;
  }
  pushMessage = (message) => {
    this.messages = this.messages.concat(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = [...this.messages.slice(0, index), structuredClone(message), ...this.messages.slice(index + 1)];
  };
  snapshot = (value) => structuredClone(value);
}

/** A chat as useChat runs it, without React. */
export class TestChat extends AbstractChat {
  constructor({ messages, ...init }) {
    super({ ...init, state: new State(messages) });
  }
}

/** The text of a UI message's text parts. */
export const textOf = (message) => (message?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('');

export const words = (n) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');

export async function waitFor(predicate, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

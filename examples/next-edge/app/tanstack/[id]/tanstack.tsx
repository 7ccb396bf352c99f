'use client';
// The chat with TanStack AI: `useChat` of @tanstack/ai-react over turnkeep's
// `toTanStackConnection`, the page's one connection to the session's log underneath:
//
// - `persistence: true`: on mount the conversation comes from the connection (`hydrate`), and a
//   turn still running is joined (`joinRun`): a reload mid-answer resumes it, each word once;
// - `live: true`: the page follows the session, so a turn another tab sends shows here live;
// - a tool that needs approval shows Approve / Reject (`addToolApprovalResponse`); the answer
//   is a send with `resume[]`, and the server runs the tool once;
// - Stop stops the turn on the server, wherever it was started (`adapter.stop()`), and stops
//   listening here (TanStack's `stop()`, which alone cannot tell Stop from leaving the page).
import { useChat, type SubscribeConnectionAdapter, type UIMessage } from '@tanstack/ai-react';
import { useEffect, useState, type FormEvent } from 'react';
import type { ChatConnection, Message, TanStackConnection } from 'turnkeep/client';

import { CHAT_API, LOG_API } from '../../../lib/routes';

/** The session log's state when the page was rendered: the connection reads after `offset`. */
export interface Seed {
  messages: Message[];
  offset: string | null;
  activeRunId: string | null;
}

interface Props {
  id: string;
  user: string;
  seed: Seed;
  durable: boolean;
}

export function TanStackChat({ id, user, seed, durable }: Props) {
  const [adapter, setAdapter] = useState<TanStackConnection | null>(null);
  useEffect(() => {
    // turnkeep/client loads its wasm in the browser only, after the first paint.
    let connection: ChatConnection | undefined;
    let left = false;
    void import('turnkeep/client').then(({ createChatConnection, toTanStackConnection }) => {
      if (left) return;
      const headers = { authorization: `Bearer ${user}` };
      connection = createChatConnection({
        target: { url: `${LOG_API}/${encodeURIComponent(id)}`, headers },
        initialMessages: seed.messages,
        initialOffset: seed.offset ?? undefined,
        initialRunId: seed.activeRunId ?? undefined,
      });
      setAdapter(toTanStackConnection(connection, { api: CHAT_API, threadId: id, headers }));
    });
    return () => {
      left = true;
      connection?.dispose();
    };
  }, [id, user, seed]);

  return (
    <main>
      <h1>turnkeep + TanStack AI useChat</h1>
      <p data-testid="storage">
        Storage: {durable ? 'Redis (durable: survives a reload, a restart, another tab)' : 'in-memory, not durable (set REDIS_URL)'}
      </p>
      {adapter ? <LiveChat id={id} adapter={adapter} /> : <p data-testid="status">connecting</p>}
    </main>
  );
}

function LiveChat({ id, adapter }: { id: string; adapter: TanStackConnection }) {
  const { messages, status, error, sessionGenerating, pendingInterrupts, sendMessage, stop, addToolApprovalResponse } = useChat({
    // turnkeep types a chunk as the log's record (`{ type, ... }`); TanStack's as its event union.
    connection: adapter as unknown as SubscribeConnectionAdapter,
    threadId: id,
    persistence: true,
    live: true,
  });
  const busy = status === 'submitted' || status === 'streaming' || sessionGenerating;
  const waiting = pendingInterrupts.length > 0;
  const [text, setText] = useState('');
  const send = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim() || busy || waiting) return;
    void sendMessage(text);
    setText('');
  };
  return (
    <>
      <section data-testid="conversation">
        {messages.map((message) => (
          <article key={message.id} data-testid="message" data-role={message.role} data-id={message.id}>
            <strong>{message.role}</strong>
            {message.parts.map((part, i) => (
              <PartView key={i} part={part} onApproval={(approvalId, approved) => void addToolApprovalResponse({ id: approvalId, approved })} />
            ))}
          </article>
        ))}
        <p>
          status: <span data-testid="status">{busy ? 'busy' : status}</span>
        </p>
      </section>
      {error && <p data-testid="error" role="alert">{error.message}</p>}
      <form onSubmit={send}>
        <input data-testid="input" value={text} onChange={(e) => setText(e.target.value)} placeholder="/words 200, /confirm 42, /tool cats" size={40} />
        <button data-testid="send" type="submit" disabled={busy || waiting}>Send</button>
        <button
          data-testid="stop"
          type="button"
          disabled={!busy}
          onClick={() => {
            void adapter.stop(); // the turn, on the server, from any tab
            stop(); // this tab stops waiting for it
          }}
        >
          Stop
        </button>
      </form>
    </>
  );
}

type Part = UIMessage['parts'][number];

function PartView({ part, onApproval }: { part: Part; onApproval: (approvalId: string, approved: boolean) => void }) {
  if (part.type === 'text') return <p data-testid="text">{part.content}</p>;
  if (part.type !== 'tool-call') return null;
  return (
    <div data-testid="tool" data-state={part.state} style={{ border: '1px solid #ccc', padding: '0.5rem', margin: '0.5rem 0' }}>
      <code>
        {part.name}({part.arguments})
      </code>{' '}
      <em>{part.state}</em>
      {part.output !== undefined && <div data-testid="tool-output">→ {typeof part.output === 'string' ? part.output : JSON.stringify(part.output)}</div>}
      {part.state === 'approval-requested' && part.approval && (
        <div>
          <button data-testid="approve" onClick={() => onApproval(part.approval!.id, true)}>Approve</button>{' '}
          <button data-testid="reject" onClick={() => onApproval(part.approval!.id, false)}>Reject</button>
        </div>
      )}
    </div>
  );
}

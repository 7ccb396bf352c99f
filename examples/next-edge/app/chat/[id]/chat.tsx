'use client';
// The chat: the AI SDK's `useChat` over turnkeep's `TurnkeepChatTransport`. The server renders
// the conversation (page.tsx); once hydrated, the page opens its one connection to the
// session's log and mounts `useChat` on it:
//
// - a reload mid-answer resumes it (`resume: true`): the answer rebuilt from what the page was
//   given, then live, each word once;
// - a turn another tab started shows here (`onRemoteTurn` → `setMessages` + `resumeStream`);
// - Stop stops the turn on the server, wherever it was started (`transport.stop`: the AI SDK's
//   own `stop()` only disconnects this tab);
// - a tool that needs approval shows Approve / Deny (`addToolApprovalResponse`); the answer is
//   sent back by itself (`sendAutomaticallyWhen`) and the server runs the tool once;
// - a file attached goes with the message (`sendMessage({ text, files })`) and is stored.
import { useChat } from '@ai-sdk/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses, type ChatTransport, type UIMessage } from 'ai';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { ChatConnection, Message, TurnkeepChatTransport } from 'turnkeep/client';

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
  initialMessages: unknown[];
  seed: Seed;
  durable: boolean;
}

interface Live {
  connection: ChatConnection;
  transport: TurnkeepChatTransport;
}

export function ChatPage({ id, user, initialMessages, seed, durable }: Props) {
  const [live, setLive] = useState<Live | null>(null);
  useEffect(() => {
    // turnkeep/client loads its wasm in the browser only, after the first paint.
    let connection: ChatConnection | undefined;
    let left = false;
    void import('turnkeep/client').then(({ createChatConnection, TurnkeepChatTransport }) => {
      if (left) return;
      const headers = { authorization: `Bearer ${user}` };
      connection = createChatConnection({
        target: { url: `${LOG_API}/${encodeURIComponent(id)}`, headers },
        initialMessages: seed.messages,
        initialOffset: seed.offset ?? undefined,
        initialRunId: seed.activeRunId ?? undefined,
      });
      setLive({ connection, transport: new TurnkeepChatTransport({ connection, api: CHAT_API, headers }) });
    });
    return () => {
      left = true;
      connection?.dispose();
    };
  }, [id, user, seed]);

  return (
    <main>
      <h1>turnkeep + useChat</h1>
      <p data-testid="storage">
        Storage: {durable ? 'Redis (durable: survives a reload, a restart, another tab)' : 'in-memory, not durable (set REDIS_URL)'}
      </p>
      {live ? (
        <LiveChat id={id} transport={live.transport} initialMessages={initialMessages as UIMessage[]} />
      ) : (
        <Conversation messages={initialMessages as UIMessage[]} status="connecting" />
      )}
    </main>
  );
}

function LiveChat({ id, transport, initialMessages }: { id: string; transport: TurnkeepChatTransport; initialMessages: UIMessage[] }) {
  const { messages, status, error, sendMessage, setMessages, resumeStream, addToolApprovalResponse } = useChat({
    id,
    messages: initialMessages,
    // turnkeep's UIMessage type is the wire shape (parts as records); the AI SDK's is stricter.
    transport: transport as unknown as ChatTransport<UIMessage>,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    resume: true,
  });
  const busy = status === 'submitted' || status === 'streaming';
  const busyRef = useRef(busy);
  busyRef.current = busy;

  useEffect(
    () =>
      transport.onRemoteTurn(() => {
        if (busyRef.current) return; // already following a turn: this tab's own, or one it resumed
        setMessages(transport.messages() as unknown as UIMessage[]);
        void resumeStream();
      }),
    [transport, setMessages, resumeStream],
  );

  const [text, setText] = useState('');
  const files = useRef<HTMLInputElement>(null);
  const send = (event: FormEvent) => {
    event.preventDefault();
    const attached = files.current?.files;
    if (!text.trim() || busy) return;
    void sendMessage({ text, files: attached && attached.length > 0 ? attached : undefined });
    setText('');
    if (files.current) files.current.value = '';
  };

  return (
    <>
      <Conversation
        messages={messages}
        status={status}
        onApproval={(approvalId, approved) => void addToolApprovalResponse({ id: approvalId, approved })}
      />
      {error && <p data-testid="error" role="alert">{error.message}</p>}
      <form onSubmit={send}>
        <input data-testid="input" value={text} onChange={(e) => setText(e.target.value)} placeholder="/words 200, /confirm 42, /tool cats" size={40} />
        <input data-testid="file" type="file" ref={files} />
        <button data-testid="send" type="submit" disabled={busy}>Send</button>
        <button data-testid="stop" type="button" disabled={!busy} onClick={() => void transport.stop({ chatId: id })}>
          Stop
        </button>
      </form>
    </>
  );
}

type Part = UIMessage['parts'][number];
type ToolPart = Part & { type: `tool-${string}`; toolCallId: string; state: string; input?: unknown; output?: unknown; approval?: { id: string; approved?: boolean } };

function Conversation({ messages, status, onApproval }: { messages: UIMessage[]; status: string; onApproval?: (approvalId: string, approved: boolean) => void }) {
  return (
    <section data-testid="conversation" data-status={status}>
      {messages.map((message) => (
        <article key={message.id} data-testid="message" data-role={message.role} data-id={message.id}>
          <strong>{message.role}</strong>
          {message.parts.map((part, i) => (
            <PartView key={i} part={part} onApproval={onApproval} />
          ))}
        </article>
      ))}
      <p>
        status: <span data-testid="status">{status}</span>
      </p>
    </section>
  );
}

function PartView({ part, onApproval }: { part: Part; onApproval?: (approvalId: string, approved: boolean) => void }) {
  if (part.type === 'text') return <p data-testid="text">{part.text}</p>;
  if (part.type === 'file') return <p data-testid="attachment">📎 {part.filename ?? part.mediaType}</p>;
  if (!part.type.startsWith('tool-')) return null;
  const tool = part as ToolPart;
  return (
    <div data-testid="tool" data-state={tool.state} style={{ border: '1px solid #ccc', padding: '0.5rem', margin: '0.5rem 0' }}>
      <code>
        {tool.type.slice('tool-'.length)}({JSON.stringify(tool.input ?? {})})
      </code>{' '}
      <em>{tool.state}</em>
      {tool.output !== undefined && <div data-testid="tool-output">→ {String(tool.output)}</div>}
      {tool.state === 'approval-requested' && tool.approval && onApproval && (
        <div>
          <button data-testid="approve" onClick={() => onApproval(tool.approval!.id, true)}>Approve</button>{' '}
          <button data-testid="deny" onClick={() => onApproval(tool.approval!.id, false)}>Deny</button>
        </div>
      )}
    </div>
  );
}

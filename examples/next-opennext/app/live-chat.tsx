'use client';
// The conversation of one session, live, in the browser only (chat.tsx). It takes its seed
// from `GET /api/chat/sessions/:id` (the session log's projection), then follows the log with
// turnkeep/client's createChatConnection (one read of `GET /api/chat/stream/:id`, from the
// seed's offset), so a reload mid-answer shows the answer so far and the rest as it comes, and
// a turn sent from another tab shows too. Send posts the turn through the same connection; Stop
// asks the server to stop the running turn (whichever tab sent it), and the answer so far is
// kept. The user is `guest`.
import { useEffect, useState, type FormEvent } from 'react';
import type { ChatConnection, Message } from 'turnkeep/client';

const headers = { authorization: 'Bearer guest' };

export function LiveChat({ sessionId }: { sessionId: string }) {
  const [connection, setConnection] = useState<ChatConnection | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [status, setStatus] = useState('');
  const [input, setInput] = useState('');
  // The run going on in the session (from the log, so a turn another tab sent counts too).
  const [activeRunId, setActiveRunId] = useState<string | null>(null);
  // The run Stop was pressed for (it may send a chunk or two before it ends).
  const [stopping, setStopping] = useState<string | null>(null);

  useEffect(() => {
    let left = false;
    let opened: ChatConnection | undefined;
    void (async () => {
      // turnkeep/client loads its wasm in the browser only, after the first paint.
      const [{ createChatConnection }, seed] = await Promise.all([
        import('turnkeep/client'),
        fetch(`/api/chat/sessions/${encodeURIComponent(sessionId)}`, { headers }).then((r) => r.json()),
      ]);
      if (left) return;
      opened = createChatConnection({
        target: { url: `/api/chat/stream/${encodeURIComponent(sessionId)}`, chatUrl: '/api/chat', sessionId, headers },
        seed,
        authorize: false, // the Worker authorizes every request
      });
      const show = (snapshot: ReturnType<ChatConnection['snapshot']>) => {
        setMessages(snapshot.messages);
        setActiveRunId(snapshot.activeRunId);
      };
      show(opened.snapshot());
      setConnection(opened);
      for await (const _chunk of opened.subscribe()) show(opened.snapshot());
    })().catch((error) => setStatus(error?.code ?? String(error)));
    return () => {
      left = true;
      opened?.dispose();
    };
  }, [sessionId]);

  const send = (event: FormEvent) => {
    event.preventDefault();
    if (!connection || !input.trim()) return;
    const text = input;
    setInput('');
    setStatus('');
    connection.send(text).catch((error) => {
      setStatus(error?.code ?? String(error));
      // A refused send (one turn at a time per session) gives back what was typed, to send again.
      setInput((typed) => typed || text);
    });
  };

  const stop = () => {
    if (!connection || !activeRunId) return;
    setStopping(activeRunId);
    setStatus('');
    connection.stopTurn(activeRunId).catch((error) => {
      setStatus(error?.code ?? String(error));
      setStopping(null);
    });
  };

  return (
    <section data-ready={connection ? '1' : '0'}>
      <ul id="messages">
        {messages.filter((m) => m.role !== 'tool').map((m, i) => (
          <li key={i} data-role={m.role} data-status={m.status}>
            {m.role}: {typeof m.content === 'string' ? m.content : ''}
          </li>
        ))}
      </ul>
      <p id="status">{status}</p>
      <form onSubmit={send}>
        <input name="input" autoComplete="off" placeholder="Say something, or /words 40" value={input} onChange={(e) => setInput(e.target.value)} />
        <button disabled={!connection}>Send</button>
        <button type="button" id="stop" disabled={!activeRunId || activeRunId === stopping} onClick={stop}>
          Stop
        </button>
      </form>
    </section>
  );
}

// A loopback server that speaks the streaming wires of Anthropic's Messages API and OpenAI's
// Responses and chat completions APIs, replaying recorded responses (tests/js/fixtures/aisdk/),
// so the unchanged @ai-sdk/anthropic, @ai-sdk/openai and @ai-sdk/openai-compatible providers can
// be driven offline. It answers from the request: a tool call while the conversation holds no
// tool result, the text answer once it does (as a model would). Every request is recorded
// (`requests`: path, headers, parsed body) for the tests to check what the providers sent.
//
// Routes (the providers' own paths under a prefix per provider):
//   POST /anthropic/v1/messages            tool_use, then thinking + text
//   POST /anthropic-error/v1/messages      text, then an `error` event mid-stream
//   POST /openai/v1/responses              function_call, then text (Responses API)
//   POST /openai/v1/chat/completions       tool_calls, then text (chat completions)
//   POST /compatible/v1/chat/completions   the same recordings for @ai-sdk/openai-compatible;
//                                          the text at once when no tools are offered
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const fixture = (name) => readFileSync(new URL(`../js/fixtures/aisdk/${name}`, import.meta.url), 'utf8');

export const FIXTURES = {
  anthropicToolUse: fixture('anthropic-tool-use.sse'),
  anthropicThinkingText: fixture('anthropic-thinking-text.sse'),
  anthropicOverloaded: fixture('anthropic-overloaded-mid-stream.sse'),
  responsesFunctionCall: fixture('openai-responses-function-call.sse'),
  responsesText: fixture('openai-responses-text.sse'),
  chatToolCall: fixture('openai-chat-tool-call.sse'),
  chatText: fixture('openai-chat-text.sse'),
  workersAi: { toolCall: fixture('workers-ai-tool-call.sse'), text: fixture('workers-ai-text.sse') },
};

/** Which recorded response answers `body` on `path`, or null (404). */
function answer(path, body) {
  switch (path) {
    case '/anthropic/v1/messages': {
      const answered = body.messages.some((m) => Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_result'));
      return answered ? FIXTURES.anthropicThinkingText : FIXTURES.anthropicToolUse;
    }
    case '/anthropic-error/v1/messages':
      return FIXTURES.anthropicOverloaded;
    case '/openai/v1/responses':
      return body.input.some((item) => item.type === 'function_call_output') ? FIXTURES.responsesText : FIXTURES.responsesFunctionCall;
    case '/openai/v1/chat/completions':
      return body.messages.some((m) => m.role === 'tool') ? FIXTURES.chatText : FIXTURES.chatToolCall;
    case '/compatible/v1/chat/completions':
      return !body.tools || body.messages.some((m) => m.role === 'tool') ? FIXTURES.chatText : FIXTURES.chatToolCall;
    default:
      return null;
  }
}

/** Starts the server on a free port; `url` is its origin, `requests` what it received. */
export async function startFixtureServer() {
  const requests = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { text += chunk; });
    req.on('end', () => {
      let body = null;
      try {
        body = JSON.parse(text);
      } catch {
        // recorded as null; answered 400 below
      }
      requests.push({ path: req.url, headers: req.headers, body });
      const sse = body && answer(req.url, body);
      if (!sse) {
        res.writeHead(body ? 404 : 400, { 'content-type': 'application/json' }).end('{"error":{"message":"no fixture"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).end(sse);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

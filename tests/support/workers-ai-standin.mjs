// A STAND-IN for Cloudflare's Workers AI binding (`env.AI`), which has no offline emulator:
// an object with the one method workers-ai-provider calls, `run(model, inputs, options)`,
// answering a streaming request (`inputs.stream: true`) as the binding does, with a
// `ReadableStream` of SSE bytes in Workers AI's native format (`data: {"response": ...}`,
// `tool_calls`, `usage`, then `data: [DONE]`). The bytes are recorded responses
// (tests/js/fixtures/aisdk/workers-ai-*.sse): a tool call while the conversation has no tool
// result yet, the text answer once it has one. Every call is recorded (`calls`), so a test can
// check what the provider sent. Runtime-neutral: used in Node and inside workerd.

/** `fixtures`: `{ toolCall, text }`, the SSE texts. */
export function createStandInAi(fixtures) {
  const calls = [];
  return {
    kind: 'stand-in for the Workers AI binding (env.AI); not the real service',
    calls,
    async run(model, inputs, options = {}) {
      calls.push({ model, inputs: JSON.parse(JSON.stringify(inputs)), hasSignal: options.signal instanceof AbortSignal });
      if (inputs.stream !== true) throw new Error('the stand-in only answers streaming requests');
      const answered = inputs.messages.some((m) => m.role === 'tool');
      const bytes = new TextEncoder().encode(answered ? fixtures.text : fixtures.toolCall);
      return new ReadableStream({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      });
    },
  };
}

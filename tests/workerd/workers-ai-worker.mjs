// The demo Worker (js/cloudflare/worker.mjs, unchanged) with a STAND-IN for its Workers AI
// binding: `env.AI` is tests/support/workers-ai-standin.mjs's object (the one method
// workers-ai-provider calls, `run`, streaming the recorded SSE bytes of env.WORKERS_AI_FIXTURES),
// because Workers AI has no offline emulator. `GET /__standin/ai-calls` answers with what the
// provider asked the binding.
import worker, { ChatSession, SessionStream } from '../../js/cloudflare/worker.mjs';
import { createStandInAi } from '../support/workers-ai-standin.mjs';

export { ChatSession, SessionStream };

let ai;
let withAi;

export default {
  fetch(request, env, ctx) {
    ai ??= createStandInAi(JSON.parse(env.WORKERS_AI_FIXTURES));
    withAi ??= Object.create(env, { AI: { value: ai } });
    if (new URL(request.url).pathname === '/__standin/ai-calls') return Response.json(ai.calls);
    return worker.fetch(request, withAi, ctx);
  },
};

// A test Worker that mounts createChatStreamProxy in front of an upstream outside workerd (a
// loopback server the test runs, at env.UPSTREAM_URL), so the test can watch what reaches the
// upstream and when the upstream connection closes.
import { createChatStreamProxy } from '../../js/workerd.mjs';

// The demo Worker's Durable Object classes (wrangler.toml binds them; unused here).
export { ChatSession, SessionStream } from '../../js/cloudflare/worker.mjs';

let proxy;

export default {
  fetch(request, env) {
    proxy ??= createChatStreamProxy({
      // /api/chat/stream/<path> → UPSTREAM_URL/<path>, query kept by the proxy.
      target: (req) => `${env.UPSTREAM_URL}${new URL(req.url).pathname.replace('/api/chat/stream', '')}`,
      auth: { authorization: 'Bearer server-streams-token' },
    });
    return proxy(request);
  },
};

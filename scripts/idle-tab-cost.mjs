// What open, idle chat tabs cost a Cloudflare account in Durable Object compute, before (each
// page re-opens an SSE read every STREAMS_SSE_MS) and after (each page holds one hibernatable
// WebSocket): an estimate on paper from Cloudflare's published prices, the one place these
// figures live (README "Idle tabs" and tests/workerd/hibernate.test.mjs print it).
//
// Prices: https://developers.cloudflare.com/durable-objects/platform/pricing/ (Workers Paid):
// requests $0.15 per million (HTTP requests, RPC sessions and WebSocket messages; incoming
// WebSocket messages billed 20:1, outgoing free), duration $12.50 per million GB-s, billed at
// 128 MB per object "while the Durable Object is actively running or is idle in memory but unable
// to hibernate"; "Durable Objects that are idle and eligible for hibernation are not billed for
// duration". The monthly allowances (1 million requests, 400,000 GB-s) are left out: they are the
// same before and after, and small beside 10,000 tabs.
//
// Run: `node scripts/idle-tab-cost.mjs [tabs] [hours]` (default 10,000 tabs for 24 hours).

export const PRICES = {
  source: 'https://developers.cloudflare.com/durable-objects/platform/pricing/',
  requestUsdPerMillion: 0.15,
  durationUsdPerMillionGbS: 12.5,
  objectGb: 0.128,
  incomingMessagesPerBilledRequest: 20,
};

/** The SSE read's lifetime (src/core/limits.rs `STREAM_SSE_CONNECTION_MS_MAX`, the default). */
export const SSE_READ_MS = 60_000;

/**
 * `{ before, after }` for `tabs` idle tabs over `hours`, each tab on its own session (one object
 * per tab: the worst case; tabs sharing a session share its object's duration). Each side:
 * `{ requests, gbSeconds, usd }`. `reconnectsPerTabHour`: socket reconnects after a network drop
 * (each one request), 0 on a steady network.
 */
export function idleTabCost({ tabs = 10_000, hours = 24, sseReadMs = SSE_READ_MS, reconnectsPerTabHour = 0 } = {}) {
  const seconds = hours * 3600;
  const usd = ({ requests, gbSeconds }) =>
    (requests / 1e6) * PRICES.requestUsdPerMillion + (gbSeconds / 1e6) * PRICES.durationUsdPerMillionGbS;
  // Before: an open SSE response is a request in flight, so the object can never hibernate: it
  // is billed for the whole time, and every read's end opens the next (one request each).
  const before = {
    requests: tabs * Math.ceil((seconds * 1000) / sseReadMs),
    gbSeconds: tabs * seconds * PRICES.objectGb,
  };
  // After: one request opens the socket; the object runs nothing between appends (it sends no
  // keep-alive and the page sends nothing), so it is eligible for hibernation the whole time.
  const after = {
    requests: tabs * (1 + Math.ceil(hours * reconnectsPerTabHour)),
    gbSeconds: 0,
  };
  return { tabs, hours, before: { ...before, usd: usd(before) }, after: { ...after, usd: usd(after) } };
}

/** The estimate as the lines of a small table. */
export function costTable(estimate) {
  const money = (n) => `$${n.toFixed(n < 1 ? 4 : 2)}`;
  const row = (name, side) =>
    `| ${name} | ${side.requests.toLocaleString('en-US')} | ${side.gbSeconds.toLocaleString('en-US')} | ${money(side.usd)} |`;
  return [
    `${estimate.tabs.toLocaleString('en-US')} idle tabs for ${estimate.hours} h (prices: ${PRICES.source})`,
    '| live reads | DO requests | DO duration (GB-s) | cost |',
    '|---|---:|---:|---:|',
    row('SSE, re-opened every 60 s (before)', estimate.before),
    row('hibernatable WebSocket (after)', estimate.after),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [tabs, hours] = process.argv.slice(2).map(Number);
  const estimate = idleTabCost({ tabs: tabs || undefined, hours: hours || undefined });
  console.log(costTable(estimate).join('\n'));
  console.log(costTable(idleTabCost({ tabs: tabs || undefined, hours: hours || undefined, reconnectsPerTabHour: 1 }))
    .slice(4).join('\n').replace('(after)', '(after, one reconnect per tab-hour)'));
}

// The public Durable Streams conformance suite (@durable-streams/server-conformance-tests), run
// against the Worker at STREAMS_BASE_URL (scripts/streams-conformance.sh starts it on workerd).
import { runConformanceTests } from '@durable-streams/server-conformance-tests';

runConformanceTests({ baseUrl: process.env.STREAMS_BASE_URL ?? 'http://127.0.0.1:8787' });

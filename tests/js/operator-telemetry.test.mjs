// The chat handler's telemetry hooks, against the built package.
//
// `onMetric(record)`: each ended turn's metrics (turn::metrics: duration, time to first chunk,
// model calls, tool calls, approvals asked, tokens), ids and numbers only.
//
// `tracer`: a real `@opentelemetry/api` Tracer from `@opentelemetry/sdk-trace` with an
// InMemorySpanExporter. Each ended turn is one `invoke_agent` span with a span under it for each
// model call (`chat`), tool run (`execute_tool`) and approval, gen_ai.* attributes, at the
// times the handler's clock (`now`) said (turn::spans decides them; the shell only records).
//
// Isolation: an observer (onTurnEnd, onMetric, the tracer) that throws, rejects or never
// settles, and an onError that throws or rejects, never breaks or delays a turn: the answer is
// whole and on time, the turn's waitUntil promise settles, an observer's fault reaches onError
// with its stage, and nothing is an unhandled rejection.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';

import * as pkg from '../../js/node.mjs';
import { demoSetup, readTurn, sleep, submitEvent } from '../support/chat-harness.mjs';

/** A clock far from today's (2001), one millisecond further at each reading. */
const T0 = 1_000_000_000_000;

function setup(options = {}, chat = {}) {
  const clock = { now: T0 };
  const faults = [];
  const pending = [];
  const host = { waitUntil: (promise) => pending.push(promise) };
  const env = demoSetup(pkg, {
    options: {
      now: () => ++clock.now,
      onError: (error, info) => faults.push({ stage: info.stage, turnId: info.turnId, message: String(error?.message ?? error) }),
      ...options,
    },
    chat,
  });
  const post = async (event) => {
    const started = Date.now();
    const response = await env.handler(
      new Request('http://local/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) }),
      host,
    );
    assert.equal(response.status, 200);
    const turn = await readTurn(pkg, response);
    return { turn, ms: Date.now() - started };
  };
  const send = (turnId, input) => post(submitEvent({ sessionId: 's1', turnId, input }));
  /** Every turn's own promise (waitUntil) settled, within `ms`. */
  const settled = (ms = 1_000) =>
    Promise.race([Promise.all(pending.splice(0)).then(() => true), sleep(ms).then(() => false)]);
  return { ...env, clock, faults, post, send, settled };
}

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return { exporter, provider, tracer: provider.getTracer('turnkeep-test') };
}

const ms = ([s, ns]) => s * 1000 + Math.round(ns / 1e6);

test('onMetric: every ended turn sends its metrics, with ids and numbers and no text', async () => {
  const metrics = [];
  const env = setup({ onMetric: (record) => { metrics.push(record); } });
  await env.send('t1', 'hello there');
  await env.send('t2', '/tool cats');
  assert.equal(await env.settled(), true);
  const names = ['turn.duration_ms', 'turn.first_chunk_ms', 'model.calls', 'tool.calls', 'approval.requested', 'usage.input_tokens', 'usage.output_tokens', 'usage.total_tokens'];
  assert.deepEqual(metrics.map((m) => m.name), [...names, ...names]);
  const of = (turnId, name) => metrics.find((m) => m.turnId === turnId && m.name === name);
  assert.deepEqual(
    Object.keys(of('t1', 'model.calls')).sort(),
    ['emittedAt', 'name', 'outcome', 'protocol', 'sessionId', 'turnId', 'unit', 'value', 'version'],
  );
  assert.deepEqual(
    ['t1', 't2'].map((t) => [of(t, 'model.calls').value, of(t, 'tool.calls').value]),
    [[1, 0], [2, 1]],
    'one model call for an answer; two and a tool run for a lookup',
  );
  const units = { 'turn.duration_ms': 'ms', 'turn.first_chunk_ms': 'ms', 'model.calls': 'count', 'tool.calls': 'count', 'approval.requested': 'count' };
  for (const m of metrics) {
    assert.equal(m.protocol, 'turnkeep.chat.turn-metric');
    assert.equal(m.version, 1);
    assert.equal(m.sessionId, 's1');
    assert.equal(m.outcome, 'ok');
    assert.equal(m.unit, units[m.name] ?? 'tokens', m.name);
    const emitted = Date.parse(m.emittedAt);
    assert.ok(emitted > T0 && emitted <= env.clock.now, `emittedAt is the handler's clock: ${m.emittedAt}`);
  }
  assert.ok(of('t1', 'turn.duration_ms').value > 0);
  assert.ok(of('t1', 'turn.first_chunk_ms').value <= of('t1', 'turn.duration_ms').value);
  assert.equal(of('t1', 'usage.input_tokens').value, 2, 'the demo counts the words of the input');
  assert.doesNotMatch(JSON.stringify(metrics), /hello|echo|cats|result for/, 'no message text');
  assert.deepEqual(env.faults, []);
});

test('tracer: the turn, each model call, tool run and approval, with gen_ai attributes, under the turn, at the handler\'s times', async () => {
  const { exporter, provider, tracer } = tracing();
  const env = setup({ tracer });
  await env.send('t1', '/tool cats');
  assert.equal(await env.settled(), true);
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const byStart = [...spans].sort((a, b) => ms(a.startTime) - ms(b.startTime) || (a.parentSpanContext ? 1 : -1));
  assert.deepEqual(byStart.map((s) => s.name), ['invoke_agent demo', 'chat demo', 'execute_tool lookup', 'chat demo']);
  const [turn, ...children] = byStart;
  assert.equal(turn.parentSpanContext, undefined, 'the turn is a root here (no active span)');
  assert.equal(turn.kind, SpanKind.INTERNAL);
  for (const child of children) {
    assert.equal(child.parentSpanContext?.spanId, turn.spanContext().spanId, `${child.name} is under the turn`);
    assert.equal(child.spanContext().traceId, turn.spanContext().traceId);
    assert.ok(ms(child.startTime) >= ms(turn.startTime) && ms(child.endTime) <= ms(turn.endTime), child.name);
  }
  assert.ok(ms(turn.startTime) > T0 && ms(turn.endTime) <= env.clock.now, 'times from the handler\'s clock, not the wall');
  assert.ok(ms(turn.endTime) > ms(turn.startTime));
  assert.deepEqual(children.map((s) => s.kind), [SpanKind.CLIENT, SpanKind.INTERNAL, SpanKind.CLIENT]);
  assert.deepEqual(
    { ...turn.attributes },
    {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'demo',
      'gen_ai.conversation.id': 's1',
      'gen_ai.provider.name': 'turnkeep',
      'gen_ai.request.model': 'demo',
      'gen_ai.usage.input_tokens': 4,
      'gen_ai.usage.output_tokens': turn.attributes['gen_ai.usage.output_tokens'],
      'gen_ai.response.finish_reasons': ['stop'],
      'turnkeep.turn.id': 't1',
      'turnkeep.turn.outcome': 'completed',
    },
  );
  const [firstCall, lookup] = children;
  assert.equal(firstCall.attributes['gen_ai.operation.name'], 'chat');
  assert.deepEqual(firstCall.attributes['gen_ai.response.finish_reasons'], ['tool_calls']);
  assert.deepEqual(
    { op: lookup.attributes['gen_ai.operation.name'], name: lookup.attributes['gen_ai.tool.name'], type: lookup.attributes['gen_ai.tool.type'] },
    { op: 'execute_tool', name: 'lookup', type: 'function' },
  );
  assert.match(lookup.attributes['gen_ai.tool.call.id'], /\S/);
  assert.doesNotMatch(JSON.stringify(spans.map((s) => s.attributes)), /cats|result for/, 'no arguments, results or text');
  for (const span of spans) assert.equal(span.status.code, SpanStatusCode.UNSET, span.name);
});

test('tracer: an approval asked for, then approved; a failed model call is an error span', async () => {
  const { exporter, provider, tracer } = tracing();
  const env = setup({ tracer });
  const asked = await env.send('t1', '/confirm 250');
  const [record] = asked.turn.snapshots.at(-1).payload.confirmations;
  await env.post({
    ...submitEvent({ sessionId: 's1', turnId: 't1' }),
    eventId: 'e-approve',
    event: 'client.confirmation.resolve',
    payload: { token: record.token, decision: 'approve' },
  });
  await env.send('t2', '/fail');
  assert.equal(await env.settled(), true);
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const approvals = spans.filter((s) => s.name === 'approval transfer');
  assert.deepEqual(approvals.map((s) => s.attributes['turnkeep.approval.decision']), ['pending', 'approved']);
  for (const approval of approvals) {
    assert.equal(approval.attributes['gen_ai.tool.call.id'], record.toolCallId);
    assert.equal(approval.attributes['gen_ai.tool.name'], 'transfer');
  }
  assert.equal(spans.filter((s) => s.name === 'execute_tool transfer').length, 1, 'the tool ran once, after the approval');
  const failed = spans.filter((s) => s.status.code === SpanStatusCode.ERROR);
  assert.deepEqual(
    failed.map((s) => [s.name, s.attributes['error.type']]).sort(),
    [['chat demo', 'model_error'], ['invoke_agent demo', 'error']],
  );
  const failedTurn = failed.find((s) => s.name === 'invoke_agent demo');
  assert.equal(failedTurn.attributes['turnkeep.turn.id'], 't2');
  assert.equal(failed.find((s) => s.name === 'chat demo').parentSpanContext.spanId, failedTurn.spanContext().spanId);
  assert.deepEqual(env.faults.map((f) => f.stage), ['model'], 'the model\'s own fault, nothing from the tracer');
});

test('tracer: an AI SDK model names its provider and model, and its usage and finish reason are the call\'s', async () => {
  const { exporter, provider, tracer } = tracing();
  const parts = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: 'Hi.' },
    { type: 'text-end', id: 't1' },
    { type: 'finish', finishReason: { unified: 'length', raw: 'max_tokens' }, usage: { inputTokens: { total: 7, noCache: 7 }, outputTokens: { total: 3, text: 3 } } },
  ];
  const model = new MockLanguageModelV4({ provider: 'anthropic.messages', modelId: 'claude-test', doStream: [{ stream: convertArrayToReadableStream(parts) }] });
  const env = setup({ tracer }, { model });
  await env.send('t1', 'hello');
  assert.equal(await env.settled(), true);
  await provider.forceFlush();
  const call = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT);
  assert.equal(call.name, 'chat claude-test');
  assert.deepEqual(
    [call.attributes['gen_ai.provider.name'], call.attributes['gen_ai.request.model'], call.attributes['gen_ai.usage.input_tokens'], call.attributes['gen_ai.usage.output_tokens'], call.attributes['gen_ai.response.finish_reasons']],
    ['anthropic', 'claude-test', 7, 3, ['length']],
  );
});

test('an observer that throws, rejects or never settles, or an onError that does, never breaks or delays a turn', async () => {
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const never = () => new Promise(() => {});
  const boom = () => { throw new Error('observer down'); };
  const reject = () => Promise.reject(new Error('observer down'));
  const badTracer = (span) => ({ startSpan: () => span() });
  const okSpan = () => ({ setStatus() {}, end() {} });
  const cases = [
    ['onTurnEnd throws', { onTurnEnd: boom }, ['onTurnEnd']],
    ['onTurnEnd rejects', { onTurnEnd: reject }, ['onTurnEnd']],
    ['onTurnEnd never settles', { onTurnEnd: never }, []],
    ['onMetric throws (once per turn)', { onMetric: boom }, ['onMetric']],
    ['onMetric rejects (each record)', { onMetric: reject }, Array(8).fill('onMetric')],
    ['onMetric never settles', { onMetric: never }, []],
    ['tracer.startSpan throws', { tracer: badTracer(boom) }, ['tracer']],
    ['span.end throws', { tracer: badTracer(() => ({ ...okSpan(), end: boom })) }, ['tracer']],
    ['startSpan returns a promise that never settles', { tracer: { startSpan: never } }, ['tracer']],
    ['onError throws', { onTurnEnd: boom, onError: boom }, null],
    ['onError rejects', { onTurnEnd: boom, onMetric: reject, onError: reject }, null],
    ['onError never settles', { onTurnEnd: boom, onError: never }, null],
  ];
  try {
    for (const [name, hooks, stages] of cases) {
      const env = setup(hooks);
      const { turn, ms: took } = await env.send('t1', 'hello there');
      assert.deepEqual(turn.faults, [], name);
      assert.equal(turn.snapshots.at(-1).payload.status, 'complete', name);
      assert.match(JSON.stringify(turn.snapshots.at(-1).payload.messages), /echo: hello there/, name);
      assert.ok(took < 2_000, `${name}: the answer took ${took} ms`);
      assert.equal(await env.settled(), true, `${name}: the turn's own promise settled`);
      await sleep(20); // rejections are reported when they happen
      if (stages) {
        assert.deepEqual(env.faults.map((f) => f.stage), stages, name);
        for (const fault of env.faults) {
          assert.equal(fault.turnId, 't1', name);
        }
      }
      const again = await env.send('t2', 'again');
      assert.match(JSON.stringify(again.turn.snapshots.at(-1).payload.messages), /echo: again/, `${name}: the next turn runs`);
    }
    await sleep(20);
    assert.deepEqual(unhandled.map(String), [], 'no unhandled rejection');
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('a tracer option that is not a Tracer is a configuration error', () => {
  assert.throws(
    () => pkg.createChatHandler({ resolveDefinition: () => undefined, sessionStorage: () => undefined, tracer: {} }),
    (error) => error.code === 'SERVER_INVALID_CONFIG' && /tracer must be an OpenTelemetry Tracer/.test(error.message),
  );
});

//! `toChatResponse`'s writer on the host (`turn::external`), over the in-memory store log in the
//! simulated world: what it writes (echoes, one native batch with the complete state, the
//! source's chunks sanitized), producer fencing (seq = index in the turn, at most 5 appends in
//! flight, a replay appends only what is missing, a stale epoch stores nothing), and failures.
#![cfg(not(target_arch = "wasm32"))]

mod turn_support;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::{json, Value};
use turn_support::{block_on, SimSleep, World};
use turnkeep::core::projection::native::{read_new_messages, MessageShape};
use turnkeep::core::projection::Projection;
use turnkeep::ports::log::{AppendAck, LogError, LogRead, ProducerStamp, ReadFrom, SessionLog};
use turnkeep::ports::{CancelToken, LocalFuture, PortError};
use turnkeep::storage::{MemoryLogStore, StoreLog};
use turnkeep::turn::external::{ChunkSource, ResponseError, ResponseWriter};
use turnkeep::turn::send::Producer;

/// A log over the memory store that records every append, counts appends in flight (each takes
/// 5 ms of virtual time) and can refuse appends from a seq on (an executor that died there).
struct Recording {
    inner: StoreLog<MemoryLogStore>,
    store: MemoryLogStore,
    sleep: SimSleep,
    in_flight: Cell<usize>,
    in_flight_max: Cell<usize>,
    stamps: RefCell<Vec<(Option<ProducerStamp>, usize)>>,
    die_at_seq: Cell<Option<u64>>,
    /// Gives item seqs when asked (turnkeep's logs do); off: the protocol as written.
    item_seqs: bool,
}

impl Recording {
    fn new(world: &Rc<World>) -> Rc<Self> {
        Self::with_item_seqs(world, true)
    }

    fn with_item_seqs(world: &Rc<World>, item_seqs: bool) -> Rc<Self> {
        let store = MemoryLogStore::new();
        Rc::new(Self {
            inner: StoreLog::new(store.clone(), Rc::new(SimSleep(world.clone()))),
            store,
            sleep: SimSleep(world.clone()),
            in_flight: Cell::new(0),
            in_flight_max: Cell::new(0),
            stamps: RefCell::default(),
            die_at_seq: Cell::new(None),
            item_seqs,
        })
    }

    fn chunks(&self) -> Vec<Value> {
        self.store.chunks()
    }
}

impl SessionLog for Recording {
    fn append<'a>(
        &'a self,
        chunks: &'a [String],
        producer: Option<&'a ProducerStamp>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<AppendAck, LogError>> {
        Box::pin(async move {
            let stamp = producer.map(|p| ProducerStamp {
                item_seqs: p.item_seqs && self.item_seqs,
                ..p.clone()
            });
            if let (Some(p), Some(die)) = (&stamp, self.die_at_seq.get()) {
                if p.seq + chunks.len() as u64 > die {
                    return Err(LogError::Failed(PortError::new("executor died")));
                }
            }
            self.stamps.borrow_mut().push((stamp.clone(), chunks.len()));
            self.in_flight.set(self.in_flight.get() + 1);
            self.in_flight_max
                .set(self.in_flight_max.get().max(self.in_flight.get()));
            turnkeep::ports::chat::Sleep::sleep(&self.sleep, 5).await;
            self.in_flight.set(self.in_flight.get() - 1);
            self.inner.append(chunks, stamp.as_ref(), cancel).await
        })
    }

    fn read<'a>(
        &'a self,
        from: ReadFrom<'a>,
        wait_ms: u64,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<LogRead, LogError>> {
        self.inner.read(from, wait_ms, cancel)
    }
}

/// A source of fixed chunks; fails after `fail_after` chunks when set.
struct Chunks {
    items: Vec<Value>,
    at: Cell<usize>,
    fail_after: Option<usize>,
    stopped: Cell<bool>,
}

impl Chunks {
    fn new(items: Vec<Value>) -> Self {
        Self {
            items,
            at: Cell::new(0),
            fail_after: None,
            stopped: Cell::new(false),
        }
    }
}

impl ChunkSource for Chunks {
    fn next(&self) -> LocalFuture<'_, Option<Result<Value, PortError>>> {
        Box::pin(async move {
            let at = self.at.get();
            if self.fail_after == Some(at) {
                return Some(Err(PortError::new("model stream broke")));
            }
            self.at.set(at + 1);
            self.items.get(at).cloned().map(Ok)
        })
    }
    fn stop(&self) {
        self.stopped.set(true);
    }
}

/// A TanStack (0.58 dialect) assistant answer with a tool call and its result.
fn assistant_chunks() -> Vec<Value> {
    vec![
        json!({"type":"RUN_STARTED","runId":"run-1","threadId":"s1","timestamp":1}),
        json!({"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant","timestamp":2}),
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Let me ","content":"Let me ","timestamp":3}),
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"check.","content":"Let me check.","timestamp":4}),
        json!({"type":"TOOL_CALL_START","toolCallId":"call_1","toolCallName":"lookup","parentMessageId":"a1","timestamp":5}),
        json!({"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"{\"q\":\"x\"}","timestamp":6}),
        json!({"type":"TOOL_CALL_END","toolCallId":"call_1","input":{"q":"x"},"timestamp":7}),
        json!({"type":"TEXT_MESSAGE_END","messageId":"a1","timestamp":8}),
        json!({"type":"TOOL_CALL_RESULT","messageId":"a1","toolCallId":"call_1","content":"found x","role":"tool","timestamp":9}),
        json!({"type":"RUN_FINISHED","runId":"run-1","threadId":"s1","timestamp":10}),
    ]
}

fn user_message() -> Value {
    json!({
        "id": "u1", "role": "user",
        "parts": [
            {"type": "text", "content": "hello "},
            {"type": "image", "source": {"type": "url", "value": "https://example.test/cat.png"}},
            {"type": "future-part", "opaque": {"kept": [1, 2, 3]}},
            {"type": "text", "content": "there"}
        ],
        "metadata": {"tenant": "t1", "tanstack": {"model": "client"}}
    })
}

fn writer(log: &Rc<Recording>, world: &Rc<World>, producer: Option<Producer>) -> ResponseWriter {
    ResponseWriter::new(
        log.clone() as Rc<dyn SessionLog>,
        Rc::new(SimSleep(world.clone())),
        producer,
    )
}

fn producer(epoch: u64) -> Option<Producer> {
    Some(Producer {
        id: "chat-turn:s1:t1".into(),
        epoch,
    })
}

/// Writes `new` and `source` as one response; the result of `pipe` (or of `open` when it failed).
fn respond(
    world: &Rc<World>,
    log: &Rc<Recording>,
    producer: Option<Producer>,
    new: &[Value],
    source: &Chunks,
) -> Result<u64, ResponseError> {
    let mut n = 0;
    let new = read_new_messages(new, &mut || {
        n += 1;
        format!("gen-{n}")
    })
    .expect("valid messages");
    let writer = writer(log, world, producer);
    block_on(world, async {
        let first = writer.open(&new, 1_000, &CancelToken::new()).await?;
        writer.pipe(source, first).await
    })
}

fn projected(chunks: &[Value]) -> Projection {
    let mut projection = Projection::new();
    projection.feed_all(chunks);
    projection
}

#[test]
fn writes_echoes_then_one_native_batch_then_the_sanitized_source() {
    let world = World::new();
    let log = Recording::new(&world);
    let source = Chunks::new(assistant_chunks());
    let r = respond(&world, &log, None, &[user_message()], &source);
    assert!(matches!(r, Ok(10)), "{r:?}");
    let chunks = log.chunks();
    let types: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(
        &types[..4],
        [
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "MESSAGES_SNAPSHOT"
        ]
    );
    assert_eq!(chunks[0]["model"], "client");
    assert_eq!(chunks[1]["delta"], "hello there");
    assert_eq!(
        chunks[3]["messages"],
        json!([user_message()]),
        "the native message, whole"
    );
    assert_eq!(chunks.len(), 4 + 10);
    for chunk in &chunks[4..] {
        if chunk["type"] == "TEXT_MESSAGE_CONTENT" {
            assert!(
                chunk.get("content").is_none(),
                "content is dropped like the transport does"
            );
        }
    }
    let projection = projected(&chunks);
    let native = projection.native_messages();
    assert_eq!(
        native[0],
        user_message(),
        "opaque parts and metadata survive"
    );
    let ids: Vec<String> = projection.messages().map(|m| m.id.clone()).collect();
    assert_eq!(
        ids,
        ["u1", "a1", "tool-call_1"],
        "the result as a canonical tool message"
    );
    assert_eq!(native.len(), 2, "natively the result is a part of a1");
    let answer = projection.messages().nth(1).unwrap().clone();
    assert_eq!(answer.content, "Let me check.");
    let call = &answer.tool_calls.unwrap()[0];
    assert_eq!(
        (call.name.as_str(), call.result.as_deref()),
        ("lookup", Some("found x"))
    );
    // Unfenced: the echoes and the batch went out together, then one append at a time.
    assert!(log.stamps.borrow().iter().all(|(stamp, _)| stamp.is_none()));
    assert_eq!(log.in_flight_max.get(), 1);
}

#[test]
fn the_native_batch_holds_the_complete_state_and_reconciles_ids() {
    let world = World::new();
    let log = Recording::new(&world);
    let first = Chunks::new(assistant_chunks());
    respond(&world, &log, None, &[user_message()], &first).unwrap();
    // The second turn resends u1 (changed metadata) and adds u2: no id twice, u1 in place.
    let mut again = user_message();
    again["metadata"] = json!({"edited": true});
    let second = Chunks::new(vec![]);
    let plain = json!({"id": "u2", "role": "user", "content": "and now?"});
    respond(&world, &log, None, &[again.clone(), plain], &second).unwrap();
    let chunks = log.chunks();
    let batch = chunks
        .iter()
        .rev()
        .find(|c| c["type"] == "MESSAGES_SNAPSHOT")
        .unwrap();
    let ids: Vec<&str> = batch["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["u1", "a1", "u2"]);
    assert_eq!(batch["messages"][0], again);
    let a1 = &batch["messages"][1];
    let kinds: Vec<&str> = a1["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["text", "tool-call", "tool-result"],
        "history as TanStack UI messages"
    );
    let projection = projected(&chunks);
    let ids: Vec<String> = projection.messages().map(|m| m.id.clone()).collect();
    assert_eq!(ids, ["u1", "a1", "u2"]);
    assert_eq!(projection.messages().nth(2).unwrap().content, "and now?");
}

#[test]
fn fenced_each_chunk_is_its_own_batch_with_its_index_at_most_five_in_flight() {
    let world = World::new();
    let log = Recording::with_item_seqs(&world, false);
    let many: Vec<Value> = (0..40)
        .map(|i| json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":format!("w{i} ")}))
        .collect();
    let source = Chunks::new(many);
    let r = respond(&world, &log, producer(3), &[user_message()], &source);
    assert!(matches!(r, Ok(40)), "{r:?}");
    let stamps = log.stamps.borrow();
    assert!(stamps.iter().all(|(_, n)| *n == 1), "one chunk per append");
    let mut seqs: Vec<u64> = stamps
        .iter()
        .map(|(s, _)| s.as_ref().unwrap().seq)
        .collect();
    seqs.sort_unstable();
    seqs.dedup(); // an append that overtook an earlier one was retried after it
    assert_eq!(
        seqs,
        (0..44).collect::<Vec<_>>(),
        "3 echoes + 1 batch + 40 chunks"
    );
    assert!(stamps.iter().all(|(s, _)| s.as_ref().unwrap().epoch == 3));
    assert_eq!(log.in_flight_max.get(), 5);
    assert_eq!(log.chunks().len(), 44);
}

/// The chunk seqs of every append that reached the log: `seq..seq + n` with item seqs, `seq`
/// for a one-chunk batch; each seq once (an append retried after an overtaking one counted once).
fn chunk_seqs(stamps: &[(Option<ProducerStamp>, usize)]) -> Vec<u64> {
    let mut seqs: Vec<u64> = stamps
        .iter()
        .flat_map(|(s, n)| {
            let s = s.as_ref().unwrap();
            assert!(s.item_seqs || *n == 1, "several chunks, one seq: {s:?}");
            s.seq..s.seq + *n as u64
        })
        .collect();
    seqs.sort_unstable();
    seqs.dedup();
    seqs
}

#[test]
fn with_item_seqs_a_burst_is_one_append_and_every_chunk_keeps_its_seq() {
    let world = World::new();
    let log = Recording::new(&world);
    let many: Vec<Value> = (0..40)
        .map(|i| json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":format!("w{i} ")}))
        .collect();
    let r = respond(
        &world,
        &log,
        producer(3),
        &[user_message()],
        &Chunks::new(many),
    );
    assert!(matches!(r, Ok(40)), "{r:?}");
    let stamps = log.stamps.borrow();
    // The same seq for each chunk as one chunk per append gives (the test above).
    assert_eq!(chunk_seqs(&stamps), (0..44).collect::<Vec<_>>());
    assert_eq!(
        stamps[0].1, 1,
        "the first append alone: its ack tells item seqs"
    );
    assert!(
        stamps.len() < 44 / 2,
        "{} appends for 44 chunks",
        stamps.len()
    );
    assert_eq!(log.in_flight_max.get(), 1, "one append at a time");
    assert_eq!(log.chunks().len(), 44);
}

#[test]
fn a_replay_under_the_same_producer_appends_only_what_is_missing() {
    for item_seqs in [false, true] {
        replay_appends_only_what_is_missing(item_seqs);
    }
}

fn replay_appends_only_what_is_missing(item_seqs: bool) {
    let world = World::new();
    // The uninterrupted run, for comparison.
    let whole = Recording::with_item_seqs(&world, item_seqs);
    respond(
        &world,
        &whole,
        producer(1),
        &[user_message()],
        &Chunks::new(assistant_chunks()),
    )
    .unwrap();

    let log = Recording::with_item_seqs(&world, item_seqs);
    log.die_at_seq.set(Some(9)); // the first executor stored seqs 0..=8, then died
    let died = respond(
        &world,
        &log,
        producer(1),
        &[user_message()],
        &Chunks::new(assistant_chunks()),
    );
    assert!(
        matches!(died, Err(ResponseError::Log(LogError::Failed(_)))),
        "{died:?}"
    );
    let stored = log.chunks().len();
    assert!(
        (4..=9).contains(&stored),
        "the echoes, the batch and a few chunks: {stored}"
    );
    log.die_at_seq.set(None);
    let replay = respond(
        &world,
        &log,
        producer(1),
        &[user_message()],
        &Chunks::new(assistant_chunks()),
    );
    assert!(matches!(replay, Ok(10)), "{replay:?}");
    let strip = |chunks: Vec<Value>| -> Vec<Value> {
        chunks
            .into_iter()
            .map(|mut c| {
                c.as_object_mut().unwrap().remove("timestamp");
                c
            })
            .collect()
    };
    assert_eq!(
        strip(log.chunks()),
        strip(whole.chunks()),
        "no chunk twice, none missing"
    );
    // A third replay stores nothing at all.
    respond(
        &world,
        &log,
        producer(1),
        &[user_message()],
        &Chunks::new(assistant_chunks()),
    )
    .unwrap();
    assert_eq!(log.chunks().len(), whole.chunks().len());
}

#[test]
fn a_stale_epoch_is_refused_with_the_current_epoch_and_stores_nothing() {
    let world = World::new();
    let log = Recording::new(&world);
    respond(
        &world,
        &log,
        producer(5),
        &[user_message()],
        &Chunks::new(vec![]),
    )
    .unwrap();
    let before = log.chunks().len();
    let stale = respond(
        &world,
        &log,
        producer(4),
        &[user_message()],
        &Chunks::new(assistant_chunks()),
    );
    assert!(
        matches!(
            stale,
            Err(ResponseError::Log(LogError::StaleEpoch {
                current_epoch: 5
            }))
        ),
        "{stale:?}"
    );
    assert_eq!(log.chunks().len(), before);
    // A newer epoch starts again at seq 0 and is stored.
    respond(
        &world,
        &log,
        producer(6),
        &[user_message()],
        &Chunks::new(assistant_chunks()),
    )
    .unwrap();
    assert_eq!(log.chunks().len(), before + 4 + 10);
}

#[test]
fn fenced_while_piping_stops_reading_the_source() {
    let world = World::new();
    let log = Recording::new(&world);
    let new = read_new_messages(&[user_message()], &mut || "x".into()).unwrap();
    let old = writer(&log, &world, producer(1));
    let source = Chunks::new(
        (0..200)
            .map(|i| json!({"type":"CUSTOM","name":"n","value":i}))
            .collect(),
    );
    let result = block_on(&world, async {
        let first = old.open(&new, 1, &CancelToken::new()).await?;
        // A newer claim writes before the old executor's source chunks go out.
        writer(&log, &world, producer(2))
            .open(&new, 2, &CancelToken::new())
            .await?;
        old.pipe(&source, first).await
    });
    assert!(matches!(
        result,
        Err(ResponseError::Log(LogError::StaleEpoch {
            current_epoch: 2
        }))
    ));
    assert!(source.stopped.get(), "the source was told to stop");
    assert!(source.at.get() < 200, "the source was not read to its end");
    let custom = log
        .chunks()
        .iter()
        .filter(|c| c["type"] == "CUSTOM")
        .count();
    assert_eq!(
        custom, 0,
        "nothing of the old epoch after the newer one wrote"
    );
}

#[test]
fn a_failing_source_keeps_what_it_yielded_and_a_bad_chunk_is_refused() {
    let world = World::new();
    let log = Recording::new(&world);
    let mut source = Chunks::new(assistant_chunks());
    source.fail_after = Some(3);
    let failed = respond(&world, &log, None, &[user_message()], &source);
    assert!(
        matches!(failed, Err(ResponseError::Source(_))),
        "{failed:?}"
    );
    assert_eq!(log.chunks().len(), 4 + 3);

    let log = Recording::new(&world);
    let bad = Chunks::new(vec![
        json!({"type":"RUN_STARTED"}),
        json!("not a chunk"),
        json!({"type":"X"}),
    ]);
    let refused = respond(&world, &log, None, &[], &bad);
    assert!(
        matches!(refused, Err(ResponseError::InvalidChunk { index: 1, .. })),
        "{refused:?}"
    );
    assert!(bad.stopped.get());
    assert_eq!(
        log.chunks().len(),
        1 + 1,
        "the batch and the chunk before the bad one"
    );
}

/// The three accepted shapes, each `(input, shape, expected native message)`.
#[test]
fn new_messages_in_the_three_shapes() {
    let cases = [
        (user_message(), MessageShape::Ui, user_message()),
        (
            json!({"id":"p1","role":"user","content":"plain"}),
            MessageShape::Plain,
            json!({"id":"p1","role":"user","content":"plain","parts":[{"type":"text","content":"plain"}]}),
        ),
        (
            json!({"role":"assistant","content":"calling","toolCalls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}}]}),
            MessageShape::Model,
            json!({"id":"gen","role":"assistant","content":"calling",
                   "toolCalls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}}],
                   "parts":[{"type":"text","content":"calling"},
                            {"type":"tool-call","id":"c1","name":"lookup","arguments":"{\"q\":1}","state":"input-complete","input":{"q":1}}]}),
        ),
        (
            json!({"id":"m2","role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"data","value":"AAAA","mimeType":"image/png"}}]}),
            MessageShape::Model,
            json!({"id":"m2","role":"user",
                   "content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"data","value":"AAAA","mimeType":"image/png"}}],
                   "parts":[{"type":"text","content":"see"},{"type":"image","source":{"type":"data","value":"AAAA","mimeType":"image/png"}}]}),
        ),
    ];
    for (input, shape, expected) in cases {
        let read = read_new_messages(std::slice::from_ref(&input), &mut || "gen".into()).unwrap();
        assert_eq!(read[0].shape, shape, "{input}");
        assert_eq!(read[0].native, expected, "{input}");
    }
    let bad = [
        (json!("text"), "newMessages[0]"),
        (json!({"role":"robot","content":"x"}), "newMessages[0].role"),
        (
            json!({"id":"","role":"user","content":"x"}),
            "newMessages[0].id",
        ),
        (json!({"role":"user","content":5}), "newMessages[0].content"),
        (
            json!({"role":"assistant","toolCalls":[{"id":"c","function":{}}]}),
            "newMessages[0].toolCalls[0].function.name",
        ),
    ];
    for (input, path) in bad {
        let error =
            read_new_messages(std::slice::from_ref(&input), &mut || "gen".into()).unwrap_err();
        assert_eq!(error.path, path, "{input}");
    }
}

#[test]
fn a_model_tool_message_is_anchored_on_the_call_it_answers() {
    let world = World::new();
    let log = Recording::new(&world);
    let new = [
        json!({"id":"u1","role":"user","content":"look x up"}),
        json!({"id":"a1","role":"assistant","content":null,"toolCalls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}]}),
        json!({"id":"t1","role":"tool","toolCallId":"c1","content":"{\"hit\":true}"}),
    ];
    respond(&world, &log, None, &new, &Chunks::new(vec![])).unwrap();
    let chunks = log.chunks();
    let starts = chunks
        .iter()
        .filter(|c| c["type"] == "TEXT_MESSAGE_START")
        .count();
    assert_eq!(starts, 2, "tool messages are not echoed");
    let batch = chunks
        .iter()
        .find(|c| c["type"] == "MESSAGES_SNAPSHOT")
        .unwrap();
    let messages = batch["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "no tool-role UI message");
    let parts = &messages[1]["parts"];
    assert_eq!(parts[0]["output"], json!({"hit": true}));
    assert_eq!(parts[0]["state"], "complete");
    assert_eq!(
        parts[1],
        json!({"type":"tool-result","toolCallId":"c1","content":"{\"hit\":true}","state":"complete"})
    );
    let projection = projected(&chunks);
    let call = projection
        .messages()
        .nth(1)
        .unwrap()
        .tool_calls
        .clone()
        .unwrap();
    assert_eq!(call[0].result.as_deref(), Some("{\"hit\":true}"));
}

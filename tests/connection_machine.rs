//! The live connection's state machine (`core::connection::machine`), scripted: sharing one read
//! between readers, cancel and dispose, resuming at the cursor, the retry schedule, exactly-once
//! delivery across a broken read, closure, stale events, a reader that falls behind.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use turnkeep::core::connection::{Action, Connection, ConnectionFailure, ReadOffset};
use turnkeep::core::limits::{
    CONNECTION_FAILURES_MAX, CONNECTION_HEALTHY_MS, CONNECTION_MISSING_POLL_MS_MAX,
    CONNECTION_MISSING_POLL_MS_MIN, CONNECTION_READER_BACKLOG_CHUNKS_MAX, CONNECTION_RETRY_MS_MAX,
    CONNECTION_RETRY_MS_MIN,
};
use turnkeep::core::projection::Projection;

fn offset(n: u64) -> String {
    format!("0000000000000000_{n:016}")
}

/// One append as the server frames it: its chunks, then the offset after it.
fn append(chunks: &[Value], next: u64) -> String {
    format!(
        "event: data\ndata:{}\n\nevent: control\ndata:{{\"streamNextOffset\":\"{}\",\"streamCursor\":\"c{next}\"}}\n\n",
        Value::Array(chunks.to_vec()),
        offset(next)
    )
}

fn chunk(n: u64) -> Value {
    json!({ "type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": format!("w{n} ") })
}

fn connection() -> Connection {
    Connection::new(ReadOffset::Start, Projection::new(), 42)
}

fn connect(generation: u64, offset: ReadOffset, cursor: Option<&str>) -> Action {
    Action::Connect {
        generation,
        offset,
        cursor: cursor.map(str::to_owned),
    }
}

fn deliver(readers: &[u64], chunks: Vec<Value>) -> Action {
    Action::Deliver {
        readers: readers.to_vec(),
        chunks,
    }
}

fn end(readers: &[u64], failure: Option<ConnectionFailure>) -> Action {
    Action::End {
        readers: readers.to_vec(),
        failure,
    }
}

/// A connection with reader 1 whose read (generation 1) is open.
fn open() -> Connection {
    let mut c = connection();
    let (id, actions) = c.subscribe();
    assert_eq!(id, 1);
    assert_eq!(actions, [connect(1, ReadOffset::Start, None)]);
    assert_eq!(c.response(1, 200, true, 0), []);
    c
}

#[test]
fn readers_share_one_read_and_each_gets_what_arrives_after_it_joined() {
    let mut c = open();
    assert_eq!(
        c.body(1, append(&[chunk(1)], 10).as_bytes()),
        [deliver(&[1], vec![chunk(1)])]
    );
    // Reader 2 joins the open read: no second read, and only what follows.
    let (two, actions) = c.subscribe();
    assert_eq!((two, actions), (2, vec![]));
    assert_eq!(
        c.body(1, append(&[chunk(2), chunk(3)], 20).as_bytes()),
        [deliver(&[1, 2], vec![chunk(2), chunk(3)])]
    );
    assert_eq!(c.offset(), &ReadOffset::After(offset(20)));
    assert_eq!(c.replay().to_messages()[0].content, "w1 w2 w3 ");
}

#[test]
fn cancelling_one_reader_leaves_its_peers_and_the_last_closes_the_read() {
    let mut c = open();
    c.subscribe();
    c.subscribe();
    assert_eq!(c.cancel(2), [end(&[2], None)]);
    assert_eq!(c.cancel(2), [], "cancel is idempotent");
    assert_eq!(
        c.body(1, append(&[chunk(1)], 10).as_bytes()),
        [deliver(&[1, 3], vec![chunk(1)])]
    );
    assert_eq!(c.cancel(1), [end(&[1], None)]);
    assert_eq!(
        c.cancel(3),
        [end(&[3], None), Action::Abort { generation: 1 }]
    );
    assert!(!c.is_reading());
    // Events of the closed read are stale.
    assert_eq!(c.body(1, append(&[chunk(2)], 20).as_bytes()), []);
    assert_eq!(c.ended(1, 5), []);
}

#[test]
fn a_later_subscription_resumes_at_the_cursor_with_the_replay_state() {
    let mut c = open();
    c.body(1, append(&[chunk(1)], 10).as_bytes());
    c.cancel(1);
    let (id, actions) = c.subscribe();
    assert_eq!(id, 2);
    assert_eq!(
        actions,
        [connect(2, ReadOffset::After(offset(10)), Some("c10"))]
    );
    c.response(2, 200, true, 0);
    assert_eq!(
        c.body(2, append(&[chunk(2)], 20).as_bytes()),
        [deliver(&[2], vec![chunk(2)])]
    );
    assert_eq!(c.replay().to_messages()[0].content, "w1 w2 ");
}

#[test]
fn an_initial_offset_reads_only_the_suffix_and_initial_messages_seed_the_replay_state() {
    let seed = json!([
        { "id": "u1", "role": "user", "content": "hi", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z" },
        { "id": "a1", "role": "assistant", "content": "w0 ", "status": "streaming", "createdAt": "2026-07-11T03:00:00.001Z" },
    ]);
    let mut c = Connection::new(
        ReadOffset::After(offset(5)),
        Projection::from_initial(&seed, None),
        1,
    );
    let (_, actions) = c.subscribe();
    assert_eq!(actions, [connect(1, ReadOffset::After(offset(5)), None)]);
    c.response(1, 200, true, 0);
    c.body(1, append(&[chunk(1)], 10).as_bytes());
    let messages = c.replay().to_messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].content, "w0 w1 ");
}

#[test]
fn dispose_ends_every_reader_and_the_read_once_and_for_good() {
    let mut c = open();
    c.subscribe();
    assert_eq!(
        c.dispose(),
        [end(&[1, 2], None), Action::Abort { generation: 1 }]
    );
    assert_eq!(c.dispose(), []);
    let (id, actions) = c.subscribe();
    assert_eq!(actions, [end(&[id], None)]);
    assert_eq!(c.response(1, 200, true, 0), []);
}

#[test]
fn a_stream_that_does_not_exist_yet_is_polled_with_a_growing_bounded_delay() {
    let mut c = connection();
    c.subscribe();
    let mut generation = 1;
    let mut delays = Vec::new();
    for _ in 0..10 {
        let actions = c.response(generation, 404, false, 0);
        let [Action::Abort {
            generation: aborted,
        }, Action::Wait {
            generation: timer,
            delay_ms,
        }] = actions[..]
        else {
            panic!("expected abort + wait, got {actions:?}");
        };
        assert_eq!(aborted, generation);
        delays.push(delay_ms);
        assert_eq!(
            c.timer_fired(timer),
            [connect(timer + 1, ReadOffset::Start, None)]
        );
        generation = timer + 1;
    }
    // 404s never end the readers; the delay grows and stops growing.
    assert_eq!(c.reader_count(), 1);
    assert!(
        delays[0] >= CONNECTION_MISSING_POLL_MS_MIN / 2
            && delays[0] <= CONNECTION_MISSING_POLL_MS_MIN,
        "{delays:?}"
    );
    assert!(delays.windows(2).take(4).all(|w| w[1] > w[0]), "{delays:?}");
    assert!(
        delays.iter().all(|d| *d <= CONNECTION_MISSING_POLL_MS_MAX),
        "{delays:?}"
    );
    assert!(
        delays[9] >= CONNECTION_MISSING_POLL_MS_MAX / 2,
        "{delays:?}"
    );
}

#[test]
fn a_sent_turn_ends_the_wait_for_the_stream_at_once() {
    let mut c = connection();
    c.subscribe();
    let actions = c.response(1, 404, false, 0);
    let Some(Action::Wait { generation, .. }) = actions.last().cloned() else {
        panic!("{actions:?}")
    };
    assert_eq!(
        c.nudge(),
        [
            Action::Abort { generation },
            connect(generation + 1, ReadOffset::Start, None)
        ]
    );
    assert_eq!(c.timer_fired(generation), [], "the old timer is stale");
    assert_eq!(c.nudge(), [], "nothing to hurry while a read is on");
}

#[test]
fn failures_back_off_and_end_the_readers_after_too_many_in_a_row() {
    let mut c = open();
    c.subscribe();
    let mut generation = 1;
    let mut delays = Vec::new();
    // The open read breaks at once, then every retry is answered 503.
    let mut actions = c.ended(generation, 1);
    for _ in 0..CONNECTION_FAILURES_MAX {
        let Some(Action::Wait {
            generation: timer,
            delay_ms,
        }) = actions.last().cloned()
        else {
            panic!("{actions:?}")
        };
        delays.push(delay_ms);
        c.timer_fired(timer);
        generation = timer + 1;
        actions = c.response(generation, 503, false, 0);
    }
    assert_eq!(
        actions,
        [
            Action::Abort { generation },
            end(&[1, 2], Some(ConnectionFailure::Unavailable))
        ]
    );
    assert_eq!(delays.len() as u32, CONNECTION_FAILURES_MAX);
    assert!(delays[0] >= CONNECTION_RETRY_MS_MIN / 2 && delays[0] <= CONNECTION_RETRY_MS_MIN);
    assert!(delays.iter().all(|d| *d <= CONNECTION_RETRY_MS_MAX));
    assert!(
        *delays.last().unwrap() >= CONNECTION_RETRY_MS_MAX / 2,
        "{delays:?}"
    );
    // A new reader starts afresh.
    let (_, actions) = c.subscribe();
    assert!(
        matches!(actions[..], [Action::Connect { .. }]),
        "{actions:?}"
    );
}

#[test]
fn progress_resets_the_failure_count() {
    let mut c = open();
    let mut generation = 1;
    for round in 0..(3 * CONNECTION_FAILURES_MAX) {
        // Each read delivers one append and then breaks early: never too many failures in a row.
        c.body(
            generation,
            append(&[chunk(u64::from(round))], 10 + u64::from(round)).as_bytes(),
        );
        let actions = c.ended(generation, 1);
        let [Action::Connect {
            generation: next, ..
        }] = actions[..]
        else {
            panic!("a read that moved the cursor reconnects at once: {actions:?}")
        };
        generation = next;
        c.response(generation, 200, true, 0);
    }
    assert_eq!(c.reader_count(), 1);
}

#[test]
fn a_healthy_read_that_ends_reconnects_at_once_and_a_quick_empty_one_backs_off() {
    let mut c = open();
    // The server's keep-alive control event moves nothing; the read stayed open long enough.
    c.body(1, format!("event: control\ndata:{{\"streamNextOffset\":\"{}\",\"streamCursor\":\"k\",\"upToDate\":true}}\n\n", offset(0)).as_bytes());
    assert_eq!(
        c.ended(1, CONNECTION_HEALTHY_MS),
        [connect(2, ReadOffset::After(offset(0)), Some("k"))]
    );
    c.response(2, 200, true, 10_000);
    let actions = c.ended(2, 10_001);
    assert!(
        matches!(actions[..], [Action::Wait { generation: 3, .. }]),
        "{actions:?}"
    );
}

#[test]
fn refusals_and_non_event_streams_end_the_readers_at_once() {
    for (status, stream, failure) in [
        (401, false, ConnectionFailure::Refused { status: 401 }),
        (403, false, ConnectionFailure::Refused { status: 403 }),
        (400, false, ConnectionFailure::Refused { status: 400 }),
        (200, false, ConnectionFailure::NotEventStream),
    ] {
        let mut c = connection();
        c.subscribe();
        c.subscribe();
        assert_eq!(
            c.response(1, status, stream, 0),
            [end(&[1, 2], Some(failure)), Action::Abort { generation: 1 }],
            "{status}"
        );
        assert!(!c.is_reading());
    }
}

#[test]
fn a_read_broken_between_data_and_control_delivers_nothing_twice_and_skips_nothing() {
    let mut c = open();
    c.body(1, append(&[chunk(1)], 10).as_bytes());
    // The next append's data arrives, its control does not: the read breaks.
    let half = append(&[chunk(2)], 20);
    let cut = half.find("event: control").unwrap();
    assert_eq!(c.body(1, &half.as_bytes()[..cut]), []);
    let actions = c.ended(1, 5);
    assert_eq!(
        actions,
        [connect(2, ReadOffset::After(offset(10)), Some("c10"))]
    );
    c.response(2, 200, true, 6);
    // The server sends that append again, whole.
    assert_eq!(c.body(2, half.as_bytes()), [deliver(&[1], vec![chunk(2)])]);
    assert_eq!(c.replay().to_messages()[0].content, "w1 w2 ");
}

#[test]
fn data_at_or_before_the_cursor_is_never_delivered_again() {
    let mut c = open();
    c.body(1, append(&[chunk(1)], 10).as_bytes());
    assert_eq!(c.body(1, append(&[chunk(1)], 10).as_bytes()), []);
    assert_eq!(c.body(1, append(&[chunk(0)], 5).as_bytes()), []);
    assert_eq!(
        c.body(1, append(&[chunk(2)], 11).as_bytes()),
        [deliver(&[1], vec![chunk(2)])]
    );
}

#[test]
fn the_same_bytes_split_anywhere_deliver_the_same_chunks() {
    let text = format!(
        "{}{}{}",
        append(&[chunk(1)], 10),
        append(&[chunk(2), chunk(3)], 20),
        append(&[json!({"t": "é ü 漢 \n x"})], 30)
    );
    let bytes = text.as_bytes();
    let delivered = |parts: &[&[u8]]| {
        let mut c = open();
        let mut got = Vec::new();
        for part in parts {
            for action in c.body(1, part) {
                if let Action::Deliver { chunks, .. } = action {
                    got.extend(chunks);
                }
            }
        }
        got
    };
    let whole = delivered(&[bytes]);
    assert_eq!(whole.len(), 4);
    for cut in 0..=bytes.len() {
        assert_eq!(
            delivered(&[&bytes[..cut], &bytes[cut..]]),
            whole,
            "split at {cut}"
        );
    }
}

#[test]
fn a_broken_event_drops_the_read_and_retries_from_the_cursor() {
    let mut c = open();
    c.body(1, append(&[chunk(1)], 10).as_bytes());
    let actions = c.body(1, b"event: data\ndata:not json\n\n");
    assert!(
        matches!(
            actions[..],
            [
                Action::Abort { generation: 1 },
                Action::Wait { generation: 2, .. }
            ]
        ),
        "{actions:?}"
    );
    assert_eq!(
        c.timer_fired(2),
        [connect(3, ReadOffset::After(offset(10)), Some("c10"))]
    );
    let actions = {
        c.response(3, 200, true, 0);
        c.body(3, b"event: control\ndata:{\"no\":1}\n\n")
    };
    assert!(
        matches!(
            actions[..],
            [Action::Abort { generation: 3 }, Action::Wait { .. }]
        ),
        "{actions:?}"
    );
}

#[test]
fn a_closed_stream_delivers_its_last_chunks_then_ends_the_readers_for_good() {
    let mut c = open();
    let text = format!(
        "event: data\ndata:[{}]\n\nevent: control\ndata:{{\"streamNextOffset\":\"{}\",\"streamClosed\":true}}\n\n",
        chunk(9),
        offset(90)
    );
    assert_eq!(
        c.body(1, text.as_bytes()),
        [
            deliver(&[1], vec![chunk(9)]),
            end(&[1], None),
            Action::Abort { generation: 1 }
        ]
    );
    let (id, actions) = c.subscribe();
    assert_eq!(actions, [end(&[id], None)]);
}

#[test]
fn a_reader_that_falls_behind_ends_alone() {
    let mut c = open();
    c.subscribe();
    let many: Vec<Value> = (0..CONNECTION_READER_BACKLOG_CHUNKS_MAX as u64)
        .map(chunk)
        .collect();
    let actions = c.body(1, append(&many, 10).as_bytes());
    assert!(matches!(&actions[..], [Action::Deliver { readers, .. }] if readers == &[1, 2]));
    c.took(2, CONNECTION_READER_BACKLOG_CHUNKS_MAX);
    assert_eq!(
        c.body(1, append(&[chunk(1)], 20).as_bytes()),
        [
            end(&[1], Some(ConnectionFailure::ReaderOverflow)),
            deliver(&[2], vec![chunk(1)])
        ]
    );
}

#[test]
fn a_fetch_that_fails_before_answering_counts_as_a_failure() {
    let mut c = connection();
    c.subscribe();
    let actions = c.ended(1, 0);
    assert!(
        matches!(actions[..], [Action::Wait { generation: 2, .. }]),
        "{actions:?}"
    );
    assert_eq!(c.response(1, 200, true, 0), [], "stale");
}

#[test]
fn appends_that_arrive_together_are_one_delivery() {
    let mut c = open();
    let both = format!(
        "{}{}",
        append(&[chunk(1)], 10),
        append(&[chunk(2), chunk(3)], 20)
    );
    assert_eq!(
        c.body(1, both.as_bytes()),
        [deliver(&[1], vec![chunk(1), chunk(2), chunk(3)])]
    );
}

#[test]
fn a_connection_prepared_for_a_session_refuses_another_sessions_chunks() {
    use turnkeep::core::projection::{Identity, IdentityMismatch};
    let identity = Identity::expect(Some("s1"), Some(2.0)).unwrap();
    let prepared = || {
        let mut c = Connection::new(ReadOffset::Start, Projection::new(), 42)
            .with_identity(identity.clone());
        c.subscribe();
        c.response(1, 200, true, 0);
        c
    };
    let run = |thread: &str| json!({ "type": "RUN_STARTED", "runId": "t1", "threadId": thread });
    // Its own session's chunks are delivered.
    let mut c = prepared();
    assert_eq!(
        c.body(1, append(&[run("s1"), chunk(1)], 10).as_bytes()),
        [deliver(&[1], vec![run("s1"), chunk(1)])]
    );
    // A delivery with one foreign chunk: nothing of it reaches a reader or the replay state,
    // the cursor stays, and the readers end with the mismatch.
    assert_eq!(
        c.body(1, append(&[chunk(2), run("s2")], 20).as_bytes()),
        [
            end(
                &[1],
                Some(ConnectionFailure::Foreign(IdentityMismatch::ForeignSession))
            ),
            Action::Abort { generation: 1 }
        ]
    );
    assert_eq!(c.offset(), &ReadOffset::After(offset(10)));
    assert_eq!(c.replay().to_messages()[0].content, "w1 ");
    // A chunk stamped with another definition revision.
    let mut c = prepared();
    let stamped =
        json!({ "type": "RUN_STARTED", "runId": "t1", "threadId": "s1", "definitionRevision": 3 });
    assert_eq!(
        c.body(1, append(&[stamped], 10).as_bytes()),
        [
            end(
                &[1],
                Some(ConnectionFailure::Foreign(IdentityMismatch::OtherRevision))
            ),
            Action::Abort { generation: 1 }
        ]
    );
    // Unprepared, the same chunks pass.
    let mut c = open();
    assert_eq!(
        c.body(1, append(&[run("s2")], 10).as_bytes()),
        [deliver(&[1], vec![run("s2")])]
    );
}

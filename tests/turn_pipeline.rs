//! Whole turns on the host, over in-memory ports in a simulated world: claim, run, publish to
//! the session log, stop, fence, release. After every completed turn the log's projection must
//! equal the messages saved in ChatMemory.
#![cfg(not(target_arch = "wasm32"))]

mod turn_support;

use std::rc::Rc;

use turn_support::*;
use turnkeep::core::limits::STOP_WATCH_READ_INTERVAL_MS;
use turnkeep::core::projection::chunks::stop_request;
use turnkeep::core::protocol::{BoundaryError, MessageStatus, Role, ToolCallStatus};
use turnkeep::core::session::{decode_session_snapshot, SessionEnvelope, TurnOutcome};
use turnkeep::ports::log::{ProducerStamp, SessionLog};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::CancelToken;
use turnkeep::turn::publish::PumpEnd;
use turnkeep::turn::{admit, open, request_stop, run, Cause, Interrupt, Refusal, Turn, TurnEnd};

const SESSION: &str = "s1";

fn start(
    session: &Session,
    with_log: bool,
    delay_ms: u64,
    turn_id: &str,
    input: &str,
) -> Result<Rc<Turn>, Refusal> {
    let ports = session.ports(with_log, delay_ms);
    let chat = chat_setup(SESSION);
    let sub = submission(SESSION, turn_id, input);
    let deadline = Interrupt::new();
    block_on(&session.world, async {
        let claim = admit(&ports, &chat, &sub, &LIMITS, &deadline).await?;
        let opened = open(&ports, &chat, &sub, &claim, &LIMITS, &deadline).await?;
        Ok(Turn::new(ports.clone(), LIMITS, sub.clone(), claim, opened))
    })
}

/// Runs `turn` to its end; `during` runs beside it (a second client, a fault).
fn finish_with(
    session: &Session,
    turn: &Rc<Turn>,
    during: impl std::future::Future<Output = ()>,
) -> (TurnEnd, Rc<Sink>) {
    let sink = Rc::new(Sink::default());
    let end = std::cell::RefCell::new(None);
    run_all(
        &session.world,
        vec![
            Box::pin(async { *end.borrow_mut() = Some(run(turn.clone(), sink.clone()).await) }),
            Box::pin(during),
        ],
    );
    (end.into_inner().expect("turn ended"), sink)
}

fn envelope(session: &Session) -> SessionEnvelope {
    let stored = block_on(
        &session.world,
        session.storage.load(SESSION, &CancelToken::new()),
    )
    .expect("load")
    .expect("stored");
    decode_session_snapshot(&stored).expect("valid envelope")
}

fn sleep(session: &Session, ms: u64) -> impl std::future::Future<Output = ()> + '_ {
    let s = SimSleep(session.world.clone());
    async move { turnkeep::ports::chat::Sleep::sleep(&s, ms).await }
}

#[test]
fn every_completed_turn_projects_to_the_saved_messages() {
    let world = World::new();
    let session = Session::new(&world);
    let inputs = [
        "hello there",
        "/tool cats",
        "/words 30",
        "/fail",
        "/confirm 5",
        "and again",
    ];
    for (i, input) in inputs.iter().enumerate() {
        let turn_id = format!("t{i}");
        let turn = start(&session, true, 5, &turn_id, input).expect("claimed");
        let (end, sink) = finish_with(&session, &turn, async {});
        assert_eq!(end.outcome, TurnOutcome::Completed, "{input}");
        assert!(end.released, "{input}");
        assert_eq!(end.log, Some(PumpEnd::Drained), "{input}");
        assert_eq!(
            *sink.closed.borrow(),
            Some(None),
            "{input}: closed without a diagnostic"
        );
        assert_eq!(session.projected(), session.saved(), "after {input:?}");
        let env = envelope(&session);
        assert_eq!(env.active_turn, None);
        assert_eq!(
            env.terminal_turns.last().map(|t| t.turn_id.as_str()),
            Some(turn_id.as_str())
        );
        world.advance(1_000);
    }
    let chunks = session.log_store.chunks();
    assert!(
        chunks.iter().all(|c| c["type"] != "MESSAGES_SNAPSHOT"),
        "every change was published as a step, never as the whole-conversation fallback"
    );
    if std::env::var_os("TURNKEEP_PRINT_LOG").is_some() {
        for c in &chunks {
            println!("{c}");
        }
    }
    let saved = session.saved();
    assert_eq!(
        saved.iter().filter(|m| m.role == Role::User).count(),
        inputs.len()
    );
    let calls: Vec<_> = saved
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .collect();
    assert!(calls
        .iter()
        .any(|c| c.name == "lookup" && c.status == ToolCallStatus::Complete));
    assert!(calls
        .iter()
        .any(|c| c.name == "transfer" && c.status == ToolCallStatus::RequiresConfirmation));
    assert!(
        saved
            .iter()
            .any(|m| m.role == Role::Assistant && m.status == MessageStatus::Error),
        "/fail"
    );
    assert!(
        session
            .faults
            .0
            .borrow()
            .iter()
            .any(|f| f.stage == turnkeep::turn::Stage::Model),
        "/fail reported"
    );
}

#[test]
fn initial_messages_reach_the_log_on_the_first_turn() {
    let world = World::new();
    let session = Session::new(&world);
    let ports = session.ports(true, 0);
    let mut chat = chat_setup(SESSION);
    chat.initial_messages = turnkeep::core::protocol::decode_messages(&serde_json::json!([
        {"id": "sys-1", "role": "system", "content": "Be brief.", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z"}
    ]))
    .unwrap();
    let sub = submission(SESSION, "t1", "hi");
    let deadline = Interrupt::new();
    let turn = block_on(&world, async {
        let claim = admit(&ports, &chat, &sub, &LIMITS, &deadline)
            .await
            .unwrap();
        let opened = open(&ports, &chat, &sub, &claim, &LIMITS, &deadline)
            .await
            .unwrap();
        Turn::new(ports.clone(), LIMITS, sub.clone(), claim, opened)
    });
    finish_with(&session, &turn, async {});
    assert_eq!(session.saved()[0].id, "sys-1");
    assert_eq!(session.projected(), session.saved());
}

#[test]
fn with_a_log_the_sender_going_away_does_not_stop_the_turn() {
    let world = World::new();
    let session = Session::new(&world);
    let turn = start(&session, true, 10, "t1", "/words 20").unwrap();
    let gone = {
        let turn = turn.clone();
        let pause = sleep(&session, 35);
        async move {
            pause.await;
            turn.interrupt(Cause::ClientGone);
        }
    };
    let (end, sink) = finish_with(&session, &turn, gone);
    assert_eq!(end.stopped_by, None);
    assert!(end.released);
    let answer = session.saved().last().unwrap().content.clone();
    assert_eq!(answer.split_whitespace().count(), 20, "{answer}");
    assert_eq!(session.projected(), session.saved());
    assert_eq!(*sink.closed.borrow(), Some(Some(BoundaryError::Cancelled)));
}

#[test]
fn without_a_log_the_sender_going_away_stops_the_turn() {
    let world = World::new();
    let session = Session::new(&world);
    let turn = start(&session, false, 10, "t1", "/words 20").unwrap();
    let gone = {
        let turn = turn.clone();
        let pause = sleep(&session, 35);
        async move {
            pause.await;
            turn.interrupt(Cause::ClientGone);
        }
    };
    let (end, _) = finish_with(&session, &turn, gone);
    assert_eq!(end.stopped_by, Some(Cause::ClientGone));
    assert!(end.released);
    let words = session
        .saved()
        .last()
        .unwrap()
        .content
        .split_whitespace()
        .count();
    assert!(words < 20, "stopped early: {words} words");
    assert!(
        session.log_store.chunks().is_empty(),
        "no log configured, nothing published"
    );
}

#[test]
fn a_stop_request_in_the_log_ends_the_turn_within_the_watch_interval() {
    let world = World::new();
    let session = Session::new(&world);
    let turn = start(&session, true, 10, "t1", "/words 50").unwrap();
    let stopper = {
        let log = session.log.clone();
        let world = world.clone();
        let pause = sleep(&session, 55);
        async move {
            pause.await;
            let chunk = stop_request("t1", world.now()).to_string();
            log.append(&[chunk], None, &CancelToken::new())
                .await
                .expect("append");
        }
    };
    let (end, sink) = finish_with(&session, &turn, stopper);
    assert_eq!(end.stopped_by, Some(Cause::StopRequested));
    assert_eq!(
        *sink.closed.borrow(),
        Some(None),
        "a requested stop ends like a normal turn"
    );
    let words = session
        .saved()
        .last()
        .unwrap()
        .content
        .split_whitespace()
        .count();
    // Chunks come every 10 ms; the request lands at 55 ms: 5 words out. The watcher, pausing
    // between reads, sees it at most one interval later: at most that many more words, and one
    // for the chunk in flight.
    let later = (STOP_WATCH_READ_INTERVAL_MS / 10) as usize + 1;
    assert!((5..=5 + later).contains(&words), "{words} words");
    assert!(words < 50, "stopped early");
    assert_eq!(session.projected(), session.saved());
    assert_eq!(envelope(&session).active_turn, None);
}

#[test]
fn a_newer_epoch_fences_the_old_writer_and_nothing_of_it_is_stored() {
    let world = World::new();
    let session = Session::new(&world);
    let turn = start(&session, true, 5, "t1", "/words 10").unwrap();
    let generation = turn.claim().generation();
    // A newer claim of the same turn wrote first.
    let newer = ProducerStamp {
        id: "chat-turn:s1:t1".into(),
        epoch: generation + 2,
        seq: 0,
        item_seqs: false,
    };
    let foreign = serde_json::json!({"type": "CUSTOM", "name": "newer-claim"}).to_string();
    block_on(
        &world,
        session
            .log
            .append(&[foreign], Some(&newer), &CancelToken::new()),
    )
    .unwrap();
    let (end, sink) = finish_with(&session, &turn, async {});
    assert_eq!(end.stopped_by, Some(Cause::Fenced));
    assert_eq!(
        end.log,
        Some(PumpEnd::Fenced {
            current_epoch: generation + 2
        })
    );
    assert_eq!(
        session.log_store.chunks().len(),
        1,
        "the stale writer stored nothing"
    );
    assert_eq!(
        *sink.closed.borrow(),
        Some(Some(BoundaryError::SessionConflict))
    );
}

#[test]
fn a_crashed_turn_is_resynchronised_by_the_next_claim() {
    let world = World::new();
    let session = Session::new(&world);
    session_turn(&session, "t0", "first");
    // A turn that publishes part of its answer, then its process dies (the run is dropped).
    let crashed = start(&session, true, 10, "t1", "/words 40").unwrap();
    {
        let sink = Rc::new(Sink::default());
        let mut run = Box::pin(run(crashed.clone(), sink));
        let limit = sleep(&session, 45);
        run_all(
            &world,
            vec![Box::pin(async move {
                turnkeep::turn::race::race(run.as_mut(), limit).await;
            })],
        );
    }
    assert_ne!(
        session.projected(),
        session.saved(),
        "the log is ahead of memory after the crash"
    );
    // The lease lapses; the next turn claims over it and the log is put right first.
    world.advance(LIMITS.lease_ms + 1);
    let turn = start(&session, true, 0, "t2", "second").unwrap();
    assert!(turn.claim().resync);
    finish_with(&session, &turn, async {});
    assert_eq!(session.projected(), session.saved());
}

fn session_turn(session: &Session, turn_id: &str, input: &str) -> TurnEnd {
    let turn = start(session, true, 0, turn_id, input).unwrap();
    finish_with(session, &turn, async {}).0
}

#[test]
fn a_busy_session_and_a_replayed_turn_are_refused() {
    let world = World::new();
    let session = Session::new(&world);
    let running = start(&session, true, 10, "t1", "/words 5").unwrap();
    let busy = start(&session, true, 0, "t2", "hi").err().expect("busy");
    assert_eq!(busy.error, BoundaryError::SessionBusy);
    finish_with(&session, &running, async {});
    let replay = start(&session, true, 0, "t1", "again")
        .err()
        .expect("replayed");
    assert_eq!(replay.error, BoundaryError::TurnReplayed);
    assert_eq!(replay.replayed, Some(TurnOutcome::Completed));
}

#[test]
fn a_turn_that_outlived_its_lease_takes_it_back_when_nobody_claimed_and_loses_nothing() {
    for with_log in [false, true] {
        let world = World::new();
        let session = Session::new(&world);
        let turn = start(&session, with_log, 10, "t1", "/words 20").unwrap();
        // Mid-answer the process stalls past the whole lease (an overloaded isolate), and no
        // other client claims the session meanwhile.
        let (end, _sink) = finish_with(&session, &turn, async {
            sleep(&session, 25).await;
            world.advance(LIMITS.lease_ms + 1);
        });
        assert!(
            end.released,
            "with_log={with_log}: the lease was taken back and released"
        );
        let saved = session.saved();
        assert_eq!(
            saved.len(),
            2,
            "with_log={with_log}: question and answer saved"
        );
        assert!(!saved[1].content.is_empty());
        assert_eq!(
            saved,
            turn.state().messages,
            "with_log={with_log}: what the turn had is what was saved"
        );
        let env = envelope(&session);
        assert!(env.active_turn.is_none());
        let recorded = env.terminal_turn("t1").map(|t| t.outcome);
        if with_log {
            // The publisher stopped at the lapse, so the log is behind: the next claim re-syncs it.
            assert_eq!(recorded, Some(TurnOutcome::Indeterminate));
            let faults = session.faults.0.borrow();
            assert!(
                faults
                    .iter()
                    .any(|f| f.stage == turnkeep::turn::Stage::SessionLog
                        && f.error.message.contains("lease lapsed")),
                "the operator is told why the turn is indeterminate: {:?}",
                faults.iter().map(|f| &f.error.message).collect::<Vec<_>>()
            );
            drop(faults);
            let next = start(&session, true, 0, "t2", "again").unwrap();
            assert!(next.claim().resync);
            finish_with(&session, &next, async {});
            assert_eq!(session.projected(), session.saved());
        } else {
            assert_eq!(recorded, Some(TurnOutcome::Completed));
            assert_eq!(end.outcome, TurnOutcome::Completed);
        }
    }
}

/// What the operator hears of each ended turn (`onTurnEnd`): ids, outcome, why the answer
/// ended, usage and time, never message text.
#[test]
fn every_ended_turn_is_summarised_for_the_operator() {
    let session = Session::new(&World::new());
    let cases = [
        ("t-stop", "hello", "stop", None),
        ("t-wait", "/confirm 5", "tool-calls", None),
        ("t-fail", "/fail", "error", None),
    ];
    for (turn_id, input, finish_reason, error_code) in cases {
        session_turn(&session, turn_id, input);
        session.world.advance(1_000);
        let summaries = session.faults.1.borrow();
        let summary = summaries.last().expect("a summary");
        assert_eq!(summary.turn_id, turn_id);
        assert_eq!(summary.session_id, SESSION);
        assert_eq!(summary.outcome, "completed", "{turn_id}");
        assert_eq!(summary.finish_reason, finish_reason, "{turn_id}");
        assert_eq!(summary.error_code, error_code, "{turn_id}");
    }
    // A stop from another client, with the demo model pausing 10 ms a word: stopped, and the
    // turn's own clock says how long it ran.
    let turn = start(&session, true, 10, "t-stopped", "/words 200").unwrap();
    let ports = session.ports(true, 0);
    finish_with(&session, &turn, async {
        sleep(&session, 100).await;
        let _ = request_stop(
            &ports,
            &chat_setup(SESSION),
            SESSION,
            "t-stopped",
            &Interrupt::new(),
        )
        .await;
    });
    let summaries = session.faults.1.borrow();
    let stopped = summaries.last().unwrap();
    assert_eq!(
        (stopped.turn_id.as_str(), stopped.finish_reason),
        ("t-stopped", "stopped")
    );
    assert!(stopped.duration_ms >= 100, "{stopped:?}");
    assert_eq!(summaries.len(), 4, "one summary per turn");
}

//! The `SessionStream` object's timing decisions (`cloudflare::streams::timing`), driven by an
//! injected clock: long-poll expiry and re-asking at the offset the core resolved, a reader that
//! leaves mid-wait, the producer-gap retry window, the SSE lifecycle (first chunk, keep-alive
//! cadence, closure, the connection's end, a reader that goes away or stops reading), and the
//! environment's settings, and the bounds on waiting readers and on the fork-release walk.
#![cfg(feature = "cloudflare")]

use turnkeep::cloudflare::streams::timing::{
    configured_ms, next_release_hop, AppendStep, GapRetry, LongPoll, ReadStep, Reader,
    ReaderCounts, SseSession, SseStep, Waits, Written,
};
use turnkeep::core::limits;
use turnkeep::core::limits::{
    STREAM_LONG_POLL_MS_DEFAULT, STREAM_LONG_POLL_MS_MAX, STREAM_PRODUCER_GAP_WAIT_MS,
    STREAM_SSE_CONNECTION_MS_MAX,
};

const T0: u64 = 1_800_000_000_000;
const WAITS: Waits = Waits {
    long_poll_ms: 3_000,
    sse_ms: 10_000,
};

#[test]
fn settings_fall_back_to_the_default_and_are_capped() {
    let cases: &[(Option<&str>, u64)] = &[
        (None, 20_000),
        (Some(""), 20_000),
        (Some("abc"), 20_000),
        (Some("0"), 20_000),
        (Some("-5"), 20_000),
        (Some("NaN"), 20_000),
        (Some("3000"), 3_000),
        (Some(" 4000 "), 4_000),
        (Some("2500.7"), 2_500),
        (Some("999999999"), 60_000),
    ];
    for (value, expected) in cases {
        assert_eq!(
            configured_ms(*value, 20_000, 60_000),
            *expected,
            "{value:?}"
        );
    }
    let waits = Waits::from_env(None, None);
    assert_eq!(waits.long_poll_ms, STREAM_LONG_POLL_MS_DEFAULT);
    assert_eq!(waits.sse_ms, STREAM_SSE_CONNECTION_MS_MAX);
    let waits = Waits::from_env(Some("120000"), Some("120000"));
    assert_eq!(waits.long_poll_ms, STREAM_LONG_POLL_MS_MAX);
    assert_eq!(
        waits.sse_ms, STREAM_SSE_CONNECTION_MS_MAX,
        "SSE is never longer than 60 s"
    );
}

#[test]
fn a_long_poll_waits_until_its_deadline_at_the_offset_the_core_resolved() {
    let poll = LongPoll::start(T0, WAITS);
    assert!(!poll.expired(T0));
    assert!(!poll.expired(T0 + 2_999));
    assert!(
        poll.expired(T0 + 3_000),
        "expired at the deadline: the core answers 204"
    );
    assert!(poll.expired(T0 + 10_000));
    // The core asked to wait at the tail it resolved `offset=now` to: wait until the deadline,
    // then ask again at that offset (not at `now`, which would move on to a later tail).
    assert_eq!(
        poll.step(Some("0000000000000000_0000000000000042".into()), false),
        ReadStep::Wait {
            until_ms: T0 + 3_000,
            offset: "0000000000000000_0000000000000042".into()
        }
    );
    // Woken early by an append, the deadline stays the same (a poll never waits longer in total).
    let later = poll.step(Some("x".into()), false);
    assert_eq!(
        later,
        ReadStep::Wait {
            until_ms: T0 + 3_000,
            offset: "x".into()
        }
    );
    assert_eq!(
        poll.step(None, false),
        ReadStep::Answer,
        "data or 204: answer"
    );
}

#[test]
fn a_long_poll_whose_reader_left_stops_instead_of_waiting() {
    let poll = LongPoll::start(T0, WAITS);
    assert_eq!(poll.step(Some("0_1".into()), true), ReadStep::Abandon);
    assert_eq!(
        poll.step(None, true),
        ReadStep::Answer,
        "an answer ready is still given"
    );
}

#[test]
fn the_gap_retry_holds_an_early_append_for_its_window_only() {
    let retry = GapRetry::start(T0);
    let until = T0 + STREAM_PRODUCER_GAP_WAIT_MS;
    let cases: &[(bool, Option<bool>, u64, AppendStep)] = &[
        // No gap: answer at once.
        (false, None, T0, AppendStep::Answer),
        // A gap: wait for a change, at most until the window closes.
        (
            true,
            None,
            T0,
            AppendStep::RetryAfterChange { until_ms: until },
        ),
        // Woken by a commit, still a gap, time left: wait again (same window).
        (
            true,
            Some(true),
            T0 + 40,
            AppendStep::RetryAfterChange { until_ms: until },
        ),
        // Woken and the gap is filled: answer (the retried decision).
        (false, Some(true), T0 + 40, AppendStep::Answer),
        // The wait ended without a change (time up, or the client left): answer the 409.
        (true, Some(false), T0 + 100, AppendStep::Answer),
        // Woken exactly at the end of the window: answer.
        (true, Some(true), until, AppendStep::Answer),
    ];
    for (gap, changed, now, expected) in cases {
        assert_eq!(
            retry.step(*gap, *changed, *now),
            *expected,
            "gap {gap} changed {changed:?} at +{}",
            now - T0
        );
    }
}

/// Runs an SSE session through a script of events and returns the steps it took.
fn run_sse(events: &[(u64, SseEvent)]) -> Vec<SseStep> {
    let (session, first) = SseSession::start(T0, WAITS);
    let mut steps = vec![first];
    for (at, event) in events {
        let step = match event {
            SseEvent::Wrote { done } => session.after_write(Written::Ok, *done, false, T0 + at),
            SseEvent::WriteFailed => session.after_write(Written::Failed, false, false, T0 + at),
            SseEvent::WroteButAborted => session.after_write(Written::Ok, false, true, T0 + at),
            SseEvent::Woke { changed } => session.after_wait(*changed, false),
            SseEvent::WokeAborted => session.after_wait(false, true),
        };
        steps.push(step);
    }
    steps
}

enum SseEvent {
    Wrote { done: bool },
    WriteFailed,
    WroteButAborted,
    Woke { changed: bool },
    WokeAborted,
}

#[test]
fn sse_starts_with_a_control_event_and_keeps_alive_at_the_long_poll_cadence() {
    use SseEvent::*;
    let steps = run_sse(&[
        (5, Wrote { done: false }),
        (3_005, Woke { changed: false }),
        (3_010, Wrote { done: false }),
        (4_000, Woke { changed: true }),
        (4_001, Wrote { done: false }),
    ]);
    assert_eq!(
        steps,
        vec![
            SseStep::Render {
                control_if_empty: true
            },
            SseStep::Wait {
                until_ms: T0 + 3_005
            },
            // A quiet wait ends with a keep-alive control event.
            SseStep::Render {
                control_if_empty: true
            },
            SseStep::Wait {
                until_ms: T0 + 6_010
            },
            // Woken by data: render it; no empty control event needed.
            SseStep::Render {
                control_if_empty: false
            },
            SseStep::Wait {
                until_ms: T0 + 7_001
            },
        ]
    );
}

#[test]
fn sse_ends_at_closure_and_at_the_connection_time() {
    use SseEvent::*;
    let (session, _) = SseSession::start(T0, WAITS);
    assert_eq!(
        session.write_deadline_ms(),
        T0 + 10_000,
        "a write may take until the end"
    );
    // The stream is closed and read: end normally.
    assert_eq!(run_sse(&[(5, Wrote { done: true })])[1], SseStep::Close);
    // Near the end the wait is cut to the end time, and after it the response ends.
    let steps = run_sse(&[
        (8_000, Wrote { done: false }),
        (10_000, Woke { changed: false }),
        (10_001, Wrote { done: false }),
    ]);
    assert_eq!(
        steps[1],
        SseStep::Wait {
            until_ms: T0 + 10_000
        }
    );
    assert_eq!(steps[3], SseStep::Close);
}

#[test]
fn sse_stops_for_a_reader_that_left_and_fails_for_one_that_stopped_reading() {
    use SseEvent::*;
    assert_eq!(run_sse(&[(5, WriteFailed)])[1], SseStep::Abort);
    assert_eq!(run_sse(&[(5, WroteButAborted)])[1], SseStep::Close);
    assert_eq!(
        run_sse(&[(5, Wrote { done: false }), (9, WokeAborted)])[2],
        SseStep::Close
    );
}

/// Readers waiting on one stream, at their bounds: the last place is given, the next refused
/// (429 `streams.v1.readers_busy`), and a place given back is taken again; the kinds are
/// bounded apart.
#[test]
fn waiting_readers_stop_at_their_bounds() {
    for kind in [Reader::LongPoll, Reader::Sse] {
        let mut counts = ReaderCounts::default();
        for n in 0..kind.max() {
            assert!(counts.admit(kind), "{kind:?}: place {n} of {}", kind.max());
        }
        assert!(!counts.admit(kind), "{kind:?}: one past the bound");
        let other = match kind {
            Reader::LongPoll => Reader::Sse,
            Reader::Sse => Reader::LongPoll,
        };
        assert!(
            counts.admit(other),
            "{kind:?} full does not block {other:?}"
        );
        counts.leave(kind);
        assert!(counts.admit(kind), "{kind:?}: a place given back");
        assert!(!counts.admit(kind));
    }
    assert_eq!(Reader::LongPoll.max(), limits::STREAM_LONG_POLL_WAITERS_MAX);
    assert_eq!(Reader::Sse.max(), limits::STREAM_SSE_CONNECTIONS_MAX);
    // Leaving more than admitted never wraps.
    let mut counts = ReaderCounts::default();
    counts.leave(Reader::Sse);
    assert_eq!(counts, ReaderCounts::default());
}

/// The fork-reference release walks at most `STREAM_FORK_RELEASE_HOPS_MAX` hops up a chain.
#[test]
fn the_fork_release_walk_is_bounded() {
    let max = limits::STREAM_FORK_RELEASE_HOPS_MAX;
    let next = || Some("source".to_owned());
    assert_eq!(next_release_hop(1, next()), next());
    assert_eq!(next_release_hop(max - 1, next()), next());
    assert_eq!(next_release_hop(max, next()), None);
    assert_eq!(next_release_hop(1, None), None);
    // Walking a chain longer than the bound: exactly `max` hops.
    let (mut hops, mut at) = (0, next());
    while let Some(_name) = at.take() {
        hops += 1;
        at = next_release_hop(hops, next());
    }
    assert_eq!(hops, max);
}

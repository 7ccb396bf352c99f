//! The snapshot stream's pacing (`core::coalesce`) under a fake clock: a model streaming an
//! answer at two paces (as fast as the host: a hundred chunks a millisecond; and 50 chunks a
//! second), a reader that keeps up and a slow one, and the contract checked on the lines it got:
//! - the first text within one frame of its arrival;
//! - the byte budget: after each line the next waits its interval (`Pacing::interval_ms`), unless
//!   a change would otherwise wait longer than `SNAPSHOT_WAIT_MS_MAX`;
//! - the minimum update rate: no text waits longer than `SNAPSHOT_WAIT_MS_MAX` for a reader that
//!   keeps up;
//! - the last snapshot always sent, showing every chunk, at once when the turn closes;
//! - a slow reader gets the newest state each time it reads, never a backlog.
//!
//! Line sizes follow a full snapshot: a fixed head and tail plus the answer's text so far. The
//! same checks run over an unpaced mailbox (every change due at once: the stream before pacing)
//! and must fail there, so they can fail.
#![cfg(not(target_arch = "wasm32"))]

use turnkeep::core::coalesce::{Coalescer, Pacing, Take, Urgency};
use turnkeep::core::limits::{
    SNAPSHOT_BYTES_PER_S_DEFAULT, SNAPSHOT_FRAME_MS, SNAPSHOT_WAIT_MS_MAX,
};

/// A snapshot's bytes besides the answer (envelope, user message, status, usage, lineage).
const LINE_HEAD_BYTES: usize = 600;
/// One chunk of the answer: ` w1234`.
const CHUNK_BYTES: usize = 6;
const PACING: Pacing = Pacing {
    bytes_per_s: SNAPSHOT_BYTES_PER_S_DEFAULT,
};

#[derive(Clone, Copy, Debug)]
enum Pace {
    /// As fast as the host: this many chunks each millisecond.
    Host { chunks_per_ms: u64 },
    /// A chunk every this many milliseconds (50 chunks/s: 20).
    Every { ms: u64 },
}

impl Pace {
    const HOST: Pace = Pace::Host { chunks_per_ms: 100 };
    const FIFTY_PER_S: Pace = Pace::Every { ms: 20 };

    /// When chunk `n` (1-based) arrives; the user's message is at 0.
    fn arrival_ms(self, n: u64) -> u64 {
        match self {
            Pace::Host { chunks_per_ms } => n / chunks_per_ms,
            Pace::Every { ms } => n * ms,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Reader {
    /// Asks for the next line as soon as it has one.
    KeepsUp,
    /// Reads one line every this many milliseconds.
    Slow { every_ms: u64 },
}

/// A line the reader got: when, how long, and how many chunks of the answer it shows.
#[derive(Clone, Copy, Debug)]
struct Got {
    at_ms: u64,
    bytes: usize,
    chunks: u64,
}

/// The mailbox under test.
trait Mailbox {
    fn publish(&mut self, chunks: u64, urgency: Urgency, now_ms: u64);
    fn close(&mut self, now_ms: u64);
    fn take(&mut self, now_ms: u64) -> Take<u64>;
    fn sent(&mut self, bytes: usize, now_ms: u64);
}

impl Mailbox for Coalescer<u64> {
    fn publish(&mut self, chunks: u64, urgency: Urgency, now_ms: u64) {
        Coalescer::publish(self, chunks, urgency, now_ms);
    }
    fn close(&mut self, now_ms: u64) {
        self.close_with(None, now_ms);
    }
    fn take(&mut self, now_ms: u64) -> Take<u64> {
        Coalescer::take(self, now_ms)
    }
    fn sent(&mut self, bytes: usize, now_ms: u64) {
        Coalescer::sent(self, bytes, now_ms);
    }
}

/// The stream before pacing: one slot, every item due at once.
#[derive(Default)]
struct Unpaced {
    pending: Option<u64>,
    closed: bool,
}

impl Mailbox for Unpaced {
    fn publish(&mut self, chunks: u64, _: Urgency, _: u64) {
        self.pending = Some(chunks);
    }
    fn close(&mut self, _: u64) {
        self.closed = true;
    }
    fn take(&mut self, _: u64) -> Take<u64> {
        match self.pending.take() {
            Some(chunks) => Take::Item(chunks),
            None if self.closed => Take::Closed,
            None => Take::Empty,
        }
    }
    fn sent(&mut self, _: usize, _: u64) {}
}

fn line_bytes(chunks: u64) -> usize {
    LINE_HEAD_BYTES + chunks as usize * CHUNK_BYTES
}

/// One turn of `chunks` chunks at `pace`, read by `reader`, a millisecond at a time. The
/// user's message is the first change (prompt: nothing was sent), the first text is prompt, the
/// rest paced (what `LineEncoder::urgency` says for a streaming answer); 1 ms after the last
/// chunk the answer is complete (one more change) and the turn closes.
fn simulate(mailbox: &mut dyn Mailbox, chunks: u64, pace: Pace, reader: Reader) -> Vec<Got> {
    let close_ms = pace.arrival_ms(chunks) + 1;
    let mut got = Vec::new();
    let mut published = 0u64;
    let mut next_read_ms = 0u64;
    let mut closed = false;
    mailbox.publish(0, Urgency::Prompt, 0);
    let mut now = 0u64;
    loop {
        while published < chunks && pace.arrival_ms(published + 1) <= now {
            published += 1;
            let urgency = if published == 1 {
                Urgency::Prompt
            } else {
                Urgency::Paced
            };
            mailbox.publish(published, urgency, now);
        }
        if !closed && now >= close_ms {
            mailbox.publish(chunks, Urgency::Prompt, now); // the answer complete
            mailbox.close(now);
            closed = true;
        }
        if now >= next_read_ms {
            match mailbox.take(now) {
                Take::Item(shown) => {
                    let bytes = line_bytes(shown);
                    mailbox.sent(bytes, now);
                    got.push(Got {
                        at_ms: now,
                        bytes,
                        chunks: shown,
                    });
                    if let Reader::Slow { every_ms } = reader {
                        next_read_ms = now + every_ms;
                    }
                }
                Take::Closed => return got,
                Take::Empty | Take::NotBefore(_) => {}
            }
        }
        now += 1;
        assert!(now <= close_ms + 10_000, "the stream never closed");
    }
}

/// The contract for a reader that keeps up; `Err` says what broke.
fn check_keeping_up(got: &[Got], chunks: u64, pace: Pace) -> Result<(), String> {
    let close_ms = pace.arrival_ms(chunks) + 1;
    let last = got.last().ok_or("no line")?;
    if last.chunks != chunks || last.at_ms != close_ms {
        return Err(format!(
            "last line {last:?}, expected all {chunks} chunks at {close_ms} ms"
        ));
    }
    let first_text = got.iter().find(|g| g.chunks >= 1).ok_or("no text")?;
    if first_text.at_ms > pace.arrival_ms(1) + SNAPSHOT_FRAME_MS {
        return Err(format!("first text at {} ms", first_text.at_ms));
    }
    for n in 1..=chunks {
        let arrived = pace.arrival_ms(n);
        let shown = got
            .iter()
            .find(|g| g.chunks >= n)
            .ok_or("a chunk never shown")?;
        if shown.at_ms > arrived + SNAPSHOT_WAIT_MS_MAX {
            return Err(format!(
                "chunk {n} arrived at {arrived} ms, shown at {} ms",
                shown.at_ms
            ));
        }
    }
    check_budget(got, pace)
}

/// After every line but the first two (the user's message; the first text, which is prompt),
/// the next waited at least its interval, or up to the oldest text it shows having waited the
/// maximum; the closing line may come sooner.
fn check_budget(got: &[Got], pace: Pace) -> Result<(), String> {
    let paced = &got[..got.len() - 1];
    for pair in paced.windows(2).skip(1) {
        let waited = pair[1].at_ms - pair[0].at_ms;
        let oldest_unseen = pace.arrival_ms(pair[0].chunks + 1);
        let due = (pair[0].at_ms + PACING.interval_ms(pair[0].bytes))
            .min(oldest_unseen + SNAPSHOT_WAIT_MS_MAX)
            - pair[0].at_ms;
        if waited < due {
            return Err(format!(
                "{} ms after a line of {} bytes (due {due} ms)",
                waited, pair[0].bytes
            ));
        }
    }
    Ok(())
}

fn paced() -> Coalescer<u64> {
    Coalescer::new(PACING)
}

#[test]
fn a_reader_that_keeps_up_gets_the_contract_at_both_paces() {
    for pace in [Pace::HOST, Pace::FIFTY_PER_S] {
        for chunks in [3, 200, 2_000, 8_000] {
            let got = simulate(&mut paced(), chunks, pace, Reader::KeepsUp);
            check_keeping_up(&got, chunks, pace)
                .unwrap_or_else(|e| panic!("{chunks} chunks at {pace:?}: {e}"));
        }
    }
}

#[test]
fn the_byte_rate_stays_under_the_budget_while_lines_are_small_enough() {
    // Lines below budget × the maximum wait: the budget rules. Over the whole stream the byte
    // rate is then at most the budget (plus the first two lines and the last).
    let limit = (PACING.bytes_per_s * SNAPSHOT_WAIT_MS_MAX / 1_000) as usize;
    let chunks = ((limit - LINE_HEAD_BYTES) / CHUNK_BYTES) as u64;
    for pace in [Pace::HOST, Pace::FIFTY_PER_S] {
        let got = simulate(&mut paced(), chunks, pace, Reader::KeepsUp);
        if got.len() < 4 {
            continue; // the host's pace ends within a frame: no paced line at all
        }
        let body = &got[2..got.len() - 1];
        let (Some(first), Some(last)) = (body.first(), body.last()) else {
            continue;
        };
        let bytes: usize = body.iter().map(|g| g.bytes).sum::<usize>() - last.bytes;
        let span_ms = last.at_ms - first.at_ms;
        let budget = PACING.bytes_per_s as f64 * span_ms as f64 / 1_000.0;
        assert!(
            bytes as f64 <= budget,
            "{pace:?}: {bytes} bytes in {span_ms} ms, budget {budget}"
        );
    }
}

#[test]
fn a_long_answer_at_fifty_chunks_a_second_costs_a_tenth_of_a_line_per_chunk() {
    let chunks = 8_000;
    let every_chunk: usize = (0..=chunks).map(line_bytes).sum();
    let got = simulate(&mut paced(), chunks, Pace::FIFTY_PER_S, Reader::KeepsUp);
    let bytes: usize = got.iter().map(|g| g.bytes).sum();
    assert!(
        bytes * 10 <= every_chunk,
        "{bytes} bytes, {every_chunk} with a line per chunk"
    );
    // The unpaced stream, for comparison, sends a line for every change: the user's message,
    // each chunk, the answer complete.
    let unpaced = simulate(
        &mut Unpaced::default(),
        chunks,
        Pace::FIFTY_PER_S,
        Reader::KeepsUp,
    );
    assert_eq!(unpaced.len() as u64, chunks + 2);
    let unpaced_bytes: usize = unpaced.iter().map(|g| g.bytes).sum();
    assert_eq!(unpaced_bytes, every_chunk + line_bytes(chunks));
}

#[test]
fn a_slow_reader_gets_the_newest_state_each_time_and_the_last() {
    for pace in [Pace::HOST, Pace::FIFTY_PER_S] {
        for every_ms in [100, 700] {
            let chunks = 2_000;
            let got = simulate(&mut paced(), chunks, pace, Reader::Slow { every_ms });
            assert_eq!(got.last().map(|g| g.chunks), Some(chunks), "{pace:?}");
            for g in &got[..got.len() - 1] {
                let newest = (0..=chunks)
                    .rev()
                    .find(|&n| n == 0 || pace.arrival_ms(n) <= g.at_ms)
                    .unwrap_or(0);
                assert_eq!(g.chunks, newest, "{pace:?} every {every_ms} ms: {g:?}");
            }
            let close_ms = pace.arrival_ms(chunks) + 1;
            let reads = close_ms / every_ms + 2;
            assert!(
                got.len() as u64 <= reads,
                "{} lines for {reads} reads",
                got.len()
            );
        }
    }
}

#[test]
fn the_checks_catch_a_stream_without_pacing() {
    let chunks = 2_000;
    let pace = Pace::FIFTY_PER_S;
    let got = simulate(&mut Unpaced::default(), chunks, pace, Reader::KeepsUp);
    let error =
        check_keeping_up(&got, chunks, pace).expect_err("unpaced lines must break the budget");
    assert!(error.contains("after a line of"), "{error}");
    // And a mailbox that holds text too long breaks the update rate.
    let mut sluggish = Sluggish {
        inner: paced(),
        hold_until_ms: 0,
        lines: 0,
    };
    let got = simulate(&mut sluggish, chunks, pace, Reader::KeepsUp);
    let error = check_keeping_up(&got, chunks, pace).expect_err("late text must be caught");
    assert!(error.contains("shown at"), "{error}");
}

/// A paced mailbox that, from its third line on, holds every line twice the maximum interval
/// after the one before.
struct Sluggish {
    inner: Coalescer<u64>,
    hold_until_ms: u64,
    lines: u32,
}

impl Mailbox for Sluggish {
    fn publish(&mut self, chunks: u64, urgency: Urgency, now_ms: u64) {
        self.inner.publish(chunks, urgency, now_ms);
    }
    fn close(&mut self, now_ms: u64) {
        self.inner.close_with(None, now_ms);
    }
    fn take(&mut self, now_ms: u64) -> Take<u64> {
        if now_ms < self.hold_until_ms && !self.inner.is_closed() {
            return Take::NotBefore(self.hold_until_ms);
        }
        self.inner.take(now_ms)
    }
    fn sent(&mut self, bytes: usize, now_ms: u64) {
        self.lines += 1;
        if self.lines >= 2 {
            self.hold_until_ms = now_ms + 2 * SNAPSHOT_WAIT_MS_MAX;
        }
        self.inner.sent(bytes, now_ms);
    }
}

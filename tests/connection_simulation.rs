//! The live connection under a seeded, lossy server: reads are cut at random bytes (mid-event
//! included), refused with 503 or 404 for a while, and several readers join and leave. After
//! every schedule: each reader got a contiguous run of the log, every chunk once and in order
//! (the first reader: the whole log, unless the connection gave up with STREAM_UNAVAILABLE).
//!
//! A failing seed prints itself; `TURNKEEP_SIM_SEEDS=N` runs more. The simulator is shown able
//! to fail: a reader that delivers `data` as it arrives, not on its `control` event, trips it.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use serde_json::{json, Value};
use turnkeep::core::connection::{Action, Connection, ConnectionFailure, ReadOffset};
use turnkeep::core::projection::Projection;
use turnkeep::core::sse::SseParser;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

fn offset(n: usize) -> String {
    format!("0000000000000000_{n:016}")
}

/// The log: appends of 1 to 3 chunks; chunk `i` is `{"i": i}`; append `k` ends at offset k+1.
fn log(rng: &mut Rng, chunks: usize) -> Vec<Vec<Value>> {
    let mut appends = Vec::new();
    let mut i = 0;
    while i < chunks {
        let n = (1 + rng.below(3) as usize).min(chunks - i);
        appends.push(
            (i..i + n)
                .map(|i| json!({ "i": i, "text": "a\nb é" }))
                .collect(),
        );
        i += n;
    }
    appends
}

/// What the server sends for a read from `from` (appends already there), as the SessionStream
/// frames it: a control event first when there is nothing, one data + control per append.
fn sse_from(appends: &[Vec<Value>], available: usize, from: &ReadOffset) -> String {
    let start = match from {
        ReadOffset::Start => 0,
        ReadOffset::Now => available,
        ReadOffset::After(o) => o[17..]
            .parse::<usize>()
            .expect("an offset this server minted"),
    };
    let mut out = String::new();
    if start >= available {
        out.push_str(&format!(
            "event: control\ndata:{{\"streamNextOffset\":\"{}\",\"streamCursor\":\"7\",\"upToDate\":true}}\n\n",
            offset(start)
        ));
    }
    for (k, chunks) in appends.iter().enumerate().take(available).skip(start) {
        out.push_str(&format!(
            "event: data\ndata:{}\n\n",
            Value::Array(chunks.clone())
        ));
        out.push_str(&format!(
            "event: control\ndata:{{\"streamNextOffset\":\"{}\",\"streamCursor\":\"7\"}}\n\n",
            offset(k + 1)
        ));
    }
    out
}

/// A reader of the stream as the simulator drives it.
trait Client {
    /// Readers now subscribed (ids), after letting reader `join` in or `leave` out.
    fn join(&mut self) -> Option<u64>;
    fn leave(&mut self, reader: u64);
    /// The offset of the next read, when one should start now (timers fire at once).
    fn next_read(&mut self) -> Option<ReadOffset>;
    /// The read answered `status`.
    fn answered(&mut self, status: u16, now_ms: u64);
    fn bytes(&mut self, bytes: &[u8]);
    fn ended(&mut self, now_ms: u64);
    /// Chunks delivered to each reader so far; readers that ended and why.
    fn delivered(&self) -> &BTreeMap<u64, Vec<Value>>;
    fn ended_readers(&self) -> &BTreeMap<u64, Option<ConnectionFailure>>;
}

/// The machine, performed as the shell performs it.
struct Machine {
    c: Connection,
    pending: Vec<Action>,
    generation: u64,
    delivered: BTreeMap<u64, Vec<Value>>,
    ended: BTreeMap<u64, Option<ConnectionFailure>>,
}

impl Machine {
    fn new(seed: u64) -> Self {
        Self {
            c: Connection::new(ReadOffset::Start, Projection::new(), seed),
            pending: Vec::new(),
            generation: 0,
            delivered: BTreeMap::new(),
            ended: BTreeMap::new(),
        }
    }

    fn perform(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Deliver { readers, chunks } => {
                    for r in readers {
                        self.delivered
                            .entry(r)
                            .or_default()
                            .extend(chunks.iter().cloned());
                        self.c.took(r, chunks.len());
                    }
                }
                Action::End { readers, failure } => {
                    for r in readers {
                        self.ended.insert(r, failure);
                    }
                }
                other => self.pending.push(other),
            }
        }
    }
}

impl Client for Machine {
    fn join(&mut self) -> Option<u64> {
        let (id, actions) = self.c.subscribe();
        self.delivered.insert(id, Vec::new());
        self.perform(actions);
        Some(id)
    }
    fn leave(&mut self, reader: u64) {
        let actions = self.c.cancel(reader);
        self.perform(actions);
    }
    fn next_read(&mut self) -> Option<ReadOffset> {
        while !self.pending.is_empty() {
            match self.pending.remove(0) {
                Action::Connect {
                    generation, offset, ..
                } => {
                    self.generation = generation;
                    return Some(offset);
                }
                Action::Wait { generation, .. } => {
                    let actions = self.c.timer_fired(generation);
                    self.perform(actions);
                }
                _ => {}
            }
        }
        None
    }
    fn answered(&mut self, status: u16, now_ms: u64) {
        let actions = self.c.response(self.generation, status, true, now_ms);
        self.perform(actions);
    }
    fn bytes(&mut self, bytes: &[u8]) {
        let actions = self.c.body(self.generation, bytes);
        self.perform(actions);
    }
    fn ended(&mut self, now_ms: u64) {
        let actions = self.c.ended(self.generation, now_ms);
        self.perform(actions);
    }
    fn delivered(&self) -> &BTreeMap<u64, Vec<Value>> {
        &self.delivered
    }
    fn ended_readers(&self) -> &BTreeMap<u64, Option<ConnectionFailure>> {
        &self.ended
    }
}

/// A deliberately broken reader: delivers each `data` event as it arrives and resumes from the
/// last control event's offset (so data whose control event was lost comes twice).
struct Eager {
    offset: ReadOffset,
    sse: SseParser,
    reading: bool,
    delivered: BTreeMap<u64, Vec<Value>>,
    ended: BTreeMap<u64, Option<ConnectionFailure>>,
}

impl Client for Eager {
    fn join(&mut self) -> Option<u64> {
        self.delivered.insert(1, Vec::new());
        (self.delivered.len() == 1).then_some(1)
    }
    fn leave(&mut self, _: u64) {}
    fn next_read(&mut self) -> Option<ReadOffset> {
        if self.reading {
            return None;
        }
        self.reading = true;
        self.sse = SseParser::new();
        Some(self.offset.clone())
    }
    fn answered(&mut self, status: u16, _: u64) {
        if status != 200 {
            self.reading = false;
        }
    }
    fn bytes(&mut self, bytes: &[u8]) {
        for event in self.sse.push(bytes).expect("events") {
            let value: Value = serde_json::from_str(&event.data).expect("json");
            match event.event.as_str() {
                "data" => self
                    .delivered
                    .get_mut(&1)
                    .unwrap()
                    .extend(value.as_array().unwrap().iter().cloned()),
                _ => {
                    self.offset =
                        ReadOffset::After(value["streamNextOffset"].as_str().unwrap().into())
                }
            }
        }
    }
    fn ended(&mut self, _: u64) {
        self.reading = false;
    }
    fn delivered(&self) -> &BTreeMap<u64, Vec<Value>> {
        &self.delivered
    }
    fn ended_readers(&self) -> &BTreeMap<u64, Option<ConnectionFailure>> {
        &self.ended
    }
}

/// Runs one schedule; `Err` says what went wrong.
fn simulate(client: &mut dyn Client, seed: u64) -> Result<(), String> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let chunks = 20 + rng.below(60) as usize;
    let appends = log(&mut rng, chunks);
    let total: usize = appends.iter().map(Vec::len).sum();
    let mut available = 0; // appends the server has; the log grows as reads go on
    let first = client.join().expect("a first reader");
    let mut others: Vec<u64> = Vec::new();
    let mut now_ms = 0u64;
    for _round in 0..2_000 {
        if client.ended_readers().contains_key(&first) {
            break;
        }
        if available == appends.len() && client.delivered()[&first].len() >= total {
            break;
        }
        available = (available + rng.below(4) as usize).min(appends.len());
        // Readers come and go; the first stays.
        if rng.chance(150) {
            if let Some(id) = client.join() {
                others.push(id);
            }
        }
        if !others.is_empty() && rng.chance(100) {
            let leaving = others.remove(rng.below(others.len() as u64) as usize);
            client.leave(leaving);
        }
        let Some(from) = client.next_read() else {
            continue;
        };
        now_ms += rng.below(1_500);
        match rng.below(100) {
            0..=7 => {
                client.answered(503, now_ms);
                continue;
            }
            8..=11 => {
                client.answered(404, now_ms);
                continue;
            }
            _ => client.answered(200, now_ms),
        }
        let text = sse_from(&appends, available, &from);
        let bytes = text.as_bytes();
        // Cut anywhere (mid-event too), or let the whole read through; send it in pieces.
        let end = if rng.chance(600) {
            rng.below(bytes.len() as u64 + 1) as usize
        } else {
            bytes.len()
        };
        let mut at = 0;
        while at < end {
            let step = (1 + rng.below(64) as usize).min(end - at);
            client.bytes(&bytes[at..at + step]);
            at += step;
        }
        now_ms += rng.below(1_500);
        client.ended(now_ms);
    }
    let log_chunks: Vec<Value> = appends.concat();
    for (reader, got) in client.delivered() {
        let Some(start) = got.first().map(|c| c["i"].as_u64().unwrap() as usize) else {
            continue;
        };
        if *reader == first && start != 0 {
            return Err(format!(
                "seed {seed}: the first reader started at chunk {start}"
            ));
        }
        let expected = &log_chunks[start..(start + got.len()).min(total)];
        if got.as_slice() != expected {
            return Err(format!(
                "seed {seed}: reader {reader} got {:?}, not a run of the log",
                got.iter()
                    .map(|c| c["i"].as_u64().unwrap())
                    .collect::<Vec<_>>()
            ));
        }
    }
    match client.ended_readers().get(&first) {
        None if client.delivered()[&first].len() != total => {
            Err(format!("seed {seed}: the first reader stalled"))
        }
        Some(Some(ConnectionFailure::Unavailable)) | None => Ok(()),
        Some(other) => Err(format!(
            "seed {seed}: the first reader ended with {other:?}"
        )),
    }
}

fn seeds() -> u64 {
    std::env::var("TURNKEEP_SIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500)
}

#[test]
fn every_reader_gets_a_contiguous_run_of_the_log_once_and_in_order() {
    let mut complete = 0;
    for seed in 0..seeds() {
        let mut machine = Machine::new(seed);
        simulate(&mut machine, seed).unwrap_or_else(|e| panic!("{e}"));
        if !machine.ended.contains_key(&1) {
            complete += 1;
        }
    }
    // Most schedules read the whole log; the rest gave up after too many failures in a row.
    assert!(
        complete * 10 >= seeds() * 9,
        "{complete} of {} schedules completed",
        seeds()
    );
}

#[test]
fn the_simulation_catches_a_reader_that_delivers_data_before_its_control_event() {
    let caught = (0..seeds()).any(|seed| {
        let mut eager = Eager {
            offset: ReadOffset::Start,
            sse: SseParser::new(),
            reading: false,
            delivered: BTreeMap::new(),
            ended: BTreeMap::new(),
        };
        simulate(&mut eager, seed).is_err()
    });
    assert!(caught, "the simulator never caught the eager reader");
}

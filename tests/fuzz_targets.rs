//! The fuzz targets of `fuzz/` under `cargo test`, on a short budget: every committed input
//! (`fuzz/seeds/<target>/`, `fuzz/regressions/<target>/`), then a seeded random run per target
//! (structure-aware inputs, and mutated seeds). The long, coverage-guided runs are
//! `scripts/fuzz.sh TARGET [RUNS]` (libFuzzer); both call the same `run(&[u8])` functions.
//!
//! `TURNKEEP_FUZZ_INPUTS` sets the random inputs per target (default [`INPUTS_DEFAULT`]),
//! `TURNKEEP_FUZZ_SEED` the seed. A failing input is written to
//! `target/fuzz-failures/<target>/<hash>` and the test names it; commit it under
//! `fuzz/regressions/<target>/` with the fix.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

#[path = "../fuzz/src/targets/mod.rs"]
#[allow(dead_code)]
mod targets;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

use targets::gen::STRUCTURED;
use targets::TARGETS;

/// Random inputs per target in `cargo test` (debug build): about half a second per target.
const INPUTS_DEFAULT: usize = 1_500;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The committed inputs of a target, in a stable order.
fn committed_inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut inputs = Vec::new();
    for kind in ["seeds", "regressions"] {
        let dir = fuzz_dir().join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("dir entry").path()).collect();
        paths.sort();
        for path in paths {
            let bytes = std::fs::read(&path).expect("read a committed input");
            inputs.push((path, bytes));
        }
    }
    inputs
}

/// xorshift64*: the runner's only randomness, seeded, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// FNV-1a: a stable name for an input file.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A random input: mostly structure-aware (the generator makes sense of any bytes), sometimes
/// a committed input with a few bytes flipped, inserted or removed.
fn random_input(rng: &mut Rng, committed: &[(PathBuf, Vec<u8>)]) -> Vec<u8> {
    if !committed.is_empty() && rng.below(4) == 0 {
        let mut bytes = committed[rng.below(committed.len())].1.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len() + 1);
            match rng.below(3) {
                0 if at < bytes.len() => bytes[at] = rng.next() as u8,
                1 if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, rng.next() as u8),
            }
        }
        return bytes;
    }
    let len = if rng.below(8) == 0 {
        rng.below(2_048)
    } else {
        rng.below(256)
    };
    let mut bytes = vec![STRUCTURED];
    bytes.extend((0..len).map(|_| rng.next() as u8));
    bytes
}

/// Runs one input; on failure saves it and fails naming where it came from.
fn run_one(target: &str, run: fn(&[u8]), input: &[u8], origin: &str) {
    if catch_unwind(AssertUnwindSafe(|| run(input))).is_ok() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fuzz-failures")
        .join(target);
    std::fs::create_dir_all(&dir).expect("create target/fuzz-failures");
    let path = dir.join(format!("{:016x}", fnv(input)));
    std::fs::write(&path, input).expect("save the failing input");
    panic!(
        "fuzz target {target} failed on {origin} (property message above).\n\
         input saved: {}\n\
         reproduce:   scripts/fuzz.sh {target} {}\n\
         keep it:     cp {} fuzz/regressions/{target}/",
        path.display(),
        path.display(),
        path.display()
    );
}

fn seed() -> u64 {
    std::env::var("TURNKEEP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7e57_f022)
}

fn inputs_per_target() -> usize {
    std::env::var("TURNKEEP_FUZZ_INPUTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(INPUTS_DEFAULT)
}

fn fuzz(target: &str) {
    let run = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, run)| *run)
        .expect("a target of fuzz/src/targets");
    let started = Instant::now();
    let committed = committed_inputs(target);
    for (path, bytes) in &committed {
        run_one(target, run, bytes, &path.display().to_string());
    }
    let seed = seed() ^ fnv(target.as_bytes());
    let mut rng = Rng(seed | 1);
    let n = inputs_per_target();
    for i in 0..n {
        let input = random_input(&mut rng, &committed);
        run_one(
            target,
            run,
            &input,
            &format!("random input {i} of seed {seed}"),
        );
    }
    eprintln!(
        "fuzz {target}: {} committed + {n} random inputs in {:.2} s",
        committed.len(),
        started.elapsed().as_secs_f64()
    );
}

macro_rules! fuzz_tests {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { fuzz(stringify!($name)); })*

        #[test]
        fn every_target_is_tested_here() {
            let tested = [$(stringify!($name)),*];
            let listed: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
            assert_eq!(listed, tested);
        }
    };
}

fuzz_tests!(
    turn_event,
    session_envelope,
    streams_offset,
    streams_headers,
    streams_json_mode,
    streams_producer,
    streams_append,
    openai_sse,
    openai_stream,
);

/// Every target has its libFuzzer binary, and every input folder belongs to a target.
#[test]
fn targets_binaries_and_input_folders_agree() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (name, _) in TARGETS {
        assert!(
            fuzz_dir().join(format!("fuzz_targets/{name}.rs")).is_file(),
            "fuzz_targets/{name}.rs"
        );
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "[[bin]] {name}"
        );
    }
    for kind in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(kind)) else {
            continue;
        };
        for entry in entries {
            let name = entry
                .expect("dir entry")
                .file_name()
                .into_string()
                .expect("UTF-8 name");
            assert!(
                TARGETS.iter().any(|(t, _)| *t == name),
                "fuzz/{kind}/{name} has no target"
            );
        }
    }
}

/// The runner itself can fail: a target that breaks on one input in 256 is caught by the
/// random budget, and the failure is reported.
#[test]
fn the_runner_catches_a_failing_target() {
    fn fragile(data: &[u8]) {
        assert!(data.get(1) != Some(&0x2a), "fragile target broke");
    }
    let mut rng = Rng(7);
    let caught = (0..5_000).any(|_| {
        let input = random_input(&mut rng, &[]);
        catch_unwind(|| fragile(&input)).is_err()
    });
    assert!(caught, "the random budget never reached the failing input");
    let report =
        catch_unwind(|| run_one("runner_self_test", fragile, &[STRUCTURED, 0x2a], "a test"));
    assert!(report.is_err(), "run_one must fail on a failing input");
}

/// The structure-aware generators must mostly produce valid input, or random bytes would only
/// ever reach the decoders' first checks: a share of generated turn events and session
/// envelopes decode, and a share does not.
#[test]
fn generated_inputs_reach_both_outcomes() {
    use targets::gen::Gen;
    let mut rng = Rng(11);
    let (mut events_ok, mut envelopes_ok) = (0, 0);
    let n = 1_000;
    for _ in 0..n {
        let bytes: Vec<u8> = (0..rng.below(512)).map(|_| rng.next() as u8).collect();
        let event = targets::turn_event::event(&mut Gen::new(&bytes));
        events_ok += usize::from(turnkeep::core::protocol::decode_turn_event(&event).is_ok());
        let envelope = targets::session_envelope::envelope(&mut Gen::new(&bytes));
        let decoded = turnkeep::core::session::decode_session_snapshot(&envelope);
        envelopes_ok += usize::from(decoded.is_ok());
    }
    eprintln!("valid: {events_ok} of {n} turn events, {envelopes_ok} of {n} envelopes");
    for (what, ok) in [("turn events", events_ok), ("envelopes", envelopes_ok)] {
        assert!(
            ok > n / 5 && ok < n * 9 / 10,
            "{ok} of {n} generated {what} decode"
        );
    }
}

#!/usr/bin/env bash
# The host-independent crates (src/core, src/ports, src/turn, src/storage) read no clock, draw no
# randomness and do no I/O: clippy with src/clippy.toml's disallowed methods, types and macros
# denied (every other lint allowed: this is a boundary check, not a style check). Then the same
# lints on a scratch crate under src/ that breaks each kind of rule, which must fail: the check
# is shown able to catch what it is for, on every run.
set -euo pipefail
cd "$(dirname "$0")/.."
lints=(-A clippy::all -D clippy::disallowed_methods -D clippy::disallowed_types -D clippy::disallowed_macros)
cargo clippy --quiet -p turnkeep-core -p turnkeep-ports -p turnkeep-turn -p turnkeep-storage --lib -- "${lints[@]}"
echo "[purity] the four host-independent crates: no clock, randomness or I/O"

scratch="src/.purity-scratch"
rm -rf "$scratch"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch"
cat > "$scratch/Cargo.toml" <<'TOML'
[package]
name = "purity-scratch"
version = "0.0.0"
edition = "2021"
publish = false
[lib]
path = "lib.rs"
[workspace]
TOML
cat > "$scratch/lib.rs" <<'RUST'
use std::{fs, io, time};
pub fn clock() -> u128 { time::SystemTime::now().duration_since(time::UNIX_EPOCH).map_or(0, |d| d.as_millis()) }
pub fn file() -> io::Result<String> { fs::read_to_string("x") }
pub fn print() { println!("x") }
pub fn random() -> std::collections::HashMap<u8, u8> { std::collections::HashMap::new() }
RUST
out="$(cd "$scratch" && CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-../../target}/purity-scratch" cargo clippy --quiet --lib -- "${lints[@]}" 2>&1 || true)"
for rule in "std::time::SystemTime::now" "std::fs::read_to_string" "std::println" "std::collections::HashMap::new"; do
  grep -q "$rule" <<<"$out" || { echo "[purity] ERROR: the check did not catch $rule in the scratch crate:" >&2; echo "$out" >&2; exit 1; }
done
echo "[purity] shown able to fail: a clock, file I/O, printing and a random hasher are each caught"

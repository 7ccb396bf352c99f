#!/usr/bin/env bash
# Coverage-guided fuzzing of the core's decoders with libFuzzer, on the stable toolchain.
#   scripts/fuzz.sh TARGET [RUNS]   run TARGET for RUNS inputs (default 10,000,000)
#   scripts/fuzz.sh all [RUNS]      every target in turn, then a summary
#   scripts/fuzz.sh TARGET FILE...  replay inputs (a crash, a regression) and stop
#   scripts/fuzz.sh list            the targets
# FUZZ_SECONDS=N stops each target after N seconds even if RUNS were not reached (the summary
# says how many ran). With cargo-fuzz installed, `cargo fuzz run --sanitizer none TARGET` runs the
# same targets on stable too (its default AddressSanitizer build needs nightly).
# The targets are fuzz/src/targets/ (also run on a short budget by `cargo test --test fuzz_targets`).
#
# No nightly, no cargo-fuzz, no RUSTC_BOOTSTRAP: fuzz/ (a crate outside the main build) is built
# with the sanitizer-coverage passes cargo fuzz would add, which are stable `-C` flags, and
# libfuzzer-sys (crates.io) compiles libFuzzer itself. Without a sanitizer (AddressSanitizer
# needs nightly; the core has no unsafe code), but with overflow checks and debug assertions.
# Corpus: fuzz/corpus/TARGET/ (work files, not committed), started from fuzz/seeds/TARGET/ and
# fuzz/regressions/TARGET/. Crashes land in fuzz/artifacts/TARGET/: commit each under
# fuzz/regressions/TARGET/ with its fix.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[fuzz] %s\n' "$*"; }
die() { printf '[fuzz] ERROR: %s\n' "$*" >&2; exit 1; }

targets() { sed -n 's/^name = "\([a-z_]*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^turnkeep_fuzz$'; }
[ $# -ge 1 ] || die "usage: scripts/fuzz.sh TARGET|all|list [RUNS | FILE...]"
if [ "$1" = list ]; then targets; exit 0; fi

host="$(rustc -vV | sed -n 's/^host: //p')"
export RUSTFLAGS="-Cpasses=sancov-module \
  -Cllvm-args=-sanitizer-coverage-level=4 \
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
  -Cllvm-args=-sanitizer-coverage-pc-table \
  -Cllvm-args=-sanitizer-coverage-trace-compares \
  --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps RUSTFLAGS off build scripts and proc macros (they must not be instrumented).
say "building fuzz/ for $host (libFuzzer, sanitizer coverage)"
cargo build --quiet --release --manifest-path fuzz/Cargo.toml --target "$host" --bins \
  || die "cargo build of fuzz/ failed."
bin_dir="fuzz/target/$host/release"

# Runs one target; adds "TARGET RUNS SECONDS" to the summary; fails when the target failed.
fuzz_one() {
  local target="$1" runs="$2"
  [ -x "$bin_dir/$target" ] || die "no target '$target' (scripts/fuzz.sh list)"
  local corpus="fuzz/corpus/$target" artifacts="fuzz/artifacts/$target" log
  mkdir -p "$corpus" "$artifacts" fuzz/seeds/"$target" fuzz/regressions/"$target"
  log="$(mktemp)"
  say "$target: $runs inputs (log: $log)"
  local status=0
  "$bin_dir/$target" -runs="$runs" ${FUZZ_SECONDS:+-max_total_time="$FUZZ_SECONDS"} \
    -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "$corpus" fuzz/seeds/"$target" fuzz/regressions/"$target" >"$log" 2>&1 || status=$?
  local done_line; done_line="$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 || true)"
  if [ "$status" -ne 0 ] || [ -z "$done_line" ]; then
    grep -E -A4 "panicked at|ERROR: libFuzzer|Test unit written" "$log" >&2 || tail -40 "$log" >&2
    say "$target FAILED (exit $status): input in $artifacts/, full log $log"
    echo "$target FAILED -" >> "$summary"
    return 1
  fi
  local n s; n="$(echo "$done_line" | awk '{print $2}')"; s="$(echo "$done_line" | awk '{print $5}')"
  local cov; cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')"
  say "$target: $n inputs in $s s ($(( n / (s > 0 ? s : 1) ))/s), coverage $cov edges, corpus $(ls "$corpus" | wc -l) files, no failure"
  echo "$target $n $s" >> "$summary"
}

target="$1"; shift
if [ $# -ge 1 ] && [ -f "$1" ]; then
  [ -x "$bin_dir/$target" ] || die "no target '$target' (scripts/fuzz.sh list)"
  exec "$bin_dir/$target" "$@"
fi
runs="${1:-10000000}"
[[ "$runs" =~ ^[0-9]+$ ]] || die "RUNS must be a number, got '$runs'"

summary="$(mktemp)"
failed=0
if [ "$target" = all ]; then
  for t in $(targets); do fuzz_one "$t" "$runs" || failed=1; done
else
  fuzz_one "$target" "$runs" || failed=1
fi
say "summary (target inputs seconds):"
column -t "$summary" | sed 's/^/[fuzz]   /'
exit "$failed"

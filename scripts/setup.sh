#!/usr/bin/env bash
# Prepares everything `npm test` and `npm start` need, from package registries only.
# Idempotent: each step checks first and is a no-op when already done (about a second warm).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

command -v cargo >/dev/null || die "cargo not found: install Rust (rustup) first."
command -v node >/dev/null || die "node not found: install Node.js 20 or newer."
command -v npm >/dev/null || die "npm not found: install npm (comes with Node.js)."
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js $(node --version) is too old: need 20 or newer."

# 1. The wasm32 target.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding Rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown || die "rustup target add wasm32-unknown-unknown failed."
fi

# 1b. clippy (scripts/purity.sh lints the host-independent crates with it).
if ! cargo clippy --version >/dev/null 2>&1; then
  say "adding the Rust component clippy"
  rustup component add clippy || die "rustup component add clippy failed."
fi

# 2. wasm-bindgen CLI, exactly the library version in Cargo.lock (they must match).
want="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)"
[ -n "$want" ] || die "could not read the wasm-bindgen version from Cargo.lock."
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
have_runner="$(wasm-bindgen-test-runner --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have" != "$want" ] || [ "$have_runner" != "$want" ]; then
  say "installing wasm-bindgen-cli $want (found '${have:-none}'; takes ~6 min cold)"
  # No --locked: the CLI's own lockfile pins a crate version the registry mirror may lack.
  cargo install wasm-bindgen-cli --version "=$want" || die "cargo install wasm-bindgen-cli =$want failed."
fi
command -v wasm-bindgen >/dev/null || die "wasm-bindgen is installed but not on PATH: add ~/.cargo/bin to PATH."

# 2a. Every crate Cargo.lock names, for every target (a second when they are all here):
#     `cargo test` downloads only what the host build needs, and tests/tidy.rs reads the whole
#     dependency graph with `cargo metadata --offline`, which needs the rest (wasm32-only,
#     Windows-only crates) too. Without it a fresh machine fails that test.
cargo fetch --locked >/dev/null 2>&1 || die "cargo fetch failed (crates.io unreachable?)."

# 2b. wasm-pack, which `npm test` runs the wasm-bindgen tests with (Node and headless Chromium).
#     scripts/test.sh passes `--mode no-install` (use the wasm-bindgen CLI above, never download
#     one) and `--chromedriver /usr/bin/chromedriver` (Debian's, step 4).
want_wasm_pack=0.15.1
have_wasm_pack="$(wasm-pack --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have_wasm_pack" != "$want_wasm_pack" ]; then
  say "installing wasm-pack $want_wasm_pack (found '${have_wasm_pack:-none}'; takes ~3 min cold)"
  cargo install wasm-pack --version "=$want_wasm_pack" --locked || die "cargo install wasm-pack =$want_wasm_pack failed."
fi

# npm_locked DIR: installs DIR's locked npm dependencies, when its lockfile changed since the last
# install there (the lockfile's hash is kept in node_modules/, so a cached node_modules is reused).
npm_locked() {
  local dir="$1" want stamp="$1/node_modules/.turnkeep-lock-sha256" log
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || return 0
  say "npm ci in $dir"
  log="$(mktemp)"
  if ! (cd "$dir" && npm ci --no-audit --no-fund) >"$log" 2>&1; then
    # npm ci refuses a lockfile that names an optional dependency the registry does not serve
    # (vite's Windows-only napi-windows-process-start-time is absent from some mirrors). The
    # same locked versions install with `npm install`; --no-save keeps package-lock.json as is.
    say "npm ci refused the lockfile ($(grep -m1 -o 'Missing: [^ ]*' "$log" || echo 'see below')); installing the locked versions with npm install --no-save"
    (cd "$dir" && npm install --no-save --no-audit --no-fund) || { cat "$log" >&2; die "npm install in $dir failed."; }
  fi
  rm -f "$log"
  echo "$want" > "$stamp"
}

# 3. npm dev dependencies (wrangler, miniflare, playwright-core, esbuild), from package-lock.json.
npm_locked .

# 4. Headless Chromium and its driver, from Debian (never a browser download).
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian chromium and chromium-driver"
    apt-get update -qq || die "apt-get update failed."
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver \
      || die "apt-get install chromium chromium-driver failed."
  else
    die "/usr/bin/chromium or /usr/bin/chromedriver is missing. Install them as root: apt-get install -y chromium chromium-driver"
  fi
fi

# 5. Redis and PostgreSQL servers for the storage adapter tests (tests/stores/ starts them on
#    loopback ports itself; nothing here runs a service). Debian's packages, only when missing.
pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if ! command -v redis-server >/dev/null || [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian redis-server and postgresql"
    apt-get update -qq || die "apt-get update failed."
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server postgresql \
      || die "apt-get install redis-server postgresql failed."
    # The packages start system services; the tests start their own servers, so stop those.
    service redis-server stop >/dev/null 2>&1 || true
    service postgresql stop >/dev/null 2>&1 || true
  else
    die "redis-server or PostgreSQL (initdb, pg_ctl) is missing. Install them as root: apt-get install -y redis-server postgresql"
  fi
fi


# 6. The example apps' dependencies (Next.js; SvelteKit and its own wrangler), each from its own
#    lockfile. turnkeep itself is not among them: the example tests install the packed tarball.
for example in examples/*/; do
  [ -f "$example/package-lock.json" ] && npm_locked "${example%/}"
done


say "ready (wasm-bindgen $want, wasm-pack $want_wasm_pack, node $(node --version), $(/usr/bin/chromium --version 2>/dev/null | head -1), $(redis-server --version | awk '{print $3}'), postgres $(ls /usr/lib/postgresql | sort -V | tail -1))"

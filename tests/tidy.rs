//! Tidy checks of the tree's structure (ARCHITECTURE.md, "Invariants").
//!
//! - The host-independent crates (src/core, src/ports, src/turn, src/storage) depend on nothing
//!   that knows JavaScript or Cloudflare, nor on a clock or randomness crate: checked on their
//!   whole dependency closure from `cargo metadata`. (Inside them, the compiler then refuses any
//!   use of those crates; clocks, randomness and I/O of std are clippy's, `scripts/purity.sh`.)
//! - Inside the root crate, only `src/cloudflare` knows Cloudflare (`src/web` is the npm
//!   package's shell): a text check, since both are one crate.
//!
//! Each check is shown able to fail on an input made to break it.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The workspace's host-independent crates.
const HOST_INDEPENDENT: &[&str] = &[
    "turnkeep-core",
    "turnkeep-ports",
    "turnkeep-turn",
    "turnkeep-storage",
];

/// Crates none of them may reach: [crate, what it would mean].
const FORBIDDEN_CRATES: &[(&str, &str)] = &[
    ("wasm-bindgen", "JavaScript"),
    ("wasm-bindgen-futures", "JavaScript"),
    ("js-sys", "JavaScript"),
    ("web-sys", "JavaScript"),
    ("worker", "Cloudflare"),
    ("getrandom", "randomness"),
    ("rand", "randomness"),
    ("chrono", "a clock"),
    ("time", "a clock"),
];

/// `cargo metadata`'s resolve: package name → the names of its normal (non-dev) dependencies.
fn dependency_graph() -> BTreeMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata JSON");
    let name_of: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut graph = BTreeMap::new();
    for node in metadata["resolve"]["nodes"]
        .as_array()
        .expect("resolve nodes")
    {
        let name = name_of[node["id"].as_str().unwrap()].to_owned();
        let deps = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build")
            })
            .map(|d| name_of[d["pkg"].as_str().unwrap()].to_owned())
            .collect();
        graph.insert(name, deps);
    }
    graph
}

/// Every crate `root` reaches through `graph`.
fn closure(graph: &BTreeMap<String, Vec<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(name) = stack.pop() {
        for dep in graph.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

/// "`crate` reaches `dep` (what)" for every forbidden crate in its closure.
fn forbidden_reached(graph: &BTreeMap<String, Vec<String>>, krate: &str) -> Vec<String> {
    let reached = closure(graph, krate);
    FORBIDDEN_CRATES
        .iter()
        .filter(|(dep, _)| reached.contains(*dep))
        .map(|(dep, what)| format!("{krate} reaches {dep} ({what})"))
        .collect()
}

#[test]
fn the_host_independent_crates_reach_no_javascript_cloudflare_clock_or_randomness() {
    let graph = dependency_graph();
    for krate in HOST_INDEPENDENT {
        assert!(graph.contains_key(*krate), "{krate} is a workspace member");
    }
    let bad: Vec<String> = HOST_INDEPENDENT
        .iter()
        .flat_map(|k| forbidden_reached(&graph, k))
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The root crate (the wasm shell) does reach them: the graph is the real one.
    assert!(forbidden_reached(&graph, "turnkeep")
        .iter()
        .any(|line| line.contains("wasm-bindgen")));
}

#[test]
fn the_dependency_check_catches_a_forbidden_crate_however_deep() {
    let graph: BTreeMap<String, Vec<String>> = [
        ("turnkeep-core", vec!["serde"]),
        ("serde", vec!["helper"]),
        ("helper", vec!["js-sys"]),
        ("js-sys", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(
        forbidden_reached(&graph, "turnkeep-core"),
        vec!["turnkeep-core reaches js-sys (JavaScript)"]
    );
}

/// Names that mean Cloudflare is known.
const CLOUDFLARE: &[(&str, &str)] = &[
    ("worker::", "the worker crate"),
    ("cloudflare", "Cloudflare"),
    ("DurableObject", "Durable Objects"),
    ("transactionSync", "Durable Object storage"),
    ("storage.sql", "Durable Object storage"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names of `names` found in the code (not the `//` comments) of `source`.
fn names_in(source: &str, names: &[(&str, &'static str)]) -> Vec<&'static str> {
    let code: String = source
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    names
        .iter()
        .filter(|(name, _)| code.contains(name))
        .map(|(_, what)| *what)
        .collect()
}

#[test]
fn only_the_cloudflare_module_knows_cloudflare() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web"),
        &mut files,
    );
    assert!(files.len() > 10, "the src/web sources");
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("read source");
            names_in(&text, CLOUDFLARE)
                .into_iter()
                .map(move |what| format!("{} uses {what}", f.display()))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "src/web must not know Cloudflare:\n{}",
        bad.join("\n")
    );
    // The scan can fail: each name in code is caught, the same name in a comment is not.
    for (name, what) in CLOUDFLARE {
        assert_eq!(
            names_in(&format!("use {name}x;"), CLOUDFLARE),
            vec![*what],
            "{name}"
        );
        assert!(
            names_in(&format!("// {name}"), CLOUDFLARE).is_empty(),
            "{name} in a comment"
        );
    }
}

//! Invariants of ARCHITECTURE.md, checked on the sources: `src/core` knows nothing of
//! JavaScript, Cloudflare, clocks, randomness or I/O; the host-independent layers (`src/turn`,
//! `src/ports`, `src/storage`) know no JavaScript; only `src/cloudflare` knows Cloudflare.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use std::path::{Path, PathBuf};

const FORBIDDEN: &[(&str, &str)] = &[
    ("web_sys", "web-sys"),
    ("js_sys", "js-sys"),
    ("wasm_bindgen", "wasm-bindgen"),
    ("worker::", "the worker crate"),
    ("extern crate worker", "the worker crate"),
    ("SystemTime", "a clock"),
    ("Instant", "a clock"),
    ("chrono::", "a clock"),
    ("rand::", "randomness"),
    ("getrandom", "randomness"),
    ("std::fs", "file I/O"),
    ("std::net", "network I/O"),
    ("std::io", "I/O"),
    ("std::env", "the environment"),
    ("std::thread", "threads"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/core") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Returns the forbidden names found in `source`, ignoring `//` comments.
fn violations(source: &str) -> Vec<&'static str> {
    let code = code_only(source);
    FORBIDDEN
        .iter()
        .filter(|(name, _)| code.contains(name))
        .map(|(_, what)| *what)
        .collect()
}

#[test]
fn core_imports_nothing_of_the_outside_world() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(
        files.len() >= 3,
        "expected the core sources under {}",
        root.display()
    );
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("read source");
            violations(&text)
                .into_iter()
                .map(move |what| format!("{} uses {what}", f.display()))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "src/core must stay pure:\n{}",
        bad.join("\n")
    );
}

/// Names that mean JavaScript is known.
const JAVASCRIPT: &[(&str, &str)] = &[
    ("web_sys", "web-sys"),
    ("js_sys", "js-sys"),
    ("wasm_bindgen", "wasm-bindgen"),
];

/// Names that mean Cloudflare is known.
const CLOUDFLARE: &[(&str, &str)] = &[
    ("cloudflare", "Cloudflare"),
    ("DurableObject", "Durable Objects"),
    ("transactionSync", "Durable Object storage"),
    ("storage.sql", "Durable Object storage"),
];

/// Forbidden names found in the code (not the `//` comments) of every file under `dir`.
fn layer_violations(dir: &str, names: &[(&str, &str)]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(
        !files.is_empty(),
        "expected sources under {}",
        root.display()
    );
    files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("read source");
            let code = code_only(&text);
            names
                .iter()
                .filter(|(name, _)| code.contains(name))
                .map(|(_, what)| format!("{} uses {what}", f.display()))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn code_only(source: &str) -> String {
    source
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn host_independent_layers_know_no_javascript() {
    let bad: Vec<String> = ["src/turn", "src/ports", "src/storage"]
        .iter()
        .flat_map(|dir| layer_violations(dir, &[JAVASCRIPT, CLOUDFLARE].concat()))
        .collect();
    assert!(
        bad.is_empty(),
        "these layers must stay host-independent:\n{}",
        bad.join("\n")
    );
}

#[test]
fn only_the_cloudflare_module_knows_cloudflare() {
    let bad = layer_violations("src/web", CLOUDFLARE);
    assert!(
        bad.is_empty(),
        "src/web must not know Cloudflare:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_checker_catches_each_forbidden_name() {
    // The scan itself must be able to fail: each forbidden name in code is reported,
    // and the same name inside a comment is not.
    for (name, what) in FORBIDDEN {
        assert_eq!(violations(&format!("use {name}x;")), vec![*what], "{name}");
        assert!(
            violations(&format!("// {name}")).is_empty(),
            "{name} in a comment"
        );
    }
}

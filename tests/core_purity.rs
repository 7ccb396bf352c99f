//! Invariant of ARCHITECTURE.md: `src/core` knows nothing of JavaScript, Cloudflare, clocks,
//! randomness or I/O. This test reads every file under `src/core` and fails on a forbidden name.

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
    let code: String = source
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    FORBIDDEN.iter().filter(|(name, _)| code.contains(name)).map(|(_, what)| *what).collect()
}

#[test]
fn core_imports_nothing_of_the_outside_world() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() >= 3, "expected the core sources under {}", root.display());
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("read source");
            violations(&text).into_iter().map(move |what| format!("{} uses {what}", f.display()))
        })
        .collect();
    assert!(bad.is_empty(), "src/core must stay pure:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_catches_each_forbidden_name() {
    // The scan itself must be able to fail: each forbidden name in code is reported,
    // and the same name inside a comment is not.
    for (name, what) in FORBIDDEN {
        assert_eq!(violations(&format!("use {name}x;")), vec![*what], "{name}");
        assert!(violations(&format!("// {name}")).is_empty(), "{name} in a comment");
    }
}

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

// ---- The code map and the documents (ARCHITECTURE.md, the `§` references, docs/figures.md)

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// The column a code-map line's description starts at: a name begins left of it.
const CODE_MAP_NAME_COLUMN: usize = 21;

/// The paths ARCHITECTURE.md's code map names (the fenced blocks of the "## Code map" section):
/// each line whose name column holds names (`dir/`, `file.rs`, several joined by ", "), nested
/// by two spaces under the directory above it in its block. A block's top-level names are paths
/// from the repository root.
fn code_map_paths(architecture: &str) -> BTreeSet<String> {
    let section = architecture
        .split_once("\n## Code map\n")
        .map_or("", |(_, rest)| rest.split("\n## ").next().unwrap_or(""));
    let mut paths = BTreeSet::new();
    // Fenced blocks are the odd pieces between fence lines.
    for block in section.split("```\n").skip(1).step_by(2) {
        let block = block.rsplit_once('\n').map_or(block, |(b, _)| b);
        code_map_block(block, &mut paths);
    }
    paths
}

fn code_map_block(block: &str, paths: &mut BTreeSet<String>) {
    let mut parents: Vec<(usize, String)> = Vec::new();
    for line in block.lines() {
        let indent = line.len() - line.trim_start().len();
        if indent >= CODE_MAP_NAME_COLUMN || line.trim().is_empty() {
            continue; // a description's continuation
        }
        let names = line.trim_start().split("  ").next().unwrap_or("");
        while parents.last().is_some_and(|(at, _)| *at >= indent) {
            parents.pop();
        }
        let parent = parents.last().map_or(String::new(), |(_, p)| p.clone());
        for name in names.split(", ").map(|n| n.trim().trim_end_matches(',')) {
            if !(name.ends_with('/') || name.contains('.')) || name.contains(' ') {
                continue;
            }
            let path = format!("{parent}{name}");
            if name.ends_with('/') {
                parents.push((indent, path.clone()));
            }
            paths.insert(path);
        }
    }
}

/// The module paths under `src/` as the code map names them: each directory (`src/core/session/`),
/// each file (`src/core/session/lease.rs`) except a directory's `mod.rs` or `lib.rs`, which its
/// directory stands for (the root crate's `src/lib.rs` is named as such). Hidden entries skipped.
fn src_modules(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            let module = format!("{prefix}{name}/");
            out.insert(module.clone());
            src_modules(&path, &module, out);
        } else if name.ends_with(".rs")
            && !(name == "mod.rs" || (name == "lib.rs" && prefix != "src/"))
        {
            out.insert(format!("{prefix}{name}"));
        }
    }
}

/// "`path`: why" for every module the map misses and every `src/` path it names that is not a
/// module.
fn code_map_gaps(map: &BTreeSet<String>, modules: &BTreeSet<String>) -> Vec<String> {
    let missing = modules
        .iter()
        .filter(|m| !map.contains(*m))
        .map(|m| format!("{m}: not in ARCHITECTURE.md's code map"));
    let stale = map
        .iter()
        .filter(|p| p.starts_with("src/") && !modules.contains(*p))
        .map(|p| format!("{p}: in the code map, not in src/"));
    missing.chain(stale).collect()
}

#[test]
fn every_module_is_in_the_code_map() {
    let map = code_map_paths(&read("ARCHITECTURE.md"));
    let mut modules = BTreeSet::new();
    src_modules(&root().join("src"), "src/", &mut modules);
    assert!(
        modules.len() > 150,
        "the modules under src/: {}",
        modules.len()
    );
    let gaps = code_map_gaps(&map, &modules);
    assert!(gaps.is_empty(), "{}", gaps.join("\n"));
    // The check can fail: a module the map lacks, and a map line for a module that is gone.
    let mut short = map.clone();
    short.remove("src/core/session/lease.rs");
    short.insert("src/core/session/gone.rs".into());
    assert_eq!(
        code_map_gaps(&short, &modules),
        vec![
            "src/core/session/lease.rs: not in ARCHITECTURE.md's code map",
            "src/core/session/gone.rs: in the code map, not in src/",
        ]
    );
    // Names nest by indentation; a description's continuation names nothing.
    let sample = "x\n## Code map\n### A\n```\nsrc/a/            x\n  b.rs, c.rs       y\n  d/               z\n    e.rs           w\n                     f.rs is a word here\n  g.rs             v\n```\n### B\n```\nsrc/h.rs          u\n```\n## Next\n```\nsrc/i.rs          not the map\n```\n";
    let parsed: Vec<String> = code_map_paths(sample).into_iter().collect();
    assert_eq!(
        parsed,
        [
            "src/a/",
            "src/a/b.rs",
            "src/a/c.rs",
            "src/a/d/",
            "src/a/d/e.rs",
            "src/a/g.rs",
            "src/h.rs"
        ]
    );
}

/// Names a `§` may follow: a public specification named as such.
const PUBLIC_SPECS: &[&str] = &["Durable Streams protocol", "Durable Streams PROTOCOL.md"];

/// The comment blocks (or Markdown paragraphs) of a text: runs of lines that are comments of the
/// same kind, or, in Markdown, lines up to a blank one. A `§` reference is judged in its block.
fn blocks(text: &str, markdown: bool) -> Vec<String> {
    let kind = |line: &str| -> Option<&'static str> {
        let t = line.trim_start();
        if markdown {
            return (!t.is_empty()).then_some("md");
        }
        ["//!", "///", "//", "/**", " *", "*", "#"]
            .into_iter()
            .find(|p| t.starts_with(p))
    };
    let mut out: Vec<String> = Vec::new();
    let mut current: Option<(&str, String)> = None;
    for line in text.lines() {
        let k = kind(line);
        match (&mut current, k) {
            (Some((ck, block)), Some(k)) if *ck == k || (k == "*" && *ck == "/**") => {
                block.push('\n');
                block.push_str(line);
            }
            _ => {
                if let Some((_, block)) = current.take() {
                    out.push(block);
                }
                current = k.map(|k| (k, line.to_owned()));
            }
        }
    }
    out.extend(current.map(|(_, b)| b));
    out
}

/// The `§` references of `block` not preceded, within it, by the name of a public specification
/// or of a file that exists in the tree (`exists`). A `§` followed by anything but a section
/// number or a quoted title is not a reference.
fn dangling_sections(block: &str, exists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in block.match_indices('§') {
        let after = &block[at + '§'.len_utf8()..];
        if !after.starts_with(|c: char| c.is_ascii_digit() || c == '"') {
            continue;
        }
        let before = &block[..at];
        let named = PUBLIC_SPECS.iter().any(|s| before.contains(s))
            || before
                .split(|c: char| !(c.is_alphanumeric() || "._/-".contains(c)))
                .any(|word| {
                    word.contains('.') && word.contains(|c: char| c.is_alphabetic()) && exists(word)
                });
        if !named {
            let line = block[..at].lines().last().unwrap_or("").trim_start();
            let end = after.split_whitespace().next().unwrap_or("");
            out.push(format!("{line}§{end}"));
        }
    }
    out
}

/// Text files of the tree that may hold references, without generated or installed ones.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    const SKIP: &[&str] = &[
        "node_modules",
        "target",
        "pkg",
        "pkg-client",
        "pkg-ask",
        "pkg-sandbox",
        "pkg-worker",
        "pkg-worker-test",
        "demo-assets",
        "corpus",
        "artifacts",
    ];
    const EXTENSIONS: &[&str] = &["rs", "mjs", "js", "ts", "md", "toml", "sh"];
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') || SKIP.contains(&name.as_str()) {
            continue;
        }
        if path.is_dir() {
            text_files(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| EXTENSIONS.contains(&e.to_string_lossy().as_ref()))
        {
            out.push(path);
        }
    }
}

#[test]
fn no_section_reference_points_outside_the_tree() {
    let mut files = Vec::new();
    text_files(root(), &mut files);
    assert!(files.len() > 300, "the tree's text files: {}", files.len());
    let exists = |name: &str| {
        let name = name.trim_matches(|c| c == '.' || c == '/');
        root().join(name).is_file() || root().join("src").join(name).is_file()
    };
    let mut bad = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let markdown = file.extension().is_some_and(|e| e == "md");
        for block in blocks(&text, markdown) {
            for reference in dangling_sections(&block, &exists) {
                let shown = file.strip_prefix(root()).unwrap_or(file).display();
                bad.push(format!("{shown}: {reference}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "`§` references to documents outside the tree:\n{}",
        bad.join("\n")
    );
    // The check can fail: a document the tree does not hold, a bare `§`; and passes what names
    // a file of the tree or the public protocol, earlier in the same block.
    let cases: [(&str, bool); 7] = [
        ("//! the route table (design §8)", false),
        ("//! wire facts §3 \"Resume\"", false),
        ("/// seeds §\"The canonical proxy\"", false),
        ("//! (Durable Streams protocol §5.2, §5.2.1)", true),
        (
            "//! Where the Durable Streams protocol says what:\n//! - §4.1 closure",
            true,
        ),
        ("//! see README.md §2", true),
        ("//! a `§` sign is not a reference", true),
    ];
    for (text, passes) in cases {
        let found: Vec<String> = blocks(text, false)
            .iter()
            .flat_map(|b| dangling_sections(b, &exists))
            .collect();
        assert_eq!(found.is_empty(), passes, "{text}: {found:?}");
    }
    // Blocks end where their kind of comment does: a name in another block does not count.
    assert_eq!(
        dangling_sections(
            &blocks("//! Durable Streams protocol\nfn x() {}\n//! §4", false)[1],
            &exists
        ),
        vec!["//! §4"]
    );
}

/// Measured figures in a text: a number followed by `kB` or `µs` (the units the size report and
/// the benchmarks print; limits are in KiB, MiB and ms).
fn measured_figures(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for unit in ["kB", "µs"] {
        for (at, _) in text.match_indices(unit) {
            let before = text[..at].trim_end();
            let after = text[at + unit.len()..].chars().next();
            if before.ends_with(|c: char| c.is_ascii_digit())
                && !after.is_some_and(char::is_alphanumeric)
            {
                let digits = before
                    .chars()
                    .rev()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .count();
                let number = &before[before.len() - digits..];
                out.push(format!("{number} {unit}"));
            }
        }
    }
    out
}

#[test]
fn measured_figures_live_in_docs_figures_md() {
    for doc in [
        "README.md",
        "CONTRIBUTING.md",
        "ARCHITECTURE.md",
        "Cargo.toml",
        "scripts/build.sh",
    ] {
        let found = measured_figures(&read(doc));
        assert!(
            found.is_empty(),
            "{doc} states figures docs/figures.md should hold (link to it): {found:?}"
        );
    }
    assert!(
        measured_figures(&read("docs/figures.md")).len() > 20,
        "docs/figures.md holds them"
    );
    // The check can fail.
    assert_eq!(
        measured_figures("the wasm is 348.5 kB gzip, a chunk 3.4 µs"),
        ["348.5 kB", "3.4 µs"]
    );
    assert!(measured_figures("rows of at most 256 KiB, `kB = 1000 bytes`").is_empty());
}

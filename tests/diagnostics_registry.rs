//! The diagnostic registry (`core::diagnostics`): one table of every error an HTTP surface
//! answers with. Checked here: every row is well-formed, no row is there twice, a code means one
//! thing wherever it is used, every typed error maps into the table, codes appear nowhere else in
//! `src/`, and README.md lists the table as it is.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use turnkeep::core::ask::AskFailure;
use turnkeep::core::diagnostics::{markdown_table, Row, Surface, ALL};
use turnkeep::core::protocol::{is_diagnostic_code, BoundaryError};
use turnkeep::core::sandbox::SandboxFailure;
use turnkeep::core::streams::proxy::ProxyFailure;

fn is_streams_code(code: &str) -> bool {
    code.strip_prefix("streams.v1.").is_some_and(|what| {
        !what.is_empty() && what.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    })
}

#[test]
fn every_row_is_well_formed() {
    for r in ALL {
        let code_ok = match r.surface {
            Surface::Streams => is_streams_code(r.code),
            _ => is_diagnostic_code(r.code),
        };
        assert!(code_ok, "{r:?}: code shape");
        assert!((400..=599).contains(&r.status), "{r:?}: status");
        assert!(!r.message.trim().is_empty(), "{r:?}: message");
        assert!(r.message.len() <= 120, "{r:?}: message is short");
    }
}

#[test]
fn no_row_is_there_twice() {
    let mut seen = BTreeSet::new();
    for r in ALL {
        assert!(
            seen.insert((r.surface, r.code, r.status, r.message)),
            "duplicate row {r:?}"
        );
    }
}

/// A code has one status and one retryable flag everywhere, except in AgentsKit's Ask table,
/// where `ASK_INVALID_REQUEST`, `ASK_TIMEOUT`, `ASK_GENERATION_FAILED` and `ASK_INTERNAL` each
/// cover several rows (a wire fact kept as it is).
#[test]
fn a_code_means_one_thing() {
    let mut by_code: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in ALL {
        by_code.entry(r.code).or_default().push(r);
    }
    let ask_multi = [
        "ASK_INVALID_REQUEST",
        "ASK_TIMEOUT",
        "ASK_GENERATION_FAILED",
        "ASK_INTERNAL",
    ];
    for (code, rows) in &by_code {
        if ask_multi.contains(code) {
            assert!(rows.iter().all(|r| r.surface == Surface::Ask), "{code}");
            continue;
        }
        let first = rows[0];
        for r in rows {
            assert_eq!(
                (r.status, r.retryable),
                (first.status, first.retryable),
                "{code} means two things: {first:?} and {r:?}"
            );
        }
        // Codes shared across surfaces are the generic ones only.
        let surfaces: BTreeSet<Surface> = rows.iter().map(|r| r.surface).collect();
        if surfaces.len() > 1 {
            assert!(
                [
                    "REQUEST_METHOD_NOT_ALLOWED",
                    "REQUEST_CANCELLED",
                    "SERVER_INTERNAL"
                ]
                .contains(code),
                "{code} is used by {surfaces:?}"
            );
        }
    }
    // Surface prefixes belong to their surface.
    for r in ALL {
        for (prefix, surface) in [
            ("ASK_", Surface::Ask),
            ("SANDBOX_", Surface::Sandbox),
            ("streams.", Surface::Streams),
        ] {
            if r.code.starts_with(prefix) {
                assert_eq!(r.surface, surface, "{r:?}");
            }
        }
    }
}

#[test]
fn every_typed_error_maps_into_the_table() {
    let rows: Vec<(Row, String)> = BoundaryError::ALL
        .iter()
        .map(|e| (e.row(), format!("{e:?}")))
        .chain(AskFailure::ALL.iter().map(|e| (e.row(), format!("{e:?}"))))
        .chain(
            SandboxFailure::ALL
                .iter()
                .map(|e| (e.row(), format!("{e:?}"))),
        )
        .collect();
    for (row, name) in &rows {
        assert!(
            ALL.contains(row),
            "{name} maps to {row:?}, not in the table"
        );
    }
    // The chat-stream proxy's failures too (two internal causes share one row).
    for failure in ProxyFailure::ALL {
        assert!(
            ALL.contains(&failure.row()),
            "{failure:?} is not in the table"
        );
    }
    // Each variant its own row (the chat, Ask and sandbox tables have one row per variant).
    let distinct: BTreeSet<_> = rows
        .iter()
        .map(|(r, _)| (r.surface, r.code, r.message))
        .collect();
    assert_eq!(distinct.len(), rows.len());
}

/// Every `pub` / `pub(crate) const …: Row` of the registry is listed in `ALL` (a row left out of `ALL` would
/// escape the checks above and the README).
#[test]
fn every_declared_row_is_listed() {
    let text = std::fs::read_to_string("src/core/diagnostics.rs").unwrap();
    let declared = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            (l.starts_with("pub const ") || l.starts_with("pub(crate) const "))
                && l.contains(": Row =")
        })
        .count();
    assert_eq!(declared, ALL.len());
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Codes live in one place: no other file under `src/` spells a registered code (or any
/// `streams.v1.` code) as a string literal; they name the registry's rows instead.
#[test]
fn codes_are_spelled_only_in_the_registry() {
    let codes: BTreeSet<&str> = ALL.iter().map(|r| r.code).collect();
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let mut found = Vec::new();
    for file in files {
        if file.ends_with("core/diagnostics.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code_part = line.split("//").next().unwrap_or("");
            for literal in code_part.split('"').skip(1).step_by(2) {
                if codes.contains(literal) || literal.starts_with("streams.v1.") {
                    found.push(format!("{}:{}: {literal}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "codes outside the registry:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_readme_lists_the_table() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    assert!(
        readme.contains(&markdown_table()),
        "README.md \"Diagnostics\" must hold core::diagnostics::markdown_table() as it is:\n{}",
        markdown_table()
    );
}

#[test]
fn bodies_are_versioned() {
    for r in ALL {
        let body: serde_json::Value = serde_json::from_str(&r.error_body_json()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"error": {"version": 1, "code": r.code, "message": r.message, "retryable": r.retryable}})
        );
    }
}

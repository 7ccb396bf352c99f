//! One PUT end to end: header checks, idempotent re-create, forks and initial data.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use turnkeep::core::limits::STREAM_FORK_DEPTH_MAX;
use turnkeep::core::streams::create::{
    decide_create, parse_create_headers, CreateDecision, CreateHeaders, CreateRequest, InitialData,
    Source, StreamConfig, Target,
};
use turnkeep::core::streams::offset::Offset;
use turnkeep::core::streams::ttl::Expiry;
use turnkeep::core::streams::Rejection;

const TAIL: &str = "0000000000000000_0000000000000040";

fn tail() -> Offset {
    Offset::parse(TAIL).unwrap()
}

/// Parses the headers, then decides; returns the status and (for refusals) the code.
fn run(
    req: &CreateRequest<'_>,
    target: Target<'_>,
    source: Source<'_>,
    body: &[u8],
) -> (u16, Option<&'static str>, CreateDecision) {
    match parse_create_headers(req) {
        Err(e) => (e.status(), Some(e.code()), CreateDecision::Rejected(e)),
        Ok(h) => {
            let d = decide_create(&h, target, source, body);
            let code = match &d {
                CreateDecision::Rejected(r) => Some(r.code()),
                _ => None,
            };
            (d.status(), code, d)
        }
    }
}

fn check(
    name: &str,
    req: CreateRequest<'_>,
    target: Target<'_>,
    source: Source<'_>,
    body: &[u8],
    expected: (u16, Option<&str>),
) -> CreateDecision {
    let (status, code, decision) = run(&req, target, source, body);
    assert_eq!((status, code), expected, "{name}: {decision:?}");
    decision
}

fn text() -> CreateRequest<'static> {
    CreateRequest {
        content_type: Some("text/plain"),
        ..CreateRequest::default()
    }
}

fn created(d: CreateDecision) -> (StreamConfig, Offset, InitialData, bool) {
    match d {
        CreateDecision::Create {
            config,
            start,
            initial,
            closed,
        } => (config, start, initial, closed),
        other => panic!("expected a create, got {other:?}"),
    }
}

#[test]
fn header_checks() {
    let free = Target::Free;
    let none = Source::Missing;
    let both = CreateRequest {
        ttl: Some("60"),
        expires_at: Some("2030-01-01T00:00:00Z"),
        ..text()
    };
    check(
        "ttl and expires",
        both,
        free,
        none,
        b"",
        (400, Some("streams.v1.ttl_and_expires_at")),
    );
    check(
        "bad ttl",
        CreateRequest {
            ttl: Some("03600"),
            ..text()
        },
        free,
        none,
        b"",
        (400, Some("streams.v1.ttl_invalid")),
    );
    check(
        "bad expires",
        CreateRequest {
            expires_at: Some("not-a-timestamp"),
            ..text()
        },
        free,
        none,
        b"",
        (400, Some("streams.v1.expires_at_invalid")),
    );
    let sub_alone = CreateRequest {
        fork_sub_offset: Some("0"),
        ..text()
    };
    check(
        "sub-offset without source",
        sub_alone,
        free,
        none,
        b"",
        (400, Some("streams.v1.fork_sub_offset_invalid")),
    );
    let offset_alone = CreateRequest {
        fork_offset: Some(TAIL),
        ..text()
    };
    check(
        "fork offset without source",
        offset_alone,
        free,
        none,
        b"",
        (400, Some("streams.v1.fork_offset_without_source")),
    );
    for bad in ["-1", "now", "1_2", ""] {
        let req = CreateRequest {
            forked_from: Some("/v1/stream/src"),
            fork_offset: Some(bad),
            ..text()
        };
        assert_eq!(run(&req, free, none, b"").0, 400, "fork offset {bad:?}");
    }
    for bad in ["", "-1", "01", "1.0", "abc"] {
        let req = CreateRequest {
            forked_from: Some("/v1/stream/src"),
            fork_sub_offset: Some(bad),
            ..text()
        };
        assert_eq!(
            run(&req, free, none, b"").1,
            Some("streams.v1.fork_sub_offset_invalid"),
            "sub {bad:?}"
        );
    }
}

#[test]
fn plain_creates() {
    let d = check(
        "default type",
        CreateRequest::default(),
        Target::Free,
        Source::Missing,
        b"",
        (201, None),
    );
    let (config, start, initial, closed) = created(d);
    assert_eq!(config.content_type, "application/octet-stream");
    assert_eq!(
        (start, initial, closed),
        (Offset::ZERO, InitialData::None, false)
    );
    let req = CreateRequest {
        stream_closed: Some("true"),
        ttl: Some("3600"),
        ..text()
    };
    let (config, _, initial, closed) = created(check(
        "closed with body",
        req,
        Target::Free,
        Source::Missing,
        b"done",
        (201, None),
    ));
    assert_eq!(
        (config.expiry, initial, closed),
        (
            Expiry::Ttl { seconds: 3600 },
            InitialData::Bytes(b"done".to_vec()),
            true
        )
    );
}

#[test]
fn json_initial_data() {
    let json = CreateRequest {
        content_type: Some("application/json"),
        ..CreateRequest::default()
    };
    let (_, _, initial, _) = created(check(
        "[]",
        json,
        Target::Free,
        Source::Missing,
        b"[]",
        (201, None),
    ));
    assert_eq!(initial, InitialData::None);
    let (_, _, initial, _) = created(check(
        "batch",
        json,
        Target::Free,
        Source::Missing,
        b"[1, {\"a\": 2}]",
        (201, None),
    ));
    assert_eq!(
        initial,
        InitialData::Json(vec!["1".to_owned(), "{\"a\":2}".to_owned()])
    );
    check(
        "invalid",
        json,
        Target::Free,
        Source::Missing,
        b"{oops",
        (400, Some("streams.v1.json_invalid")),
    );
}

#[test]
fn idempotent_recreate() {
    let h = parse_create_headers(&CreateRequest {
        ttl: Some("60"),
        ..text()
    })
    .unwrap();
    let existing = StreamConfig {
        content_type: "text/plain".to_owned(),
        expiry: Expiry::Ttl { seconds: 60 },
        requested_expiry: Expiry::Ttl { seconds: 60 },
        forked_from: None,
        fork_offset: None,
        fork_sub_offset: 0,
        fork_depth: 0,
    };
    let open = Target::Live {
        config: &existing,
        closed: false,
    };
    let closed = Target::Live {
        config: &existing,
        closed: true,
    };
    assert_eq!(
        decide_create(&h, open, Source::Missing, b"ignored body"),
        CreateDecision::Exists
    );
    let same_upper = CreateRequest {
        content_type: Some("TEXT/PLAIN; charset=utf-8"),
        ttl: Some("60"),
        ..CreateRequest::default()
    };
    check(
        "case-insensitive type",
        same_upper,
        open,
        Source::Missing,
        b"",
        (200, None),
    );
    check(
        "other ttl",
        CreateRequest {
            ttl: Some("61"),
            ..text()
        },
        open,
        Source::Missing,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    check(
        "no ttl",
        text(),
        open,
        Source::Missing,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    check(
        "other type",
        CreateRequest {
            content_type: Some("application/json"),
            ttl: Some("60"),
            ..CreateRequest::default()
        },
        open,
        Source::Missing,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    check(
        "open vs closed",
        CreateRequest {
            ttl: Some("60"),
            ..text()
        },
        closed,
        Source::Missing,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    check(
        "closed vs closed",
        CreateRequest {
            ttl: Some("60"),
            stream_closed: Some("true"),
            ..text()
        },
        closed,
        Source::Missing,
        b"",
        (200, None),
    );
    check(
        "closed vs open",
        CreateRequest {
            ttl: Some("60"),
            stream_closed: Some("true"),
            ..text()
        },
        open,
        Source::Missing,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    check(
        "soft-deleted path",
        text(),
        Target::SoftDeleted,
        Source::Missing,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    let default_type = StreamConfig {
        content_type: "application/octet-stream".to_owned(),
        expiry: Expiry::Never,
        requested_expiry: Expiry::Never,
        ..existing.clone()
    };
    let target = Target::Live {
        config: &default_type,
        closed: false,
    };
    check(
        "missing type matches the default",
        CreateRequest::default(),
        target,
        Source::Missing,
        b"",
        (200, None),
    );
}

#[test]
fn forks() {
    let source_expiry = Expiry::Ttl { seconds: 300 };
    let live = Source::Live {
        content_type: "text/plain",
        expiry: &source_expiry,
        tail: tail(),
        fork_depth: 0,
    };
    let fork = |offset: Option<&'static str>| CreateRequest {
        forked_from: Some("/v1/stream/src"),
        fork_offset: offset,
        content_type: None,
        ..CreateRequest::default()
    };
    let (config, start, _, closed) = created(check(
        "at tail",
        fork(None),
        Target::Free,
        live,
        b"",
        (201, None),
    ));
    assert_eq!(
        (config.content_type.as_str(), start, closed),
        ("text/plain", tail(), false)
    );
    assert_eq!(config.expiry, source_expiry, "inherits the source TTL");
    assert_eq!(config.requested_expiry, Expiry::Never);
    assert_eq!(config.fork_offset, Some(tail()));
    assert_eq!(config.fork_depth, 1, "a fork of a plain stream is one deep");
    let (_, start, _, _) = created(check(
        "at zero",
        fork(Some("0000000000000000_0000000000000000")),
        Target::Free,
        live,
        b"",
        (201, None),
    ));
    assert_eq!(start, Offset::ZERO);
    check(
        "beyond tail",
        fork(Some("9999999999999999_9999999999999999")),
        Target::Free,
        live,
        b"",
        (400, Some("streams.v1.offset_beyond_tail")),
    );
    check(
        "missing source",
        fork(None),
        Target::Free,
        Source::Missing,
        b"",
        (404, Some("streams.v1.fork_source_missing")),
    );
    check(
        "deleted source",
        fork(None),
        Target::Free,
        Source::SoftDeleted,
        b"",
        (409, Some("streams.v1.fork_source_deleted")),
    );
    let other_type = CreateRequest {
        content_type: Some("application/json"),
        ..fork(None)
    };
    check(
        "type mismatch",
        other_type,
        Target::Free,
        live,
        b"",
        (409, Some("streams.v1.content_type_mismatch")),
    );
    let own_ttl = CreateRequest {
        ttl: Some("5"),
        ..fork(None)
    };
    let (config, _, _, _) = created(check(
        "own ttl",
        own_ttl,
        Target::Free,
        live,
        b"",
        (201, None),
    ));
    assert_eq!(config.expiry, Expiry::Ttl { seconds: 5 });

    // Idempotent fork re-create: same source and offset (or none named) is 200.
    let h = parse_create_headers(&fork(None)).unwrap();
    let CreateDecision::Create { config, .. } = decide_create(&h, Target::Free, live, b"") else {
        panic!()
    };
    let existing = Target::Live {
        config: &config,
        closed: false,
    };
    check("same fork", fork(None), existing, live, b"", (200, None));
    check(
        "same fork, offset named",
        fork(Some(TAIL)),
        existing,
        live,
        b"",
        (200, None),
    );
    check(
        "other offset",
        fork(Some("0000000000000000_0000000000000000")),
        existing,
        live,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    let other_source = CreateRequest {
        forked_from: Some("/v1/stream/other"),
        ..fork(None)
    };
    check(
        "other source",
        other_source,
        existing,
        live,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    let sub = CreateRequest {
        fork_sub_offset: Some("0"),
        ..fork(None)
    };
    check(
        "sub-offset 0 equals none",
        sub,
        existing,
        live,
        b"",
        (200, None),
    );
    let sub = CreateRequest {
        fork_sub_offset: Some("3"),
        ..fork(None)
    };
    check(
        "other sub-offset",
        sub,
        existing,
        live,
        b"",
        (409, Some("streams.v1.stream_exists")),
    );
    let _: CreateHeaders = h;
}

/// A fork is one deeper than its source; a source already `STREAM_FORK_DEPTH_MAX` deep cannot be
/// forked (400 `streams.v1.fork_too_deep`), one level less still can.
#[test]
fn fork_chains_are_bounded_in_depth() {
    let expiry = Expiry::Never;
    let source = |fork_depth: u32| Source::Live {
        content_type: "text/plain",
        expiry: &expiry,
        tail: tail(),
        fork_depth,
    };
    let fork = CreateRequest {
        forked_from: Some("/v1/stream/src"),
        ..CreateRequest::default()
    };
    let cases: &[(u32, (u16, Option<&str>), Option<u32>)] = &[
        (0, (201, None), Some(1)),
        (
            STREAM_FORK_DEPTH_MAX - 1,
            (201, None),
            Some(STREAM_FORK_DEPTH_MAX),
        ),
        (
            STREAM_FORK_DEPTH_MAX,
            (400, Some("streams.v1.fork_too_deep")),
            None,
        ),
        (u32::MAX, (400, Some("streams.v1.fork_too_deep")), None),
    ];
    for (depth, expected, new_depth) in cases {
        let name = format!("source {depth} deep");
        let decision = check(
            &name,
            fork.clone(),
            Target::Free,
            source(*depth),
            b"",
            *expected,
        );
        if let Some(new_depth) = new_depth {
            assert_eq!(created(decision).0.fork_depth, *new_depth, "{name}");
        }
    }
}

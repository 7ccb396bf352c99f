//! The Ask service's decisions (`core::ask`), data-driven: the trusted site policy, the client's
//! request, hints, grounding under the citation policy, the session record, the answer bound,
//! the failure table and the BM25 retriever.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use turnkeep::core::ask::answer::{decode_chunk, Answer, GenerationChunk};
use turnkeep::core::ask::bm25::{
    decode_documents, excerpt, query_terms, stem, Bm25Index, Document,
};
use turnkeep::core::ask::events::{cite_line, done_line, text_line};
use turnkeep::core::ask::request::{decode_request, latest_question, AskMessage, AskRole};
use turnkeep::core::ask::session::{conversation, decode_record, next_record, SessionRecord};
use turnkeep::core::ask::site::{decode_site, hints_agree, is_subject_id, Site};
use turnkeep::core::ask::sources::{ground, Dropped};
use turnkeep::core::ask::{aborted_failure, retry_after_seconds, AskFailure};

fn site_json() -> Value {
    json!({
        "protocol": "agentskit.chat.backend-site", "version": 1, "siteId": "docs",
        "assistant": { "id": "docs-guide", "name": "  Guide ", "suggestions": ["How do I start?"] },
        "corpus": { "id": "docs-public", "mode": "local" },
        "components": ["source-list"], "actions": ["open-agent"],
        "limits": { "requestTimeoutMs": 2000, "retrievalTimeoutMs": 500, "generationTimeoutMs": 500, "maxSources": 2 },
        "persistence": { "mode": "required" }
    })
}

fn with(mut v: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = if parent.is_empty() {
        &mut v
    } else {
        v.pointer_mut(parent).unwrap()
    };
    if value.is_null() {
        target.as_object_mut().unwrap().remove(key);
    } else {
        target[key] = value;
    }
    v
}

fn site(citations: Option<Value>) -> Site {
    let v = match citations {
        Some(c) => with(site_json(), "/citations", c),
        None => site_json(),
    };
    decode_site(&v).expect("valid site")
}

#[test]
fn site_policies_decode_strictly() {
    let ok = decode_site(&site_json()).unwrap();
    assert_eq!(
        ok.value["assistant"]["name"], "Guide",
        "labels are trimmed in the canonical value"
    );
    assert_eq!((ok.max_sources, ok.persistence_required), (2, true));
    let check = |v: Value, want: Result<(), &str>| {
        let got = decode_site(&v).map(|_| ()).map_err(|e| e.message());
        assert_eq!(got, want.map_err(str::to_owned), "{v}");
    };
    check(
        with(site_json(), "/tenant", json!("other")),
        Err("tenant must not have this key"),
    );
    check(
        with(site_json(), "/corpus/extra", json!(1)),
        Err("corpus.extra must not have this key"),
    );
    check(
        with(site_json(), "/protocol", json!("agentskit.chat.site")),
        Err("protocol must be \"agentskit.chat.backend-site\""),
    );
    check(
        with(site_json(), "/corpus/mode", json!("remote")),
        Err("corpus.mode must be \"local\" or \"federated\""),
    );
    check(
        with(site_json(), "/limits/requestTimeoutMs", json!(99)),
        Err("limits.requestTimeoutMs must be an integer from 100 to 120000"),
    );
    check(
        with(site_json(), "/limits/retrievalTimeoutMs", json!(60001)),
        Err("limits.retrievalTimeoutMs must be an integer from 100 to 60000"),
    );
    check(
        with(site_json(), "/limits/maxSources", json!(9)),
        Err("limits.maxSources must be an integer from 1 to 8"),
    );
    check(
        with(site_json(), "/assistant/name", json!("   ")),
        Err("assistant.name must be a string of 1 to 256 UTF-16 units after trimming"),
    );
    check(with(site_json(), "/siteId", json!("a b")), Err("siteId must be a SafeId (1 to 128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit)"));
    check(
        with(site_json(), "/persistence", Value::Null),
        Err("persistence is required"),
    );
    check(
        with(
            site_json(),
            "/citations",
            json!({ "origins": ["https://docs.example.com"] }),
        ),
        Ok(()),
    );
    check(
        with(
            site_json(),
            "/citations",
            json!({ "origins": ["https://docs.example.com/path"] }),
        ),
        Err("citations.origins[0] must be an http(s) origin (scheme://host[:port])"),
    );
    check(
        with(
            site_json(),
            "/citations",
            json!({ "origins": ["javascript:alert(1)"] }),
        ),
        Err("citations.origins[0] must be an http(s) origin (scheme://host[:port])"),
    );
}

#[test]
fn client_hints_are_equality_checked_against_the_trusted_site() {
    let s = site(None);
    for (corpus, persona, agree) in [
        (None, None, true),
        (Some("docs-public"), None, true),
        (Some("docs-public"), Some("docs-guide"), true),
        (Some("private-corpus"), None, false),
        (None, Some("admin"), false),
        (Some(""), None, false),
        (Some("DOCS-PUBLIC"), None, false),
    ] {
        assert_eq!(
            hints_agree(&s, corpus, persona),
            agree,
            "{corpus:?} {persona:?}"
        );
    }
}

#[test]
fn requests_carry_messages_only_never_authority() {
    let user = |c: &str| json!({ "role": "user", "content": c });
    let check = |v: Value, want: Result<usize, &str>| {
        let got = decode_request(&v)
            .map(|r| r.messages.len())
            .map_err(|e| e.message());
        assert_eq!(got, want.map_err(str::to_owned), "{v}");
    };
    check(json!({ "messages": [user("hi")] }), Ok(1));
    check(
        json!({ "protocol": "agentskit.chat.ask", "version": 1, "sessionId": "s-1", "messages": [user("hi")] }),
        Ok(1),
    );
    check(
        json!({ "siteId": "private", "messages": [user("hi")] }),
        Err("siteId must not have this key"),
    );
    check(
        json!({ "corpus": "private-corpus", "messages": [user("hi")] }),
        Err("corpus must not have this key"),
    );
    check(
        json!({ "messages": [] }),
        Err("messages must hold at least one message"),
    );
    check(
        json!({ "messages": vec![user("x"); 65] }),
        Err("messages must be an array of at most 64 messages"),
    );
    check(
        json!({ "messages": [{ "role": "system", "content": "x" }] }),
        Err("messages[0].role must be \"user\" or \"assistant\""),
    );
    check(
        json!({ "messages": [{ "role": "user", "content": "x", "name": "n" }] }),
        Err("messages[0].name must not have this key"),
    );
    check(
        json!({ "messages": [user(&"a".repeat(16_385))] }),
        Err("messages[0].content must be a string of at most 16384 UTF-16 units"),
    );
    check(
        json!({ "version": 2, "messages": [user("x")] }),
        Err("version must be the number 1"),
    );
    check(json!({ "sessionId": "../x", "messages": [user("x")] }), Err("sessionId must be a SafeId (1 to 128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit)"));
    check(json!([]), Err("the input must be a JSON object"));

    let escalation = json!({
        "protocol": "agentskit.chat.answer", "version": 1, "outcome": "escalation", "query": "How do I start?",
        "normalizedQuery": "how do i start?", "message": "Backend required.", "reason": "miss",
        "confidence": { "level": "low", "basis": "miss" }
    });
    let r =
        decode_request(&json!({ "messages": [user("x")], "deterministic": escalation })).unwrap();
    assert!(r.deterministic);
    let answer = with(escalation.clone(), "/outcome", json!("answer"));
    check(
        json!({ "messages": [user("x")], "deterministic": answer }),
        Err("deterministic.outcome must be \"escalation\""),
    );
    let mismatched = with(escalation, "/confidence/basis", json!("stale"));
    check(
        json!({ "messages": [user("x")], "deterministic": mismatched }),
        Err("deterministic.confidence.basis must equal the escalation's reason"),
    );
}

fn msg(role: AskRole, content: &str) -> AskMessage {
    AskMessage {
        role,
        content: content.into(),
    }
}

#[test]
fn the_question_is_the_latest_user_message_trimmed() {
    use AskRole::*;
    assert_eq!(
        latest_question(&[
            msg(User, " first "),
            msg(Assistant, "a"),
            msg(User, "\u{3000}second\n")
        ]),
        Some("second".into())
    );
    assert_eq!(latest_question(&[msg(Assistant, "a")]), None);
    assert_eq!(latest_question(&[msg(User, "   ")]), None);
}

#[test]
fn a_resumed_session_trusts_its_stored_history_and_appends_only_the_question() {
    use AskRole::*;
    let stored = SessionRecord {
        revision: 3,
        messages: vec![msg(User, "first"), msg(Assistant, "history:1")],
    };
    let submitted = [msg(User, "attacker supplied history"), msg(User, "second")];
    let conv = conversation(Some(&stored), &submitted);
    assert_eq!(
        conv.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(),
        ["first", "history:1", "second"]
    );
    // A repeated question is not appended twice.
    let again = SessionRecord {
        revision: 4,
        messages: conv.clone(),
    };
    assert_eq!(conversation(Some(&again), &[msg(User, "second")]), conv);
    // New sessions run on what was submitted.
    assert_eq!(conversation(None, &submitted), submitted.to_vec());

    let (record, expected) = next_record(Some(&stored), &conv, "answer");
    assert_eq!(
        (record.revision, expected),
        (4, 3),
        "CAS on the loaded revision"
    );
    assert_eq!(record.messages.last(), Some(&msg(Assistant, "answer")));
    let (first, expected) = next_record(None, &[msg(User, "q")], "a");
    assert_eq!((first.revision, expected), (1, 0));

    let long: Vec<AskMessage> = (0..64).map(|i| msg(User, &i.to_string())).collect();
    let (capped, _) = next_record(None, &long, "a");
    assert_eq!(capped.messages.len(), 64, "history keeps the last 64");
    assert_eq!(capped.messages[0].content, "1");

    assert_eq!(decode_record(&record.to_value()), Ok(record));
    assert!(decode_record(&json!({ "revision": -1, "messages": [] })).is_err());
    assert!(decode_record(&json!({ "revision": 1, "messages": [], "owner": "x" })).is_err());
}

fn source(id: &str, href: &str) -> Value {
    json!({ "id": id, "title": format!("Title {id}"), "href": href, "excerpt": " text " })
}

#[test]
fn grounding_keeps_valid_sources_whose_links_the_policy_allows() {
    let policy = site(Some(json!({ "origins": ["https://docs.example.com"] })));
    let candidates = json!([
        source("outside", "https://evil.example/x"),
        source("relative", "/docs/start"),
        source("script", "javascript:alert(1)"),
        source("allowed", "https://DOCS.example.com:443/page"),
        json!({ "id": "extra", "title": "t", "href": "/x", "excerpt": "e", "score": 1 }),
        source("third", "/docs/third"),
    ]);
    let (kept, dropped) = ground(&policy, &candidates).unwrap();
    assert_eq!(
        kept.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["relative", "allowed"],
        "maxSources is 2"
    );
    assert_eq!(kept[0].excerpt, "text", "excerpts are trimmed");
    assert_eq!(
        dropped[0],
        Dropped::OutsidePolicy {
            id: "outside".into()
        }
    );
    assert!(matches!(dropped[1], Dropped::Invalid(_)));

    // Without a citations policy any safe http(s) link is allowed (AgentsKit's rule).
    let (kept, _) = ground(
        &site(None),
        &json!([source("outside", "https://evil.example/x")]),
    )
    .unwrap();
    assert_eq!(kept.len(), 1);
    // An empty origin list allows only site-relative links: nothing left is not grounded.
    let (kept, _) = ground(
        &site(Some(json!({ "origins": [] }))),
        &json!([source("outside", "https://evil.example/x")]),
    )
    .unwrap();
    assert!(kept.is_empty());
    assert!(
        ground(&policy, &json!({ "sources": [] })).is_err(),
        "not a list"
    );
}

#[test]
fn answers_are_bounded_and_never_blank() {
    let mut a = Answer::default();
    assert_eq!(a.push(""), Ok(false));
    assert_eq!(a.finish(), Err(AskFailure::AnswerEmpty));
    assert_eq!(a.push("  "), Ok(true));
    assert_eq!(a.finish(), Err(AskFailure::AnswerEmpty));
    assert_eq!(a.push(&"x".repeat(16_382)), Ok(true));
    assert_eq!(a.push("y"), Err(AskFailure::AnswerTooLong));

    assert_eq!(
        decode_chunk(&json!({ "type": "text", "delta": "hi" })),
        Ok(GenerationChunk::Text("hi".into()))
    );
    assert!(decode_chunk(&json!({ "type": "text" })).is_err());
    assert!(decode_chunk(&json!({ "type": "usage", "usage": { "inputTokens": -1 } })).is_err());
    assert!(decode_chunk(&json!({ "type": "tool", "name": "x" })).is_err());
}

#[test]
fn events_are_the_ask_ndjson_lines() {
    let policy = site(None);
    let (kept, _) = ground(&policy, &json!([source("a", "/docs/a")])).unwrap();
    assert_eq!(text_line("hi"), "{\"type\":\"text\",\"delta\":\"hi\"}\n");
    assert_eq!(
        cite_line("r1", &kept),
        "{\"type\":\"tool\",\"id\":\"sources-r1\",\"name\":\"cite\",\"args\":{\"sources\":[{\"id\":\"a\",\"title\":\"Title a\",\"path\":\"/docs/a\"}]}}\n"
    );
    assert_eq!(
        done_line(Some("m")),
        "{\"type\":\"done\",\"model\":\"m\"}\n"
    );
    assert_eq!(done_line(None), "{\"type\":\"done\"}\n");
}

#[test]
fn small_rules() {
    assert_eq!(aborted_failure(true), AskFailure::Timeout);
    assert_eq!(aborted_failure(false), AskFailure::Cancelled);
    for (value, want) in [
        (Some(15.0), Some(15)),
        (Some(0.2), Some(1)),
        (Some(-1.0), None),
        (None, None),
        (Some(f64::NAN), None),
        (Some(1e12), Some(86_400)),
    ] {
        assert_eq!(retry_after_seconds(value), want, "{value:?}");
    }
    for (id, ok) in [
        ("user-1", true),
        ("a@b.example", true),
        ("", false),
        ("-x", false),
        ("a b", false),
    ] {
        assert_eq!(is_subject_id(id), ok, "{id}");
    }
    assert!(is_subject_id(&"a".repeat(256)) && !is_subject_id(&"a".repeat(257)));
}

fn doc(id: &str, title: &str, text: &str) -> Document {
    Document {
        id: id.into(),
        title: title.into(),
        url: format!("/docs/{id}"),
        text: text.into(),
    }
}

#[test]
fn bm25_ranks_by_term_rarity_and_title_deterministically() {
    let index = Bm25Index::new(vec![
        doc(
            "intro",
            "Introduction",
            "turnkeep keeps a chat correct. The chat runs on the edge.",
        ),
        doc(
            "tests",
            "Running the tests",
            "npm test runs every test suite that CI runs.",
        ),
        doc(
            "deploy",
            "Deploying",
            "wrangler deploy ships the Worker. Tests are not run here.",
        ),
        doc(
            "storage",
            "Storage",
            "Each session is one Durable Object with SQLite storage.",
        ),
    ]);
    let ids = |q: &str| {
        index
            .search(q, 8)
            .iter()
            .map(|h| index.document(h.doc).id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids("How do I run the tests?")[0],
        "tests",
        "title terms weigh more"
    );
    assert_eq!(ids("where is a session stored")[0], "storage");
    assert_eq!(ids("wrangler deploy")[0], "deploy");
    assert!(ids("zyzzyva").is_empty(), "no shared term, no hit");
    assert!(
        ids("the and of").is_empty(),
        "stop words alone match nothing"
    );
    assert_eq!(ids("chat"), ["intro"]);
    // Same input, same order (ties keep corpus order).
    let tie = Bm25Index::new(vec![doc("b", "x", "alpha"), doc("a", "x", "alpha")]);
    assert_eq!(
        tie.search("alpha", 2)
            .iter()
            .map(|h| h.doc)
            .collect::<Vec<_>>(),
        [0, 1]
    );
    assert_eq!(index.search("test", 1).len(), 1, "limit");
}

#[test]
fn bm25_terms_and_excerpts() {
    for (word, want) in [
        ("tests", "test"),
        ("testing", "test"),
        ("tested", "test"),
        ("queries", "query"),
        ("class", "class"),
        ("status", "status"),
        ("is", "is"),
    ] {
        assert_eq!(stem(word), want, "{word}");
    }
    assert_eq!(
        query_terms("How do I run the Tests, tests?"),
        ["run", "test"]
    );
    let text =
        "First paragraph about leases.\n\n\n\nThe session lease is claimed by CAS.\n\nOther text.";
    let index = Bm25Index::new(vec![doc("d", "Doc", text)]);
    assert_eq!(
        index.sources("session lease", 1)[0].excerpt,
        "The session lease is claimed by CAS.",
        "most distinct terms"
    );
    assert_eq!(
        index.sources("lease", 1)[0].excerpt,
        "First paragraph about leases.",
        "the first on a tie"
    );
    assert_eq!(index.sources("other", 1)[0].excerpt, "Other text.");
    let long = "word ".repeat(200);
    let cut = excerpt(&long);
    assert!(
        cut.ends_with('…') && cut.chars().count() <= 480,
        "{}",
        cut.chars().count()
    );
}

#[test]
fn corpora_decode_strictly() {
    let ok = json!([{ "id": "a", "title": "A", "url": "/a", "text": "t" }]);
    assert_eq!(decode_documents(&ok).unwrap().len(), 1);
    let check = |v: Value, want: &str| {
        assert_eq!(
            decode_documents(&v).map(|_| ()).unwrap_err().message(),
            want,
            "{v}"
        )
    };
    check(
        json!([{ "id": "a", "title": "A", "url": "/a", "text": "t" }, { "id": "a", "title": "B", "url": "/b", "text": "u" }]),
        "documents[1].id must be unique in the corpus",
    );
    check(
        json!([{ "id": "a", "title": "A", "url": "javascript:x", "text": "t" }]),
        "documents[0].url must be a site-relative path or an http(s) URL without credentials",
    );
    check(
        json!([{ "id": "a", "title": "A", "url": "/a", "text": "" }]),
        "documents[0].text must be a non-empty string",
    );
    check(
        json!({}),
        "documents must be an array of at most 10000 documents",
    );
}

#[test]
fn the_failure_table_is_agentskits() {
    let rows: Vec<(u16, &str)> = AskFailure::ALL
        .iter()
        .map(|f| (f.status(), f.row().code))
        .collect();
    for want in [
        (400, "ASK_INVALID_REQUEST"),
        (403, "ASK_FORBIDDEN"),
        (429, "ASK_RATE_LIMITED"),
        (422, "ASK_NO_GROUNDED_SOURCES"),
        (502, "ASK_RETRIEVAL_FAILED"),
        (502, "ASK_GENERATION_FAILED"),
        (408, "ASK_TIMEOUT"),
        (499, "ASK_CANCELLED"),
        (409, "ASK_PERSISTENCE_CONFLICT"),
        (500, "ASK_INTERNAL"),
    ] {
        assert!(rows.contains(&want), "{want:?}");
    }
}

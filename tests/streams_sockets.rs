//! The live-socket rules of the `SessionStream` object (`cloudflare::streams::sockets`): the
//! bound on sockets, the close frames, and the attachment each socket keeps across the object's
//! hibernation (which read is a socket read: `core::streams::proxy`'s unit tests).
#![cfg(feature = "cloudflare")]

use turnkeep::cloudflare::streams::sockets::{may_join, SocketEnd, SocketReader};
use turnkeep::core::limits;

#[test]
fn sockets_are_bounded_per_stream() {
    assert!(may_join(0));
    assert!(may_join(limits::STREAM_LIVE_SOCKETS_MAX - 1));
    assert!(!may_join(limits::STREAM_LIVE_SOCKETS_MAX));
    // Far more than SSE responses (idle sockets cost nothing), below Cloudflare's 32,768.
    assert!(limits::STREAM_LIVE_SOCKETS_MAX > limits::STREAM_SSE_CONNECTIONS_MAX);
    assert!(limits::STREAM_LIVE_SOCKETS_MAX < 32_768);
}

#[test]
fn each_end_closes_with_its_frame() {
    let cases = [
        (SocketEnd::Done, 1000),
        (SocketEnd::Failed, 1011),
        (SocketEnd::Behind, 1013),
        (SocketEnd::ClientLeft, 1000),
    ];
    for (end, code) in cases {
        let (got, reason) = end.frame();
        assert_eq!(got, code, "{end:?}");
        // A close reason is at most 123 bytes (RFC 6455: a control frame holds 125, less the
        // 2-byte code).
        assert!(!reason.is_empty() && reason.len() <= 123, "{end:?}");
    }
}

#[test]
fn the_attachment_keeps_offset_and_cursor_and_stays_small() {
    let reader = SocketReader {
        offset: "0000000000000000_0000000000001234".to_owned(),
        cursor: Some("1234567".to_owned()),
    };
    let json = serde_json::to_string(&reader).unwrap();
    assert_eq!(serde_json::from_str::<SocketReader>(&json).unwrap(), reader);
    // Cloudflare keeps at most 2,048 bytes per socket attachment.
    assert!(json.len() < 2_048, "{json}");
}

//! Tests of `transport::http`.

use super::*;
use crate::transport::Connect;

#[test]
fn auto_falls_back_once_to_sse_and_explicit_kinds_never() {
    let auto = HttpConfig::new("http://127.0.0.1:1/mcp");
    assert_eq!(auto.effective_kind(), HttpTransportKind::StreamableHttp);
    let next = auto.fallback().expect("auto has a fallback");
    assert_eq!(next.describe(), "http://127.0.0.1:1/mcp");
    assert!(next.fallback().is_none(), "the list has two candidates");
    for kind in [HttpTransportKind::StreamableHttp, HttpTransportKind::Sse] {
        assert!(auto.clone().transport(kind).fallback().is_none());
    }
    let mut second = auto.clone();
    second.candidate = 1;
    assert_eq!(second.effective_kind(), HttpTransportKind::Sse);
}

#[test]
fn debug_hides_header_values() {
    let config = HttpConfig::new("http://h/").header("Authorization", "Bearer s3cret");
    let shown = format!("{config:?}");
    assert!(shown.contains("Authorization"));
    assert!(!shown.contains("s3cret"));
}

#[test]
fn a_request_names_its_protocol_version_from_the_session_or_the_layer_above() {
    use std::time::Instant;
    use wire::{Call, Method, ACCEPT_BOTH};
    let call = |headers: Vec<(&'static str, String)>, extra: &[(String, String)]| {
        Call {
            method: Method::Post,
            url: "http://h/mcp",
            body: None,
            accept: ACCEPT_BOTH,
            headers,
            extra,
            deadline: Instant::now(),
            what: "x",
        }
        .protocol_version()
        .map(str::to_owned)
    };
    let session = vec![("mcp-protocol-version", "2025-03-26".to_owned())];
    assert_eq!(call(session, &[]).as_deref(), Some("2025-03-26"));
    let routing = [("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned())];
    assert_eq!(call(Vec::new(), &routing).as_deref(), Some("2026-07-28"));
    let other = [("Mcp-Method".to_owned(), "tools/call".to_owned())];
    assert_eq!(call(Vec::new(), &other), None);
}

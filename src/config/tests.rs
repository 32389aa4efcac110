//! Tests of `config`.

use super::*;

#[test]
fn builders_touch_only_their_transport() {
    let stdio = ServerConfig::stdio("a", "cmd")
        .with_header("X", "y")
        .with_args(["1"]);
    assert_eq!(
        stdio.transport,
        ServerTransport::Stdio {
            command: "cmd".into(),
            args: vec!["1".into()],
            env: vec![],
            cwd: None,
            env_policy: EnvPolicy::AllowList,
        }
    );
    let http = ServerConfig::http("b", "http://h/mcp")
        .with_args(["1"])
        .with_http_kind(HttpKind::Sse);
    assert_eq!(http.kind(), "sse");
}

#[test]
fn http_kind_names_round_trip() {
    for kind in [HttpKind::Auto, HttpKind::StreamableHttp, HttpKind::Sse] {
        assert_eq!(HttpKind::parse(kind.as_str()), Some(kind));
    }
    assert_eq!(HttpKind::parse("http"), Some(HttpKind::Auto));
    assert_eq!(HttpKind::parse("websocket"), None);
}

#[test]
fn places_count_from_the_start_of_the_file_in_any_order() {
    let text = "{\n  \"a\": 1,\n  \"b\": {\n\"c\": 2}}";
    let mut lines = repeated::Lines::new(text);
    let b = text.find("{\n\"c").unwrap_or_default();
    // serde_json's line 1 is the line the part starts on, its columns counted from there.
    assert_eq!(lines.place(&text[b..], 1, 1), (3, 8));
    assert_eq!(lines.place(&text[b..], 2, 4), (4, 4));
    // An earlier part, as when the sections are not in the file's order.
    let a = text.find('1').unwrap_or_default();
    assert_eq!(lines.place(&text[a..], 1, 1), (2, 8));
    // Text that is not part of the file counts as its start rather than panicking.
    assert_eq!(lines.place("elsewhere", 1, 3), (1, 3));
}

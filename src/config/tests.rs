//! Tests of `config`.

use super::*;
use crate::transport::http::HttpTransportKind;

#[test]
fn oauth_settings_go_to_http_servers_only() {
    let stdio = ServerConfig::stdio("a", "cmd").with_oauth(OAuthSettings::new());
    let ServerTransport::Stdio(config) = &stdio.transport else {
        panic!("a stdio server: {stdio:?}");
    };
    assert_eq!(config.get_command(), "cmd");
    assert!(stdio.oauth().is_none());
    let sse = HttpConfig::new("http://h/mcp").transport(HttpTransportKind::Sse);
    let http = ServerConfig::new("b", sse).with_oauth(OAuthSettings::new());
    assert_eq!(http.kind(), "sse");
    assert!(http.oauth().is_some());
}

#[test]
fn debug_hides_values_of_both_transports() {
    let stdio = StdioConfig::new("cmd")
        .args(["--token", "s3cret-arg"])
        .env("API_KEY", "s3cret-env");
    let stdio = ServerConfig::new("a", stdio);
    let http = HttpConfig::new("https://user:s3cret-pw@h/mcp?key=s3cret-query")
        .header("Authorization", "Bearer s3cret-header");
    let http = ServerConfig::new("b", http);
    for shown in [format!("{stdio:?}"), format!("{http:?}")] {
        assert!(!shown.contains("s3cret"), "{shown}");
    }
    assert!(format!("{stdio:?}").contains("API_KEY"));
    assert!(format!("{http:?}").contains("Authorization"));
}

#[test]
fn transport_kind_names_round_trip() {
    for kind in [
        HttpTransportKind::Auto,
        HttpTransportKind::StreamableHttp,
        HttpTransportKind::Sse,
    ] {
        assert_eq!(HttpTransportKind::parse(kind.as_str()), Some(kind));
    }
    assert_eq!(
        HttpTransportKind::parse("http"),
        Some(HttpTransportKind::Auto)
    );
    assert_eq!(HttpTransportKind::parse("websocket"), None);
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

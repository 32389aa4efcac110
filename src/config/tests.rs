//! Tests of `config`.

use super::*;

#[test]
fn builders_touch_only_their_transport() {
    let stdio = ServerConfig::stdio("a", "cmd")
        .with_header("X", "y")
        .with_http_kind(HttpTransportKind::Sse)
        .with_oauth(OAuthSettings::new())
        .with_args(["1"])
        .with_env("K", "v")
        .with_cwd("/tmp")
        .with_env_policy(EnvPolicy::Clear);
    let ServerTransport::Stdio(config) = &stdio.transport else {
        panic!("a stdio server: {stdio:?}");
    };
    assert_eq!(config.get_command(), "cmd");
    assert_eq!(config.get_args(), ["1"]);
    assert_eq!(config.get_envs(), [("K".to_owned(), "v".to_owned())]);
    assert_eq!(config.get_cwd(), Some(std::path::Path::new("/tmp")));
    assert_eq!(config.get_env_policy(), EnvPolicy::Clear);
    assert!(stdio.oauth().is_none());
    let http = ServerConfig::http("b", "http://h/mcp")
        .with_args(["1"])
        .with_env("K", "v")
        .with_header("X", "y")
        .with_http_kind(HttpTransportKind::Sse);
    assert_eq!(http.kind(), "sse");
    let ServerTransport::Http(config, None) = &http.transport else {
        panic!("an HTTP server without OAuth: {http:?}");
    };
    assert_eq!(config.get_headers(), [("X".to_owned(), "y".to_owned())]);
}

#[test]
fn debug_hides_values_of_both_transports() {
    let stdio = ServerConfig::stdio("a", "cmd")
        .with_args(["--token", "s3cret-arg"])
        .with_env("API_KEY", "s3cret-env");
    let http = ServerConfig::http("b", "https://user:s3cret-pw@h/mcp?key=s3cret-query")
        .with_header("Authorization", "Bearer s3cret-header");
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

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
fn identity_ignores_name_and_timeouts() {
    let a = ServerConfig::stdio("a", "cmd").with_args(["x"]);
    let b = ServerConfig::stdio("b", "cmd")
        .with_args(["x"])
        .with_startup_timeout(Duration::from_secs(1));
    let c = ServerConfig::stdio("a", "cmd").with_args(["y"]);
    assert_eq!(a.identity(), b.identity());
    assert_ne!(a.identity(), c.identity());
}

#[test]
fn http_kind_names_round_trip() {
    for kind in [HttpKind::Auto, HttpKind::StreamableHttp, HttpKind::Sse] {
        assert_eq!(HttpKind::parse(kind.as_str()), Some(kind));
    }
    assert_eq!(HttpKind::parse("http"), Some(HttpKind::Auto));
    assert_eq!(HttpKind::parse("websocket"), None);
}

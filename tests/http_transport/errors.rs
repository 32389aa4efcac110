//! HTTP error statuses: 401 challenges and credential providers, 403, JSON-RPC errors in error
//! statuses and malformed JSON.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use umcp::transport::http::{CredentialProvider, HttpConfig};
use umcp::{AuthError, AuthStep, Client, Error, HttpError};

use crate::http_server::serve;
use crate::{connect, expect_response, request, result, soon};

#[test]
fn unauthorized_carries_the_parsed_challenge() {
    let server = serve(|_seen, reply| {
        reply.json(
            401,
            &[
                (
                    "WWW-Authenticate",
                    r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="tools:read", error="invalid_token""#,
                ),
                ("Mcp-Auth-Server", "http://auth.local"),
            ],
            r#"{"error":"unauthorized"}"#,
        )
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    let err = transport
        .send(&request(1, "initialize"), soon())
        .unwrap_err();
    assert!(err.needs_authorization());
    let Error::Unauthorized(e) = err else {
        panic!("{err:?}")
    };
    assert_eq!(e.status, 401);
    assert!(!e.asks_dpop_nonce);
    let challenge = e.www_authenticate.expect("a parsed challenge");
    assert_eq!(challenge.scheme, "Bearer");
    assert_eq!(
        challenge.resource_metadata.as_deref(),
        Some("http://127.0.0.1/.well-known/oauth-protected-resource")
    );
    assert_eq!(challenge.scope.as_deref(), Some("tools:read"));
    assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
    assert_eq!(e.mcp_auth_server.as_deref(), Some("http://auth.local"));
    assert!(e.body.contains("unauthorized"));
}

/// A DPoP nonce challenge beside a Bearer one, in headers of their own or in one value: the
/// Bearer challenge is the one to act on, and the nonce request is not lost.
#[test]
fn a_nonce_challenge_beside_a_bearer_one_is_reported() {
    let bearer = r#"Bearer resource_metadata="http://127.0.0.1/prm""#;
    let dpop = r#"DPoP error="use_dpop_nonce", algs="ES256""#;
    let both = format!("{bearer}, {dpop}");
    for one_value in [false, true] {
        let both = both.clone();
        let server = serve(move |_seen, reply| {
            let mut headers = vec![("DPoP-Nonce", "n-1")];
            if one_value {
                headers.push(("WWW-Authenticate", &both));
            } else {
                headers.extend([("WWW-Authenticate", bearer), ("WWW-Authenticate", dpop)]);
            }
            reply.json(401, &headers, "{}")
        });
        let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
        let err = transport
            .send(&request(1, "initialize"), soon())
            .unwrap_err();
        let Error::Unauthorized(e) = err else {
            panic!("{err:?}")
        };
        assert!(e.asks_dpop_nonce, "one value: {one_value}");
        assert_eq!(e.dpop_nonce.as_deref(), Some("n-1"));
        let challenge = e.www_authenticate.expect("the Bearer challenge");
        assert_eq!(challenge.scheme, "Bearer");
        assert_eq!(challenge.error, None);
    }
}

/// `fn main() -> umcp::Result<()>` prints an error's `Debug`: a key in the server's URL, or
/// in the URLs a challenge or redirect names, shows no more there than in `Display`.
#[test]
fn debug_shows_no_key_of_a_url() {
    let server = serve(|_seen, reply| {
        reply.json(
            401,
            &[
                (
                    "WWW-Authenticate",
                    r#"Bearer resource_metadata="http://127.0.0.1/prm?sig=sk-prm""#,
                ),
                ("Mcp-Auth-Server", "http://auth.local/?tenant_key=sk-tenant"),
            ],
            r#"{"error":"unauthorized"}"#,
        )
    });
    let url = server.url("/mcp?api_key=sk-x");
    let err = Client::connect(HttpConfig::new(&url)).expect_err("a 401");
    assert!(matches!(err, Error::Unauthorized(_)), "{err:?}");
    let shown = format!("{err:?}");
    for secret in ["sk-x", "sk-prm", "sk-tenant"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    assert!(shown.contains("api_key=<redacted>"), "{shown}");
    assert!(shown.contains("/prm?sig=<redacted>"), "{shown}");
    let moved = HttpError {
        status: 308,
        url: "https://u:pw-secret@h/mcp".into(),
        location: Some("https://h/v2?token=sk-moved".into()),
        ..HttpError::default()
    };
    let shown = format!("{moved:?}");
    assert!(
        !shown.contains("pw-secret") && !shown.contains("sk-moved"),
        "{shown}"
    );
    let mut auth = AuthError::new(AuthStep::Token, "refused");
    auth.url = Some("https://as.example/token?client_secret=sk-auth".into());
    auth.status = Some(400);
    let shown = format!("{:?}", Error::from(auth));
    assert!(!shown.contains("sk-auth"), "{shown}");
    assert!(
        shown.contains("https://as.example/token?client_secret=<redacted>"),
        "{shown}"
    );
}

#[test]
fn forbidden_is_its_own_error() {
    let server = serve(|_seen, reply| {
        reply.json(
            403,
            &[("WWW-Authenticate", r#"Bearer error="insufficient_scope""#)],
            "{}",
        )
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    match transport
        .send(&request(1, "tools/call"), soon())
        .unwrap_err()
    {
        Error::Forbidden(e) => {
            assert_eq!(e.status, 403);
            let error = e.www_authenticate.and_then(|c| c.error);
            assert_eq!(error.as_deref(), Some("insufficient_scope"));
        }
        other => panic!("{other:?}"),
    }
}

/// Hands out `Bearer t<n>` and asks for a retry after the first 401.
struct Tokens {
    issued: AtomicUsize,
    challenges: Mutex<Vec<u16>>,
}

impl CredentialProvider for Tokens {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        let n = self.issued.fetch_add(1, Ordering::SeqCst);
        Ok(vec![("Authorization".into(), format!("Bearer t{n}"))])
    }

    fn on_unauthorized(&self, error: &HttpError) -> umcp::Result<bool> {
        let mut challenges = self.challenges.lock().unwrap();
        challenges.push(error.status);
        Ok(challenges.len() == 1)
    }
}

#[test]
fn credentials_are_asked_for_and_a_401_is_retried_once() {
    let server = serve(|seen, reply| match seen.header("authorization") {
        Some("Bearer t1") => reply.json(200, &[], &result(1)),
        _ => reply.status(401, &[("WWW-Authenticate", "Bearer")]),
    });
    let tokens = Arc::new(Tokens {
        issued: AtomicUsize::new(0),
        challenges: Mutex::new(Vec::new()),
    });
    let config = HttpConfig::new(server.url("/mcp")).credentials(tokens.clone());
    let (transport, rx) = connect(&config);
    transport.send(&request(1, "initialize"), soon()).unwrap();
    expect_response(&rx, 1);
    assert_eq!(server.next().header("authorization"), Some("Bearer t0"));
    assert_eq!(server.next().header("authorization"), Some("Bearer t1"));
    // The provider declines the second time: the 401 reaches the caller.
    let err = transport
        .send(&request(2, "tools/list"), soon())
        .unwrap_err();
    assert!(matches!(err, Error::Unauthorized(_)), "{err:?}");
    assert_eq!(*tokens.challenges.lock().unwrap(), [401, 401]);
}

#[test]
fn error_statuses_with_a_json_rpc_error_become_rpc_errors() {
    let server = serve(|seen, reply| {
        let body = json!({"jsonrpc": "2.0", "id": seen.rpc_id(), "error": {"code": -32602, "message": "bad params"}});
        reply.json(400, &[], &body.to_string())
    });
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    match transport
        .send(&request(5, "tools/call"), soon())
        .unwrap_err()
    {
        Error::Rpc(e) => assert_eq!((e.code.0, e.message.as_str()), (-32602, "bad params")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn malformed_json_is_a_protocol_error() {
    let server = serve(|_seen, reply| reply.json(200, &[], "{not json at all"));
    let (transport, _rx) = connect(&HttpConfig::new(server.url("/mcp")));
    match transport
        .send(&request(1, "tools/list"), soon())
        .unwrap_err()
    {
        Error::Protocol(msg) => assert!(msg.contains("{not json at all"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_redirect_is_not_followed_but_says_where_the_server_moved() {
    let server = serve(|_seen, reply| {
        reply.status(
            308,
            &[("Location", "https://new.example/mcp?api_key=SECRET308")],
        )
    });
    let config = HttpConfig::new(server.url("/mcp")).get_stream(false);
    let (transport, _rx) = connect(&config);
    let err = transport
        .send(&request(1, "tools/list"), soon())
        .unwrap_err();
    let Error::Http(http) = &err else {
        panic!("expected an HTTP error, got {err:?}");
    };
    assert_eq!(http.status, 308);
    assert_eq!(
        http.location.as_deref(),
        Some("https://new.example/mcp?api_key=SECRET308")
    );
    let shown = err.to_string();
    assert!(
        shown.contains("moved to https://new.example/mcp"),
        "{shown}"
    );
    assert!(!shown.contains("SECRET308"), "{shown}");
    // Exactly one request: the redirect was not followed.
    assert_eq!(server.next().method, "POST");
    assert!(server
        .next_within(std::time::Duration::from_millis(200))
        .is_none());
}

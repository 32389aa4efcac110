//! Tests of `error`.

use super::*;

#[test]
fn http_and_auth_errors_never_show_url_secrets() {
    let error = HttpError {
        status: 401,
        url: "https://mcp.example/mcp?api_key=sk-live-123".into(),
        www_authenticate: Some(WwwAuthenticate {
            scheme: "Bearer".into(),
            resource_metadata: Some("https://mcp.example/prm?sig=abc".into()),
            ..WwwAuthenticate::default()
        }),
        ..HttpError::default()
    };
    let shown = error.to_string();
    assert!(
        !shown.contains("sk-live-123") && !shown.contains("abc"),
        "{shown}"
    );
    assert!(
        shown.contains("https://mcp.example/mcp?api_key=<redacted>"),
        "{shown}"
    );
    let auth = AuthError {
        status: Some(400),
        url: Some("https://user:pw@as.example/token?x=secret".into()),
        ..AuthError::new(AuthStep::Token, "refused")
    };
    let shown = Error::from(auth).to_string();
    assert!(
        !shown.contains("secret") && !shown.contains("pw@"),
        "{shown}"
    );
}

#[test]
fn a_client_close_reads_plainly_without_stderr() {
    let info = Closed {
        reason: CLOSED_BY_CLIENT.into(),
        exit_status: None,
        stderr_tail: Some("Secure MCP Server running on stdio\n".into()),
    };
    assert!(info.is_client_close());
    assert_eq!(info.to_string(), "closed: closed by client");
    assert!(info.stderr_tail.is_some());
}

#[test]
fn closed_display_carries_status_and_stderr() {
    let info = Closed {
        reason: "server exited during initialize".into(),
        exit_status: None,
        stderr_tail: Some("boom\n".into()),
    };
    assert_eq!(
        Error::Closed(Arc::new(info)).to_string(),
        "closed: server exited during initialize; stderr: boom"
    );
}

#[test]
fn timeout_display_carries_the_stderr_tail_when_there_is_one() {
    let timeout = |stderr_tail: Option<&str>| Error::Timeout {
        method: "initialize".into(),
        elapsed: Duration::from_secs(30),
        kind: TimeoutKind::Request,
        stderr_tail: stderr_tail.map(|t| Arc::new(t.to_owned())),
    };
    assert_eq!(
        timeout(Some("Downloading packages…\n")).to_string(),
        "timeout: request `initialize` after 30.0s; stderr: Downloading packages…"
    );
    assert_eq!(
        timeout(None).to_string(),
        "timeout: request `initialize` after 30.0s"
    );
    assert_eq!(
        timeout(Some(" \n")).to_string(),
        "timeout: request `initialize` after 30.0s"
    );
}

#[test]
fn a_chain_of_causes_shows_each_cause_once() {
    let missing = io::Error::new(io::ErrorKind::NotFound, "No such file or directory");
    let errors = [
        Error::Spawn {
            command: "no-such-bin".into(),
            source: Arc::new(missing),
        },
        Error::io(io::Error::other("connection refused")),
        Error::Rpc(ErrorObject::new(
            crate::jsonrpc::ErrorCode::INVALID_PARAMS,
            "unknown prompt",
        )),
    ];
    for error in errors {
        // What a reporter prints: the error, then every source in turn.
        let mut chain = vec![error.to_string()];
        let mut cause = std::error::Error::source(&error);
        while let Some(next) = cause {
            chain.push(next.to_string());
            cause = next.source();
        }
        let shown = chain.join(": ");
        for part in ["No such file", "connection refused", "unknown prompt"] {
            assert!(shown.matches(part).count() <= 1, "{shown}");
        }
        assert_eq!(chain.len(), 1, "{shown}");
    }
}

#[test]
fn a_server_error_says_its_code_once() {
    let error = |message: &str| {
        Error::Rpc(ErrorObject::new(
            crate::jsonrpc::ErrorCode::INVALID_PARAMS,
            message,
        ))
    };
    // As the TypeScript SDK's servers write it.
    let repeated = error("MCP error -32602: Invalid arguments for tool get-sum");
    assert_eq!(
        repeated.to_string(),
        "server error -32602: Invalid arguments for tool get-sum"
    );
    let Error::Rpc(object) = &repeated else {
        unreachable!()
    };
    assert_eq!(
        object.to_string(),
        "Invalid arguments for tool get-sum (code -32602)"
    );
    // Another code, or none, is the server's own text.
    assert_eq!(
        error("MCP error -32603: boom").to_string(),
        "server error -32602: MCP error -32603: boom"
    );
    assert_eq!(
        error("MCP error").to_string(),
        "server error -32602: MCP error"
    );
}

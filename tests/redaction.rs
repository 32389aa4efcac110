//! Secrets configured into a server's URL or command line stay out of what umcp shows: the
//! descriptions used in log lines and errors, the errors themselves, and the transports' log
//! lines.

#[cfg(feature = "http")]
use umcp_test_support::http_server;

#[cfg(feature = "http")]
#[path = "common/log_capture.rs"]
mod log_capture;

use umcp::transport::Connect;
use umcp::StdioConfig;

#[cfg(feature = "http")]
use log_capture::{logged, logs};

#[test]
fn stdio_command_lines_hide_secret_arguments() {
    let config = StdioConfig::new("npx").args([
        "-y",
        "@example/server",
        "--token",
        "tok-123",
        "--api-key=key-456",
        "GITHUB_TOKEN=ghp_789",
        "--port",
        "8080",
    ]);
    let shown = config.describe();
    for secret in ["tok-123", "key-456", "ghp_789"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    assert!(
        shown.starts_with("npx -y @example/server --token"),
        "{shown}"
    );
    assert!(shown.ends_with("--port 8080"), "{shown}");
}

#[cfg(feature = "http")]
#[test]
fn http_urls_hide_query_values_and_passwords() {
    let shown = umcp::HttpConfig::new("https://me:pw@mcp.example/mcp?api_key=sk-1").describe();
    assert_eq!(
        shown,
        "https://me:<redacted>@mcp.example/mcp?api_key=<redacted>"
    );
}

#[cfg(feature = "http")]
#[test]
fn a_failed_request_does_not_show_the_key_in_its_url() {
    use std::time::Duration;
    // A server that answers every request with 500.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { break };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops",
            );
        }
    });
    let url = format!("http://127.0.0.1:{port}/mcp?api_key=sk-live-secret");
    let config = umcp::HttpConfig::new(&url).transport(umcp::HttpTransportKind::StreamableHttp);
    let options = umcp::Options::default().with_request_timeout(Duration::from_secs(5));
    let error = umcp::Client::connect_with_options(config, options).expect_err("the server fails");
    let shown = format!("{error}");
    assert!(!shown.contains("sk-live-secret"), "{shown}");
    drop(server);
}

/// The legacy SSE transport logs the endpoint the server announced, without the session id in
/// its query, the password in its user info, or the key in the configured URL.
#[cfg(feature = "http")]
#[test]
fn the_legacy_sse_endpoint_is_logged_without_its_secrets() {
    use std::time::Duration;
    use umcp::transport::Inbox;
    use umcp::{HttpConfig, HttpTransportKind};

    logs();
    let server = http_server::serve(|seen, reply| {
        if seen.method != "GET" {
            return reply.status(202, &[]);
        }
        let host = seen.header("host").unwrap_or_default().to_owned();
        let mut events = reply.sse(&[]);
        let endpoint = format!(
            "event: endpoint\ndata: http://agent:pw-sse-secret@{host}/messages?sessionId=sess-sse-secret\n\n"
        );
        events.send(&endpoint).unwrap();
        // Held open while the transport connects.
        std::thread::sleep(Duration::from_millis(500));
        events.end();
    });
    let url = server.url("/sse?api_key=sk-sse-secret");
    let config = HttpConfig::new(url).transport(HttpTransportKind::Sse);
    let (inbox, _rx) = Inbox::new();
    let transport = config.connect(inbox).expect("the endpoint event arrives");
    transport.close();

    let lines = logged("SSE endpoint");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("sessionId=<redacted>") && l.contains("agent:<redacted>@")),
        "{lines:?}"
    );
    for secret in ["sess-sse-secret", "pw-sse-secret", "sk-sse-secret"] {
        assert!(logged(secret).is_empty(), "{:?}", logged(secret));
    }
}

/// Streamable HTTP logs that a session started, never its id: the id is what lets anyone
/// act in the session.
#[cfg(feature = "http")]
#[test]
fn streamable_http_never_logs_the_session_id() {
    use std::time::Duration;
    use umcp::jsonrpc::{Message, Request};
    use umcp::transport::{Inbound, Inbox};
    use umcp::{HttpConfig, HttpTransportKind};

    logs();
    let server = http_server::serve(|seen, reply| {
        let body = seen.json();
        match (seen.method.as_str(), body["id"].as_i64()) {
            ("POST", Some(id)) => {
                let answer = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
                reply.json(200, &[("Mcp-Session-Id", "sess-http-secret")], &answer);
            }
            ("POST", None) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let config = HttpConfig::new(server.url("/mcp?api_key=sk-http-secret"))
        .transport(HttpTransportKind::StreamableHttp);
    let (inbox, rx) = Inbox::new();
    let transport = config.connect(inbox).expect("connect");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let request: Message = Request::new(1, "initialize", Some(serde_json::json!({}))).into();
    transport.send(&request, deadline).expect("sent");
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Inbound::Message(Message::Response(_))) => {}
        other => panic!("expected the response, got {other:?}"),
    }
    transport.close();

    assert!(
        !logged("the server started a session").is_empty(),
        "the session is logged"
    );
    for secret in ["sess-http-secret", "sk-http-secret"] {
        assert!(logged(secret).is_empty(), "{:?}", logged(secret));
    }
}

/// An endpoint on another origin is refused; the error names it without its secrets.
#[cfg(feature = "http")]
#[test]
fn a_foreign_sse_endpoint_is_refused_without_showing_its_secrets() {
    use std::time::Duration;
    use umcp::transport::Inbox;
    use umcp::{HttpConfig, HttpTransportKind};

    let server = http_server::serve(|seen, reply| {
        if seen.method != "GET" {
            return reply.status(202, &[]);
        }
        let mut events = reply.sse(&[]);
        let endpoint = "event: endpoint\ndata: https://x:pw-far-secret@elsewhere.example/m?sessionId=sess-far-secret\n\n";
        events.send(endpoint).unwrap();
        std::thread::sleep(Duration::from_millis(500));
        events.end();
    });
    let config =
        HttpConfig::new(server.url("/sse?api_key=sk-far-secret")).transport(HttpTransportKind::Sse);
    let (inbox, _rx) = Inbox::new();
    let error = match config.connect(inbox) {
        Ok(_) => panic!("an endpoint on another origin is refused"),
        Err(error) => error.to_string(),
    };
    assert!(error.contains("elsewhere.example"), "{error}");
    for secret in ["pw-far-secret", "sess-far-secret", "sk-far-secret"] {
        assert!(!error.contains(secret), "{error}");
    }
}

#[cfg(feature = "http")]
#[test]
fn http_config_debug_hides_the_password_query_and_header_values() {
    let config = umcp::HttpConfig::new("http://u:SECRET_PW@127.0.0.1:1/mcp?api_key=SECRET_Q")
        .header("Authorization", "Bearer SECRET_H");
    let shown = format!("{config:?}");
    for secret in ["SECRET_PW", "SECRET_Q", "SECRET_H"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    assert!(shown.contains("api_key=<redacted>"), "{shown}");
    assert!(shown.contains("Authorization"), "{shown}");
}

#[cfg(feature = "http")]
#[test]
fn a_url_without_its_scheme_is_refused_without_its_key() {
    let url = "mcp.example.com/mcp?api_key=SECRET_NOSCHEME";
    let error = umcp::Client::connect(umcp::HttpConfig::new(url)).expect_err("no scheme");
    let shown = error.to_string();
    assert!(!shown.contains("SECRET_NOSCHEME"), "{shown}");
    assert!(
        shown.contains("not an http(s) URL: `mcp.example.com/mcp?api_key=<redacted>`"),
        "{shown}"
    );
    // The manager reports the same error as the server's status.
    let servers = vec![umcp::ServerConfig::http("f", url)];
    let manager = umcp::Manager::start(servers, umcp::ManagerOptions::default());
    manager.wait_ready(std::time::Duration::from_secs(5));
    for (name, status) in manager.statuses() {
        let status = status.to_string();
        assert!(!status.contains("SECRET_NOSCHEME"), "{name}: {status}");
    }
}

#[test]
fn server_config_debug_hides_expanded_values() {
    let vars = |name: &str| (name == "TOKEN").then(|| "SECRET_TOK".to_owned());
    let file = umcp::ConfigFile::parse_with(
        r#"{"mcpServers": {
            "h": {"url": "http://x:${TOKEN}@127.0.0.1:1/mcp?key=${TOKEN}",
                  "headers": {"Authorization": "Bearer ${TOKEN}", "X-Trace": "on"}},
            "s": {"command": "srv", "args": ["--token", "${TOKEN}", "--port", "80"],
                  "env": {"API_TOKEN": "${TOKEN}", "LEVEL": "debug"}}
        }}"#,
        &vars,
    )
    .unwrap();
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let shown = format!("{:?}", file.servers);
    assert!(!shown.contains("SECRET_TOK"), "{shown}");
    // The structure stays visible: names, the host, the arguments that are not secret.
    for kept in [
        "Authorization",
        "X-Trace",
        "127.0.0.1:1/mcp",
        "API_TOKEN",
        "LEVEL",
        "--port",
        "\"80\"",
        "srv",
    ] {
        assert!(shown.contains(kept), "{kept} in {shown}");
    }
}

/// A URL written without its scheme still has its password and query values redacted: in the
/// error of connecting, the manager's status and the configurations' `Debug`.
#[cfg(feature = "http")]
#[test]
fn a_url_without_its_scheme_is_refused_without_its_password() {
    let urls = [
        "me:SECRET_PW1@mcp.example.com/mcp?api_key=SECRET_Q1",
        "//me:SECRET_PW2@mcp.example.com/x",
        "//tok-SECRET_USER3@mcp.example.com",
        "me:SECRET_PW4@mcp.example.com/a/http://elsewhere.example",
    ];
    let secrets = ["SECRET_PW", "SECRET_Q", "SECRET_USER"];
    for url in urls {
        let error = umcp::Client::connect(umcp::HttpConfig::new(url)).expect_err("no scheme");
        let shown = error.to_string();
        assert!(shown.contains("mcp.example.com"), "{shown}");
        for secret in secrets {
            assert!(!shown.contains(secret), "{shown}");
        }
        let debug = format!(
            "{:?} {:?}",
            umcp::HttpConfig::new(url),
            umcp::ServerConfig::http("f", url)
        );
        assert!(debug.contains("@mcp.example.com"), "{debug}");
        for secret in secrets {
            assert!(!debug.contains(secret), "{debug}");
        }
    }
    let error = umcp::Client::connect(umcp::HttpConfig::new(urls[0])).expect_err("no scheme");
    assert!(
        error
            .to_string()
            .contains("not an http(s) URL: `me:<redacted>@mcp.example.com/mcp?api_key=<redacted>`"),
        "{error}"
    );
    let servers: Vec<umcp::ServerConfig> = urls
        .iter()
        .enumerate()
        .map(|(i, url)| umcp::ServerConfig::http(format!("s{i}"), *url))
        .collect();
    let manager = umcp::Manager::start(servers, umcp::ManagerOptions::default());
    manager.wait_ready(std::time::Duration::from_secs(5));
    for (name, status) in manager.statuses() {
        let status = status.to_string();
        for secret in secrets {
            assert!(!status.contains(secret), "{name}: {status}");
        }
    }
}

/// Text around the scheme (a space pasted with the URL, angle brackets, a scheme that is not
/// one) and typos of it do not let the password out; neither does a password holding `/`, `?`
/// or `#`.
#[cfg(feature = "http")]
#[test]
fn a_url_refused_for_its_scheme_hides_its_password() {
    let refused = [
        " https://me:SECRET_A@mcp.example.com/mcp",
        "\thttps://me:SECRET_A@mcp.example.com/mcp",
        "<https://me:SECRET_A@mcp.example.com/mcp>",
        "my_scheme://me:SECRET_A@mcp.example.com/mcp",
        "https:/me:SECRET_A@mcp.example.com/mcp",
        "https//me:SECRET_A@mcp.example.com/mcp",
        " https://me:SECRET_A/SECRET_B@mcp.example.com/mcp",
        " https://me:SECRET_A?SECRET_B@mcp.example.com/mcp",
        " https://me:SECRET_A#SECRET_B@mcp.example.com/mcp",
    ];
    let shown_by = |url: &str| -> String {
        let error = umcp::Client::connect(umcp::HttpConfig::new(url)).expect_err("refused");
        let debug = format!("{:?}", umcp::ServerConfig::http("f", url));
        format!("{error} {debug}")
    };
    for url in refused {
        let shown = shown_by(url);
        assert!(shown.contains("not an http(s) URL"), "{shown}");
        assert!(shown.contains("@mcp.example.com/mcp"), "{shown}");
        assert!(!shown.contains("SECRET"), "{shown}");
    }
    // A URL that is accepted shows the same way in its `Debug`.
    for url in [
        "https://me:SECRET_A/SECRET_B@127.0.0.1:1/mcp",
        "https://me:SECRET_A?SECRET_B@127.0.0.1:1/mcp",
        "https://me:SECRET_A#SECRET_B@127.0.0.1:1/mcp",
    ] {
        let debug = format!(
            "{:?} {:?}",
            umcp::HttpConfig::new(url),
            umcp::ServerConfig::http("f", url)
        );
        assert!(debug.contains("me:<redacted>@127.0.0.1:1/mcp"), "{debug}");
        assert!(!debug.contains("SECRET"), "{debug}");
    }
}

/// Without a scheme, only `user:password@` is taken for credentials: an address is quoted as
/// written.
#[cfg(feature = "http")]
#[test]
fn a_url_without_its_scheme_keeps_a_user_without_a_password() {
    let url = "bob@mcp.example.com/mcp";
    let error = umcp::Client::connect(umcp::HttpConfig::new(url)).expect_err("no scheme");
    assert!(
        error
            .to_string()
            .contains("not an http(s) URL: `bob@mcp.example.com/mcp`"),
        "{error}"
    );
}

/// A proxy's password (in a configured proxy or a key file's name) shows nowhere: not in the
/// configuration's `Debug`, the error of a failed connection, nor the transport's log lines.
#[cfg(feature = "http")]
#[test]
fn proxy_passwords_and_client_keys_stay_hidden() {
    logs();
    let identity = umcp::ClientIdentity::from_pem(
        b"-----BEGIN CERTIFICATE-----".to_vec(),
        b"SECRET_KEY_PEM".to_vec(),
    );
    let config = umcp::HttpConfig::new("https://127.0.0.1:1/mcp")
        .proxy(umcp::Proxy::url(
            "http://proxy-user:SECRET_PROXY_PW@127.0.0.1:1",
        ))
        .client_identity(identity);
    let shown = format!("{config:?}");
    for secret in ["SECRET_PROXY_PW", "SECRET_KEY_PEM"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    assert!(
        shown.contains("proxy-user:<redacted>@127.0.0.1:1"),
        "{shown}"
    );
    // The key is not PEM: the connection fails on it, without quoting it.
    let error = umcp::Client::connect(config.clone()).expect_err("a bad key");
    assert!(matches!(error, umcp::Error::Config(_)), "{error:?}");
    assert!(!error.to_string().contains("SECRET_KEY_PEM"), "{error}");
    let config = umcp::HttpConfig::new("http://127.0.0.1:1/mcp").proxy(umcp::Proxy::url(
        "http://proxy-user:SECRET_PROXY_PW@127.0.0.1:1",
    ));
    let error = umcp::Client::connect(config).expect_err("nothing listens");
    let text = format!("{error} {error:?}");
    assert!(!text.contains("SECRET_PROXY_PW"), "{text}");
    assert!(text.contains("proxy-user:<redacted>@127.0.0.1:1"), "{text}");
    assert!(
        logged("SECRET_PROXY_PW").is_empty(),
        "{:?}",
        logged("SECRET_PROXY_PW")
    );
    assert!(logged("SECRET_KEY_PEM").is_empty());
}

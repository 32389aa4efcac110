//! Secrets configured into a server's URL or command line stay out of what umcp shows: the
//! descriptions used in log lines and errors, and the errors themselves.

use umcp::transport::Connect;
use umcp::StdioConfig;

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
    let error = umcp::Client::connect_with(config, options).expect_err("the server fails");
    let shown = format!("{error}");
    assert!(!shown.contains("sk-live-secret"), "{shown}");
    drop(server);
}

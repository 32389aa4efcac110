//! Managed servers over HTTP: an endpoint that needs authorization, and real peers over three
//! transports in one group.

use std::time::Duration;

use serde_json::{json, Value};
use umcp::{HttpConfig, HttpTransportKind, Manager, ServerConfig, ServerStatus, StdioConfig};

use crate::status::wait_for;
use crate::{common, demo_server, options, text, BOUND};

/// An HTTP endpoint that answers every request with 401 and a Bearer challenge, until the
/// returned sender is dropped.
#[cfg(feature = "http")]
fn unauthorized_endpoint() -> (String, std::sync::mpsc::Sender<()>) {
    let server = tiny_http::Server::http("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", server.server_addr());
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let challenge = r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="tools""#;
        while let Err(std::sync::mpsc::TryRecvError::Empty) = stop_rx.try_recv() {
            let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(50)) else {
                continue;
            };
            let header = tiny_http::Header::from_bytes("WWW-Authenticate", challenge).unwrap();
            let response = tiny_http::Response::from_string("no token")
                .with_status_code(401)
                .with_header(header);
            let _ = request.respond(response);
        }
    });
    (url, stop_tx)
}

#[cfg(feature = "http")]
#[test]
fn unauthorized_http_server_needs_authorization_and_is_not_retried() {
    let (url, _stop) = unauthorized_endpoint();
    let manager = Manager::start(
        vec![ServerConfig::http("secure", url), demo_server("good")],
        options(),
    );
    let events = manager.status_events();
    let status = wait_for(&events, "secure", |s| {
        matches!(s, ServerStatus::NeedsAuthorization { .. })
    });
    let ServerStatus::NeedsAuthorization { hints } = status else {
        unreachable!()
    };
    assert_eq!(hints.status, 401);
    let challenge = hints.www_authenticate.expect("parsed challenge");
    assert_eq!(challenge.scheme, "Bearer");
    assert_eq!(challenge.scope.as_deref(), Some("tools"));
    assert!(challenge
        .resource_metadata
        .unwrap()
        .ends_with("oauth-protected-resource"));

    let err = manager.client("secure").unwrap_err();
    assert!(err.needs_authorization(), "{err}");
    assert!(manager.wait_ready(BOUND));
    assert!(manager.status("good").unwrap().is_connected());
    // No retry follows: the next event for `secure` is the one `close` causes.
    manager.close();
    let next = wait_for(&events, "secure", |_| true);
    assert!(matches!(next, ServerStatus::Stopped), "{next}");
}

#[test]
#[cfg(feature = "http")]
fn interop_group_over_three_transports() {
    if common::peers::skip_interop() {
        return;
    }
    let everything = ServerConfig::new(
        "everything",
        StdioConfig::new(common::peers::node().to_string_lossy()).args([
            common::peers::server_everything()
                .to_string_lossy()
                .into_owned(),
            "stdio".into(),
        ]),
    );
    // Started and listening before the manager starts: each is stopped when the test ends.
    let http_peer = common::peers::python_http(&["streamable-http"]);
    let sse_peer = common::peers::python_http(&["sse"]);
    let py_http = ServerConfig::http("py_http", http_peer.url("/mcp"));
    let py_sse = ServerConfig::new(
        "py_sse",
        HttpConfig::new(sse_peer.url("/sse")).transport(HttpTransportKind::Sse),
    );
    let options = options().with_startup_timeout(Duration::from_secs(60));
    let manager = Manager::start(vec![everything, py_http, py_sse], options);
    let events = manager.status_events();
    let mut transports = std::collections::BTreeMap::new();
    while transports.len() < 3 {
        let event = events
            .recv_timeout(Duration::from_secs(120))
            .expect("every peer connects");
        if let ServerStatus::Connected { transport, .. } = event.status {
            transports.insert(event.server, transport);
        }
    }
    let transports: Vec<(&str, &str)> = transports.iter().map(|(s, t)| (s.as_str(), *t)).collect();
    assert_eq!(
        transports,
        [
            ("everything", "stdio"),
            ("py_http", "streamable-http"),
            ("py_sse", "sse")
        ]
    );

    let call = |tool: &str, args: Value| text(&manager.call_tool(tool, args).unwrap());
    assert_eq!(
        call("everything__echo", json!({"message": "hi"})),
        "Echo: hi"
    );
    assert_eq!(call("py_http__add", json!({"a": 2, "b": 3})), "5");
    assert_eq!(
        call("py_sse__echo", json!({"text": "over sse"})),
        "over sse"
    );
    let read = manager.read_resource("py_sse", "demo://greeting").unwrap();
    let read = serde_json::to_value(read).unwrap();
    assert_eq!(
        read["contents"][0]["text"],
        "Hello from the Python MCP server!"
    );
    let (prompts, errors) = manager.list_prompts();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(prompts.iter().any(|p| p.name == "py_http__review"));
    assert!(prompts.iter().any(|p| p.name == "py_sse__review"));
}

//! Tests for the way through a company network, with real components written by others:
//! mitmproxy 11 (a TLS-intercepting proxy with its own CA, a forward proxy that buffers or
//! streams bodies, a SOCKS5 proxy), a test certificate authority from trustme, and the Python
//! SDK 2.3 server and server-everything behind them, in both protocol eras; the Python server
//! also over TLS requiring a client certificate, and on a Unix domain socket.
//!
//! The environment variables (`https_proxy`, `no_proxy`, `SSL_CERT_FILE`) are tested in child
//! processes of this test binary, so that no test changes the environment of the others.
#![cfg(feature = "http")]

mod common;

#[cfg(feature = "oauth")]
use umcp_test_support::auth_server;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use common::interop::{call_text, options};
use common::peers::{self, network};
use network::{certs, python_https, Mitm, MitmMode, UnixPeer};
use umcp::{
    Client, ClientIdentity, Error, HttpConfig, NetworkError, NetworkProblem, Options, ProtocolMode,
    Proxy,
};

/// Both eras, as the client is told to speak them.
fn eras() -> [(&'static str, ProtocolMode); 2] {
    [
        ("legacy", ProtocolMode::Legacy),
        ("modern", ProtocolMode::modern()),
    ]
}

fn connect(config: HttpConfig, mode: ProtocolMode) -> umcp::Result<Client> {
    Client::connect_with_options(config, options().with_protocol_mode(mode))
}

/// The network failure in `result`.
fn network_error<T: std::fmt::Debug>(result: umcp::Result<T>) -> NetworkError {
    match result {
        Err(Error::Network(e)) => *e,
        other => panic!("expected a network error, got {other:?}"),
    }
}

/// Lists the tools and calls `add` on the Python server.
fn use_python(client: &Client) {
    let tools = client.list_all_tools().expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "add"), "{tools:?}");
    assert_eq!(call_text(client, "add", json!({"a": 2, "b": 3})), "5");
}

/// Behind mitmproxy intercepting TLS with a CA umcp does not trust, connecting fails naming
/// the unknown issuer and how to trust it; with that CA added, tools and a call work in both
/// eras, and the proxy saw the requests.
#[test]
fn intercepting_proxy_needs_its_ca_then_works_in_both_eras() {
    if peers::skip_interop() {
        return;
    }
    let server = python_https("server.pem", "server.key", false);
    let mitm = Mitm::start(MitmMode::Streaming, &certs().file("ca.pem"));
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let config = HttpConfig::new(&url).proxy(Proxy::url(mitm.url()));

    let refused = network_error(connect(config.clone(), ProtocolMode::Legacy));
    assert_eq!(refused.problem, NetworkProblem::UnknownIssuer, "{refused}");
    let text = refused.to_string();
    assert!(text.contains("issued by `mitmproxy`"), "{text}");
    assert!(
        text.contains("--cacert") && text.contains("TrustRoots::System"),
        "{text}"
    );
    assert_eq!(
        refused.proxy.as_deref(),
        Some(mitm.url().as_str()),
        "{text}"
    );

    let trusting = config.add_ca_file(mitm.ca());
    for (era, mode) in eras() {
        let client = connect(trusting.clone(), mode).unwrap_or_else(|e| panic!("{era}: {e}"));
        use_python(&client);
        client.close();
    }
    assert!(
        mitm.seen(&format!("POST {url}"), 4) >= 4,
        "{}",
        mitm.output()
    );
}

/// A server whose certificate comes from an authority not trusted is refused with the issuer
/// named; trusting the authority (as an extra CA) lets it through; an expired certificate is
/// called expired.
#[test]
fn certificate_failures_say_what_and_the_ca_fixes_them() {
    if peers::skip_interop() {
        return;
    }
    let certs = certs();
    let server = python_https("server.pem", "server.key", false);
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let direct = HttpConfig::new(&url).proxy(Proxy::none());

    let untrusted = network_error(connect(direct.clone(), ProtocolMode::Legacy));
    assert_eq!(untrusted.problem, NetworkProblem::UnknownIssuer);
    assert!(
        untrusted.to_string().contains("umcp test CA"),
        "{untrusted}"
    );
    // The bundled roots, or SSL_CERT_FILE's where the machine sets it.
    assert!(untrusted.roots.is_some(), "{untrusted}");
    let other = network_error(connect(
        direct.clone().add_ca_file(certs.file("other-ca.pem")),
        ProtocolMode::Legacy,
    ));
    assert_eq!(other.problem, NetworkProblem::UnknownIssuer);

    let client = connect(
        direct.add_ca_file(certs.file("ca.pem")),
        ProtocolMode::Legacy,
    )
    .expect("trusted through the extra CA");
    use_python(&client);
    client.close();

    let expired = python_https("expired.pem", "expired.key", false);
    let url = format!("https://127.0.0.1:{}/mcp", expired.port());
    let config = HttpConfig::new(url)
        .proxy(Proxy::none())
        .add_ca_file(certs.file("ca.pem"));
    let error = network_error(connect(config, ProtocolMode::Legacy));
    assert_eq!(error.problem, NetworkProblem::Expired, "{error}");
    assert!(error.to_string().contains("2001-01-01"), "{error}");
}

/// A server that requires a client certificate refuses a client without one, saying so, and
/// serves one with it.
#[test]
fn client_certificate_required_then_shown() {
    if peers::skip_interop() {
        return;
    }
    let certs = certs();
    let server = python_https("server.pem", "server.key", true);
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let config = HttpConfig::new(url)
        .proxy(Proxy::none())
        .add_ca_file(certs.file("ca.pem"));

    let refused = network_error(connect(config.clone(), ProtocolMode::Legacy));
    assert_eq!(
        refused.problem,
        NetworkProblem::ClientCertificateRequired,
        "{refused}"
    );
    assert!(refused.to_string().contains("--cert"), "{refused}");

    let identity =
        ClientIdentity::from_pem_files(certs.file("client.pem"), certs.file("client.key"));
    let shown = format!("{:?}", config.clone().client_identity(identity.clone()));
    assert!(!shown.contains("PRIVATE KEY"), "{shown}");
    for (era, mode) in eras() {
        let client = connect(config.clone().client_identity(identity.clone()), mode)
            .unwrap_or_else(|e| panic!("{era}: {e}"));
        use_python(&client);
        client.close();
    }
    let missing = ClientIdentity::from_pem_files(certs.file("client.pem"), "/no/such/key.pem");
    match connect(config.client_identity(missing), ProtocolMode::Legacy) {
        Err(Error::Config(message)) => assert!(message.contains("/no/such/key.pem"), "{message}"),
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

/// The fastest of three connects and listings of the tools with `config`.
fn fastest_listing(config: &HttpConfig, mode: &ProtocolMode) -> Duration {
    (0..3)
        .map(|_| {
            let started = Instant::now();
            let client = connect(config.clone(), mode.clone()).expect("connect");
            client.list_all_tools().expect("tools/list");
            let took = started.elapsed();
            client.close();
            took
        })
        .min()
        .expect("three runs")
}

/// Through a streaming forward proxy, connecting and listing the tools takes at most a second
/// more than directly, in both eras, against the Python server and server-everything (whose
/// standalone GET stream the proxy holds back until its first event).
#[test]
fn streaming_proxy_costs_under_a_second_in_both_eras() {
    if peers::skip_interop() {
        return;
    }
    let python = peers::python_http(&["streamable-http"]);
    let everything = peers::server_everything_http("streamableHttp");
    let mitm = Mitm::start(MitmMode::Streaming, &certs().file("ca.pem"));
    let servers = [
        (python.url("/mcp"), eras().to_vec()),
        (
            everything.url("/mcp"),
            vec![("legacy", ProtocolMode::Legacy)],
        ),
    ];
    for (url, modes) in servers {
        for (era, mode) in modes {
            let direct = HttpConfig::new(&url).proxy(Proxy::none());
            let proxied = HttpConfig::new(&url).proxy(Proxy::url(mitm.url()));
            let direct_took = fastest_listing(&direct, &mode);
            let proxied_took = fastest_listing(&proxied, &mode);
            assert!(
                proxied_took < direct_took + Duration::from_secs(1),
                "{url} ({era}): {proxied_took:?} through the proxy, {direct_took:?} directly"
            );
        }
    }
    assert!(
        mitm.seen("POST http://127.0.0.1:", 1) >= 1,
        "{}",
        mitm.output()
    );
}

/// Through a proxy that buffers whole responses, connecting and listing ends within the
/// client's timeouts, and a call whose streamed answer the proxy holds past its deadline fails
/// on time.
#[test]
fn buffering_proxy_never_outlives_the_deadline() {
    if peers::skip_interop() {
        return;
    }
    let python = peers::python_http(&["streamable-http"]);
    let mitm = Mitm::start(MitmMode::Buffering, &certs().file("ca.pem"));
    let timeout = Duration::from_secs(4);
    let slack = Duration::from_millis(1500);
    for (era, mode) in eras() {
        let config = HttpConfig::new(python.url("/mcp")).proxy(Proxy::url(mitm.url()));
        let options = Options::default()
            .with_protocol_mode(mode)
            .with_startup_timeout(timeout)
            .with_request_timeout(timeout);
        let started = Instant::now();
        let client =
            Client::connect_with_options(config, options).unwrap_or_else(|e| panic!("{era}: {e}"));
        let tools = client.list_all_tools();
        let call = client
            .with(&umcp::RequestOptions::default().with_timeout(Duration::from_secs(2)))
            .call_tool("long_task", json!({"steps": 400}));
        assert!(tools.is_ok(), "{era}: {tools:?}");
        match call {
            Err(e) if e.is_timeout() => {}
            other => panic!("{era}: expected a timeout, got {other:?}"),
        }
        client.close();
        let took = started.elapsed();
        assert!(
            took < timeout * 2 + Duration::from_secs(2) + slack,
            "{era}: {took:?}"
        );
    }
}

/// A SOCKS5 proxy (resolving here, or at the proxy with `socks5h`) carries the requests.
#[test]
fn socks5_proxy_carries_both_eras() {
    if peers::skip_interop() {
        return;
    }
    let python = peers::python_http(&["streamable-http"]);
    let mitm = Mitm::start(MitmMode::Socks5, &certs().file("ca.pem"));
    for (scheme, (era, mode)) in ["socks5", "socks5h"].into_iter().zip(eras()) {
        let proxy = mitm.url().replacen("socks5", scheme, 1);
        let config = HttpConfig::new(python.url("/mcp")).proxy(Proxy::url(proxy));
        let client = connect(config, mode).unwrap_or_else(|e| panic!("{scheme} {era}: {e}"));
        use_python(&client);
        client.close();
    }
    let needle = format!("POST http://127.0.0.1:{}/mcp", python.port());
    assert!(mitm.seen(&needle, 2) >= 2, "{}", mitm.output());

    let dead = HttpConfig::new(python.url("/mcp")).proxy(Proxy::url("socks5://127.0.0.1:1"));
    let error = network_error(connect(dead, ProtocolMode::Legacy));
    assert_eq!(error.problem, NetworkProblem::ProxyUnreachable, "{error}");
}

/// A proxy that wants credentials is named with its answer; the password never shows.
#[test]
fn proxy_failures_name_the_proxy_and_hide_its_password() {
    if peers::skip_interop() {
        return;
    }
    let python = peers::python_http(&["streamable-http"]);
    let unreachable =
        HttpConfig::new(python.url("/mcp")).proxy(Proxy::url("http://alice:hunter2@127.0.0.1:1"));
    let error = network_error(connect(unreachable, ProtocolMode::Legacy));
    assert_eq!(error.problem, NetworkProblem::ProxyUnreachable);
    let text = format!("{error} {error:?}");
    assert!(
        text.contains("http://alice:<redacted>@127.0.0.1:1"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
}

/// Streamable HTTP to a server listening on a Unix domain socket, in both eras.
#[cfg(unix)]
#[test]
fn unix_domain_socket_in_both_eras() {
    if peers::skip_interop() {
        return;
    }
    let server = UnixPeer::start();
    for (era, mode) in eras() {
        let config = HttpConfig::new("http://localhost:8000/mcp").unix_socket(&server.path);
        let client = connect(config, mode).unwrap_or_else(|e| panic!("{era}: {e}"));
        use_python(&client);
        client.close();
    }
}

/// What a child process of this binary does (see [`environment_decides_proxy_and_roots`]):
/// connects to `UMCP_NET_CHILD_URL` with the default settings and prints the outcome.
#[test]
fn environment_child() {
    let Ok(url) = std::env::var("UMCP_NET_CHILD_URL") else {
        return;
    };
    let outcome = connect(HttpConfig::new(url), ProtocolMode::Legacy)
        .and_then(|client| client.list_all_tools().map(|tools| tools.len()));
    match outcome {
        Ok(count) => println!("CHILD-OK {count} tools"),
        Err(e) => println!("CHILD-ERR {e}"),
    }
}

/// Runs [`environment_child`] in a child process against `url` with `vars` set (and every proxy
/// and certificate variable of this process removed); returns its output.
fn child(url: &str, vars: &[(&str, String)]) -> String {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command.args([
        "--exact",
        "environment_child",
        "--nocapture",
        "--test-threads=1",
    ]);
    for name in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "no_proxy",
        "NO_PROXY",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUEST_METHOD",
    ] {
        command.env_remove(name);
    }
    command.env("UMCP_NET_CHILD_URL", url);
    for (name, value) in vars {
        command.env(name, value);
    }
    let output = command.output().expect("run the child");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(text.contains("CHILD-"), "the child printed nothing: {text}");
    text
}

/// With `HTTP_PROXY` (or `HTTPS_PROXY` for https) set, the proxy sees the requests; `NO_PROXY`
/// naming the host bypasses it; `SSL_CERT_FILE` names the roots an https server is checked
/// against.
#[test]
fn environment_decides_proxy_and_roots() {
    if peers::skip_interop() {
        return;
    }
    let certs = certs();
    let python = peers::python_http(&["streamable-http"]);
    let mitm = Mitm::start(MitmMode::Streaming, &certs.file("ca.pem"));
    let url = python.url("/mcp");
    let needle = format!("POST {url}");

    let through = child(&url, &[("HTTP_PROXY", mitm.url())]);
    assert!(through.contains("CHILD-OK"), "{through}");
    let seen = mitm.seen(&needle, 1);
    assert!(seen >= 1, "{}", mitm.output());

    // The runs that must not go through the proxy ask for a URL of their own, so a late line of
    // the first run in the proxy's log is not taken for one of theirs.
    let direct = format!("{url}?direct");
    let bypassed = child(
        &direct,
        &[
            ("HTTP_PROXY", mitm.url()),
            ("NO_PROXY", "localhost,127.0.0.0/8".into()),
        ],
    );
    assert!(bypassed.contains("CHILD-OK"), "{bypassed}");
    // The https variable is for https URLs only.
    let other_scheme = child(&direct, &[("HTTPS_PROXY", "http://127.0.0.1:1".into())]);
    assert!(other_scheme.contains("CHILD-OK"), "{other_scheme}");
    assert_eq!(
        mitm.seen(&format!("POST {direct}"), 1),
        0,
        "{}",
        mitm.output()
    );

    let https = python_https("server.pem", "server.key", false);
    let secure = format!("https://127.0.0.1:{}/mcp", https.port());
    let untrusted = child(&secure, &[]);
    assert!(
        untrusted.contains("CHILD-ERR") && untrusted.contains("not issued by a trusted"),
        "{untrusted}"
    );
    let ca = certs.file("ca.pem").to_string_lossy().into_owned();
    let trusted = child(&secure, &[("SSL_CERT_FILE", ca.clone())]);
    assert!(trusted.contains("CHILD-OK"), "{trusted}");
    let proxied = child(
        &secure,
        &[
            ("SSL_CERT_FILE", mitm.ca().to_string_lossy().into_owned()),
            ("HTTPS_PROXY", mitm.url()),
        ],
    );
    assert!(proxied.contains("CHILD-OK"), "{proxied}");
    assert!(
        mitm.seen(&format!("POST {secure}"), 1) >= 1,
        "{}",
        mitm.output()
    );
}

/// An OAuth-protected server reached through a proxy: the discovery, registration and token
/// requests take the same proxy as the MCP requests (`OAuthConfig::same_network_as`).
#[cfg(feature = "oauth")]
#[test]
fn oauth_discovery_and_tokens_go_through_the_proxy() {
    use std::sync::Arc;
    use umcp::auth::{HeadlessHandler, OAuth, OAuthConfig};

    if peers::skip_interop() {
        return;
    }
    let fixture = auth_server::AuthServer::start(auth_server::Setup::default());
    let mitm = Mitm::start(MitmMode::Streaming, &certs().file("ca.pem"));
    let server = HttpConfig::new(fixture.mcp_url())
        .proxy(Proxy::url(mitm.url()))
        .standalone_stream(false);
    let config = OAuthConfig::new(HeadlessHandler::new())
        .timeout(Duration::from_secs(10))
        .same_network_as(&server);
    let oauth = Arc::new(OAuth::new(fixture.mcp_url(), config).expect("a valid URL"));
    let found = oauth.discover(None).expect("discovery through the proxy");
    assert_eq!(found.issuer, fixture.issuer());
    assert!(
        found.published && found.metadata.token_endpoint.is_some(),
        "{found:?}"
    );
    let client = Client::connect_with_options(
        server.credentials(oauth),
        options().with_protocol_mode(ProtocolMode::Legacy),
    )
    .expect("authorized through the proxy");
    assert!(!client.list_all_tools().expect("tools/list").is_empty());
    client.close();
    let base = fixture.base();
    // mitmproxy shortens long URLs in its log, ending them with `…`.
    for path in [
        "GET {}/.well-known/oauth-prot",
        "POST {}/register",
        "POST {}/token",
    ] {
        let needle = path.replace("{}", &base);
        assert!(mitm.seen(&needle, 1) >= 1, "{needle}: {}", mitm.output());
    }
}

/// The steps and whether each passed.
fn steps(checks: &[umcp::NetworkCheck]) -> Vec<(umcp::NetworkStep, bool)> {
    checks.iter().map(|c| (c.step, c.ok)).collect()
}

/// `check_network` passes every step on a healthy server, showing the chain and the roots, and
/// names the failing step behind an intercepting proxy, without a client certificate, and with
/// the proxy down.
#[test]
fn network_check_names_the_failing_step() {
    use umcp::NetworkStep::{Dns, Http, Proxy as ProxyStep, Tcp, Tls};

    if peers::skip_interop() {
        return;
    }
    let certs = certs();
    let wait = Duration::from_secs(10);
    let server = python_https("server.pem", "server.key", false);
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let healthy = HttpConfig::new(&url)
        .proxy(Proxy::none())
        .add_ca_file(certs.file("ca.pem"))
        .check_network(wait);
    assert_eq!(
        steps(&healthy),
        [
            (ProxyStep, true),
            (Dns, true),
            (Tcp, true),
            (Tls, true),
            (Http, true)
        ],
        "{healthy:#?}"
    );
    assert!(
        healthy[3].detail.contains("issued by `umcp test CA`"),
        "{healthy:#?}"
    );

    let mitm = Mitm::start(MitmMode::Streaming, &certs.file("ca.pem"));
    let intercepted = HttpConfig::new(&url)
        .proxy(Proxy::url(mitm.url()))
        .check_network(wait);
    assert_eq!(
        steps(&intercepted),
        [(ProxyStep, true), (Dns, true), (Tcp, true), (Tls, false)],
        "{intercepted:#?}"
    );
    assert!(
        intercepted[0].detail.contains(&mitm.url()),
        "{intercepted:#?}"
    );
    assert!(
        intercepted[3].detail.contains("mitmproxy"),
        "{intercepted:#?}"
    );
    assert!(
        intercepted[3]
            .fix
            .as_deref()
            .is_some_and(|f| f.contains("--cacert")),
        "{intercepted:#?}"
    );
    let trusted = HttpConfig::new(&url)
        .proxy(Proxy::url(mitm.url()))
        .add_ca_file(mitm.ca())
        .check_network(wait);
    assert!(
        trusted.iter().all(|c| c.ok) && trusted.len() == 5,
        "{trusted:#?}"
    );

    let mtls = python_https("server.pem", "server.key", true);
    let checks = HttpConfig::new(format!("https://127.0.0.1:{}/mcp", mtls.port()))
        .proxy(Proxy::none())
        .add_ca_file(certs.file("ca.pem"))
        .check_network(wait);
    let last = checks.last().expect("steps");
    assert_eq!((last.step, last.ok), (Tls, false), "{checks:#?}");
    assert!(last.detail.contains("client certificate"), "{checks:#?}");

    let down = HttpConfig::new(&url)
        .proxy(Proxy::url("http://127.0.0.1:1"))
        .check_network(wait);
    assert_eq!(
        steps(&down),
        [(ProxyStep, true), (Dns, true), (Tcp, false)],
        "{down:#?}"
    );
    assert!(down[2].detail.contains("the proxy"), "{down:#?}");
}

/// The operating system's store: without the feature it is refused as unsupported; with it, the
/// test CA added on top lets the TLS server through, and without that CA its issuer is unknown.
#[test]
fn system_trust_store_takes_extra_cas() {
    if peers::skip_interop() {
        return;
    }
    let certs = certs();
    let server = python_https("server.pem", "server.key", false);
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let system = HttpConfig::new(&url)
        .proxy(Proxy::none())
        .trust_roots(umcp::TrustRoots::System);
    let outcome = connect(system.clone(), ProtocolMode::Legacy);
    if cfg!(not(feature = "system-trust")) {
        match outcome {
            Err(Error::Unsupported(e)) => assert!(e.to_string().contains("system-trust"), "{e}"),
            other => panic!("expected the feature to be named, got {other:?}"),
        }
        return;
    }
    let refused = network_error(outcome);
    assert_eq!(refused.problem, NetworkProblem::UnknownIssuer, "{refused}");
    assert!(
        refused
            .to_string()
            .contains("operating system's trust store"),
        "{refused}"
    );
    let client = connect(
        system.add_ca_file(certs.file("ca.pem")),
        ProtocolMode::Legacy,
    )
    .expect("the system store with the test CA on top");
    use_python(&client);
    client.close();
}

/// A manager's server behind a proxy that buffers whole responses is connected, with its tools,
/// within its start-up timeout: the stateless era's list subscription, whose acknowledgement the
/// proxy holds, waits no longer than that, not the (longer) request timeout.
#[test]
fn buffering_proxy_does_not_hold_a_managed_server() {
    if peers::skip_interop() {
        return;
    }
    let python = peers::python_http(&["streamable-http"]);
    let mitm = Mitm::start(MitmMode::Buffering, &certs().file("ca.pem"));
    let startup = Duration::from_secs(4);
    let request_timeout = Duration::from_secs(30);
    let config = HttpConfig::new(python.url("/mcp")).proxy(Proxy::url(mitm.url()));
    let client_options = Options::default()
        .with_protocol_mode(ProtocolMode::modern())
        .with_request_timeout(request_timeout);
    let options = umcp::ManagerOptions::default()
        .without_cache()
        .with_startup_timeout(startup)
        .with_client_options(client_options);
    let started = Instant::now();
    let manager = umcp::Manager::start(vec![umcp::ServerConfig::new("p", config)], options);
    assert!(manager.wait_ready(request_timeout * 2));
    let took = started.elapsed();
    let status = manager.status("p");
    assert!(
        matches!(status, Some(umcp::ServerStatus::Connected { .. })),
        "{status:?}"
    );
    assert!(took < request_timeout / 2, "connected after {took:?}");
    let tools = manager.known_tools();
    assert!(
        tools.iter().any(|t| t.tool.name == "add" && !t.stale),
        "{tools:?}"
    );
    manager.close();
}

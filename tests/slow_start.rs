//! Servers that take longer to start than the `server/discover` probe waits (a first `npx -y`
//! download, heavy imports): the demo server's `--start-delay` plays them, against a short
//! probe timeout so that the tests stay quick. Such a server reads the probe only once it is
//! up, after `initialize` was already sent; it must still connect in its era, and one that
//! never answers must fail within the start-up timeout, saying what it wrote on stderr.

use umcp_test_support::demo;

use std::time::{Duration, Instant};

use serde_json::json;
use umcp::{Client, Era, Error, Options, ProtocolMode, StdioConfig};

/// The probe timeout of these tests, well below the servers' start-up time.
const PROBE: Duration = Duration::from_millis(300);

/// How long the slow servers take to start.
const START_MS: &str = "1200";

/// The demo server with `args` after `--server`. Each test passes its own arguments, so no
/// test sees a verdict another one left in the process-wide cache.
fn demo(args: &[&str]) -> StdioConfig {
    StdioConfig::new(demo::demo_binary().to_string_lossy().into_owned())
        .args(["--server", "--fixtures"])
        .args(args.iter().copied())
        .close_grace(Duration::from_millis(200))
        .kill_grace(Duration::from_millis(500))
}

fn options() -> Options {
    Options::default()
        .with_probe_timeout(PROBE)
        .with_startup_timeout(Duration::from_secs(20))
}

#[test]
fn a_slow_handshake_era_server_that_exits_on_the_probe_connects() {
    // It reads `server/discover` first once it is up, and exits; started again, it gets
    // `initialize` first.
    let server = || demo(&["--behaviour", "strict-init", "--start-delay", START_MS]);
    let client = Client::connect_with_options(server(), options()).expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.verdict(), ProtocolMode::Legacy);
    let echo = client
        .call_tool("echo", json!({"message": "hi"}))
        .expect("echo");
    assert_eq!(echo.text(), "hi");
    // The verdict is remembered: the next start gets `initialize` first.
    let again = Client::connect_with_options(server(), options()).expect("connect again");
    assert_eq!(again.era(), Era::Legacy);
}

#[test]
fn a_slow_stateless_server_connects_in_the_stateless_era() {
    // It answers the probe late and refuses `initialize`: the stateless era after all.
    let server = || demo(&["--modern", "--start-delay", START_MS]);
    // The late answer to the first probe is the client's own business, not the caller's.
    let (late_tx, late) = crossbeam_channel::unbounded();
    let watched = options().with_late_response_handler(move |r| {
        let _ = late_tx.send(r.method);
    });
    let client = Client::connect_with_options(server(), watched).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.verdict(), ProtocolMode::modern());
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .expect("add");
    assert_eq!(sum.text(), "5");
    let handed = late.recv_timeout(Duration::from_millis(300));
    assert!(handed.is_err(), "{handed:?}");
    // With the verdict remembered, the probe is still sent and still too early.
    let again = Client::connect_with_options(server(), options()).expect("connect again");
    assert_eq!(again.era(), Era::Modern);
}

#[test]
fn a_slow_handshake_era_server_that_answers_the_probe_late_connects() {
    let server = demo(&["--behaviour", "normal", "--start-delay", START_MS]);
    let client = Client::connect_with_options(server, options()).expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    client.ping().expect("ping");
}

#[test]
fn a_server_that_never_answers_fails_within_the_startup_timeout_with_its_stderr() {
    let init = Duration::from_secs(2);
    // It writes `demo server: starting in … ms` to stderr, then sleeps past the test.
    let server = demo(&["--start-delay", "600000"]);
    let started = Instant::now();
    // The default probe timeout (10 s) is longer than the whole budget.
    let err = Client::connect_with_options(server, Options::default().with_startup_timeout(init))
        .expect_err("no answer");
    let elapsed = started.elapsed();
    assert!(err.is_timeout(), "{err:?}");
    // The start-up timeout, then the close: stdin closed, 200 ms of grace, SIGTERM.
    assert!(elapsed < init + Duration::from_millis(1500), "{elapsed:?}");
    let shown = err.to_string();
    assert!(
        shown.contains("stderr: demo server: starting in 600000 ms"),
        "{shown}"
    );
    match err {
        Error::Timeout { stderr_tail, .. } => {
            assert_eq!(
                stderr_tail.as_deref().map(String::as_str),
                Some("demo server: starting in 600000 ms\n")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_pinned_stateless_connect_that_times_out_also_has_the_stderr() {
    let init = Duration::from_secs(1);
    let server = demo(&["--modern", "--start-delay", "600001"]);
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::modern())
        .with_startup_timeout(init);
    let started = Instant::now();
    let err = Client::connect_with_options(server, options).expect_err("no answer");
    assert!(
        started.elapsed() < init + Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert!(err.is_timeout(), "{err:?}");
    assert!(
        err.to_string()
            .contains("demo server: starting in 600001 ms"),
        "{err}"
    );
}

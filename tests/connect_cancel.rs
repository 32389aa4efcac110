//! A connect cancelled from another thread through `Options::with_connect_cancel` ends at
//! once with `Error::Cancelled`, whatever it waits on (a stdio server silent on `initialize`
//! or `server/discover`, an HTTP server that accepts and never answers), and leaves nothing
//! behind: the stdio server is ended and reaped, the HTTP connection cut. A handle cancelled
//! beforehand starts nothing; one cancelled after the connect leaves the client alone.

use umcp_test_support::demo;
#[cfg(feature = "http")]
#[path = "common/hostile.rs"]
mod hostile;
use umcp_test_support::python;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use umcp::{CancelHandle, Client, Error, Options, ProtocolMode, StdioConfig};

/// The start-up timeout: far beyond what a cancelled connect may take.
const STARTUP: Duration = Duration::from_secs(60);
/// How soon a cancelled connect must return: generous, for a busy machine.
const PROMPTLY: Duration = Duration::from_secs(5);

/// A stdio server that writes its pid and the first line it reads to `$MARK` (whole, by a
/// rename), then reads to the end of its input and exits, never answering anything.
const SILENT: &str = r#"
import os, sys
path = os.environ["MARK"]
line = sys.stdin.readline()
with open(path + ".tmp", "w") as f:
    f.write("%d %s" % (os.getpid(), line))
os.rename(path + ".tmp", path)
sys.stdin.read()
"#;

/// A fresh path for a test's mark file.
fn mark(test: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("umcp-connect-cancel-{}-{test}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn silent(mark: &Path) -> StdioConfig {
    StdioConfig::new(python::system_python())
        .args(["-c", SILENT])
        .env("MARK", mark.to_string_lossy())
}

/// Waits (at most 20 s) for the server to have read a first line holding `method`; its pid.
fn read_by_server(mark: &Path, method: &str) -> u32 {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(mark) {
            assert!(text.contains(method), "the server read {text}");
            let pid = text.split_whitespace().next().expect("a pid");
            return pid.parse().expect("a pid");
        }
        assert!(Instant::now() < until, "the server read nothing");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Connects to `server` with `options` and a connect cancel handle, cancelling it once
/// `ready` (run on another thread) returns; the outcome and how long the connect took after
/// the cancel.
fn cancelled_connect<C, R>(
    server: C,
    options: Options,
    ready: R,
) -> (umcp::Result<Client>, Duration)
where
    C: umcp::Connect + 'static,
    R: FnOnce() + Send + 'static,
{
    let cancel = CancelHandle::new();
    let stopper = cancel.clone();
    let canceller = std::thread::Builder::new()
        .name("test-canceller".into())
        .spawn(move || {
            ready();
            stopper.cancel();
            Instant::now()
        })
        .expect("a thread");
    let connected = Client::connect_with_options(server, options.with_connect_cancel(cancel));
    let returned = Instant::now();
    let cancelled_at = canceller.join().expect("the canceller");
    (connected, returned.saturating_duration_since(cancelled_at))
}

fn assert_cancelled(connected: &umcp::Result<Client>) {
    match connected {
        Err(Error::Cancelled { method }) => assert_eq!(method, "connect"),
        other => panic!("expected Error::Cancelled, got {other:?}"),
    }
}

/// Whether process `pid` still exists (a zombie counts: it was not reaped).
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(target_os = "linux")]
#[test]
fn a_connect_cancelled_during_initialize_ends_at_once_and_ends_its_server() {
    let mark = mark("initialize");
    let watched = mark.clone();
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_startup_timeout(STARTUP);
    let (connected, took) = cancelled_connect(silent(&mark), options, move || {
        read_by_server(&watched, "\"initialize\"");
    });
    assert_cancelled(&connected);
    assert!(
        took < PROMPTLY,
        "the connect returned {took:?} after the cancel"
    );
    let pid = read_by_server(&mark, "initialize");
    assert!(!process_exists(pid), "the server {pid} is still there");
    let _ = std::fs::remove_file(&mark);
}

#[cfg(target_os = "linux")]
#[test]
fn a_connect_cancelled_during_the_probe_ends_at_once_and_ends_its_server() {
    let mark = mark("probe");
    let watched = mark.clone();
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Auto)
        .with_probe_timeout(STARTUP)
        .with_startup_timeout(STARTUP);
    let (connected, took) = cancelled_connect(silent(&mark), options, move || {
        read_by_server(&watched, "\"server/discover\"");
    });
    assert_cancelled(&connected);
    assert!(
        took < PROMPTLY,
        "the connect returned {took:?} after the cancel"
    );
    let pid = read_by_server(&mark, "server/discover");
    assert!(!process_exists(pid), "the server {pid} is still there");
    let _ = std::fs::remove_file(&mark);
}

#[cfg(all(target_os = "linux", feature = "http"))]
#[test]
fn a_connect_cancelled_while_its_post_waits_ends_at_once_and_cuts_the_connection() {
    use std::sync::Arc;
    // Accepts, reads the request and holds the connection without a word.
    let server = Arc::new(hostile::hostile(|_, conn| conn.hold(STARTUP)));
    let config = umcp::HttpConfig::new(&server.url);
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_startup_timeout(STARTUP);
    let watched = Arc::clone(&server);
    let (connected, took) = cancelled_connect(config, options, move || {
        let post = watched.next_with_method("POST");
        assert_eq!(post.rpc_method(), "initialize");
    });
    assert_cancelled(&connected);
    assert!(
        took < PROMPTLY,
        "the connect returned {took:?} after the cancel"
    );
    let port = server.port;
    let left = hostile::settles(|| hostile::sockets_to(port), 0, PROMPTLY);
    assert_eq!(left, 0, "sockets to the server are still open");
    let stoppers = || hostile::threads_named("umcp-connect-ca");
    assert_eq!(hostile::settles(stoppers, 0, PROMPTLY), 0);
}

#[test]
fn a_connect_cancelled_beforehand_fails_at_once_and_starts_nothing() {
    let mark = mark("before");
    let cancel = CancelHandle::new();
    cancel.cancel();
    let options = Options::default()
        .with_startup_timeout(STARTUP)
        .with_connect_cancel(cancel);
    let started = Instant::now();
    let connected = Client::connect_with_options(silent(&mark), options);
    assert_cancelled(&connected);
    assert!(started.elapsed() < PROMPTLY, "took {:?}", started.elapsed());
    // Had the server been started, it would have written its mark on the first line.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!mark.exists(), "the server was started");
}

#[test]
fn a_cancel_after_the_connect_leaves_the_client_alone() {
    let cancel = CancelHandle::new();
    let options = Options::default().with_connect_cancel(cancel.clone());
    let client = Client::connect_with_options(demo::demo("normal"), options).expect("connect");
    cancel.cancel();
    client.ping().expect("the client still works");
    assert!(client.closed().is_none());
}

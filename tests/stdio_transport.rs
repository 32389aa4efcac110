//! Tests for the stdio transport, against real child processes (`cat`, `sh`, `python3`).
#![cfg(unix)]

#[path = "common/python.rs"]
mod python;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::{json, Value};
use umcp::jsonrpc::{Message, Notification, Request, RequestId};
use umcp::transport::{Connect, Inbound, Inbox, Transport};
use umcp::{Closed, EnvPolicy, Error, StdioConfig, TimeoutKind};

/// Tests run one at a time: they count threads and child processes of this process, and one
/// of them changes the environment.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Generous bound for anything that should happen "at once": proves it does not hang.
const SOON: Duration = Duration::from_secs(10);

fn sh(script: &str) -> StdioConfig {
    StdioConfig::new("sh").args(["-c", script])
}

fn python(script: &str) -> StdioConfig {
    StdioConfig::new(python::system_python()).args(["-c", script])
}

fn connect(config: &StdioConfig) -> (Box<dyn Transport>, Receiver<Inbound>) {
    // `RUST_LOG=umcp=trace` shows the transport's lifecycle and wire lines for a failing test.
    let _ = env_logger::builder().is_test(true).try_init();
    let (inbox, rx) = Inbox::new();
    let transport = config.connect(inbox).expect("server starts");
    (transport, rx)
}

fn next(rx: &Receiver<Inbound>, within: Duration) -> Inbound {
    rx.recv_timeout(within).expect("something arrives in time")
}

fn next_message(rx: &Receiver<Inbound>) -> Message {
    match next(rx, SOON) {
        Inbound::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn next_closed(rx: &Receiver<Inbound>, within: Duration) -> Arc<Closed> {
    loop {
        match next(rx, within) {
            Inbound::Closed(closed) => return closed,
            Inbound::Message(_) | Inbound::Batch(_) => continue,
            other => panic!("expected the end, got {other:?}"),
        }
    }
}

fn params_of(message: Message, method: &str) -> Value {
    match message {
        Message::Notification(n) if n.method == method => n.params.unwrap_or(Value::Null),
        other => panic!("expected notification {method}, got {other:?}"),
    }
}

fn notification(method: &str) -> Message {
    Message::from(Notification::new(method, Some(json!({"n": 1}))))
}

fn deadline() -> Instant {
    Instant::now() + SOON
}

/// A shell line printing a notification `method` whose params are `{"pid": <expr>}`.
fn print_pid(method: &str, expr: &str) -> String {
    format!(
        r#"echo "{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{{\"pid\":{expr}}}}}""#
    )
}

fn pid_from(message: Message, method: &str) -> u32 {
    params_of(message, method)["pid"].as_u64().expect("a pid") as u32
}

/// Whether process `pid` has ended (gone, or a zombie waiting for init).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The pids of this process's children, zombies included.
fn children() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if rest.split_whitespace().nth(1) == Some(me.as_str()) {
            found.push(pid);
        }
    }
    found
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn smoke_echo_round_trip_through_cat() {
    let _serial = serial();
    let config = StdioConfig::new("cat");
    assert_eq!(config.describe(), "cat");
    let (transport, rx) = connect(&config);
    assert_eq!(transport.kind(), "stdio");

    let request = Message::from(Request::new(1, "tools/list", Some(json!({"text": "a\nb"}))));
    transport.send(&request, deadline()).unwrap();
    assert_eq!(next_message(&rx), request);
    transport.send(&notification("n"), deadline()).unwrap();
    assert_eq!(next_message(&rx), notification("n"));

    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < SOON);
    let closed = next_closed(&rx, SOON);
    assert_eq!(closed.reason, "closed by client");
    assert!(
        closed.exit_status.is_some_and(|s| s.success()),
        "{closed:?}"
    );
    transport.close();
    assert!(rx.try_recv().is_err(), "the end is reported once");
    match transport.send(&notification("late"), deadline()) {
        Err(Error::Closed(info)) => assert_eq!(info.reason, "closed by client"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn spawn_failure_names_the_command() {
    let _serial = serial();
    let (inbox, _rx) = Inbox::new();
    match StdioConfig::new("/nonexistent/umcp-no-such-server").connect(inbox) {
        Err(Error::Spawn { command, source }) => {
            assert_eq!(command, "/nonexistent/umcp-no-such-server");
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a missing program started"),
    }
}

#[test]
fn environment_is_allow_listed_by_default() {
    let _serial = serial();
    std::env::set_var("UMCP_TEST_SECRET_TOKEN", "hunter2");
    std::env::set_var("LC_UMCP_TEST", "kept");
    std::env::set_var("https_proxy", "http://proxy.test:3128");
    let dump = "import os, json; print(json.dumps({'jsonrpc': '2.0', 'method': 'env', 'params': dict(os.environ)}))";
    let env_of = |config: StdioConfig| {
        let (transport, rx) = connect(&config);
        let env = params_of(next_message(&rx), "env");
        transport.close();
        env
    };

    let env = env_of(
        python(dump)
            .env("UMCP_CONFIGURED", "yes")
            .env("TERM", "umcp-term"),
    );
    assert!(
        env.get("UMCP_TEST_SECRET_TOKEN").is_none(),
        "the secret leaked: {env}"
    );
    assert_eq!(env["PATH"].as_str(), std::env::var("PATH").ok().as_deref());
    if let Ok(home) = std::env::var("HOME") {
        assert_eq!(env["HOME"], home.as_str());
    }
    assert_eq!(env["LC_UMCP_TEST"], "kept");
    assert_eq!(
        env["https_proxy"], "http://proxy.test:3128",
        "a server reaches the network the way its parent does"
    );
    assert_eq!(env["UMCP_CONFIGURED"], "yes");
    assert_eq!(env["TERM"], "umcp-term", "configured variables win");

    let env = env_of(python(dump).env_policy(EnvPolicy::InheritAll));
    assert_eq!(env["UMCP_TEST_SECRET_TOKEN"], "hunter2");

    let env = env_of(
        python(dump)
            .env_policy(EnvPolicy::Clear)
            .env("ONLY", "this"),
    );
    assert!(
        env.get("UMCP_TEST_SECRET_TOKEN").is_none() && env.get("PATH").is_none(),
        "{env}"
    );
    assert_eq!(env["ONLY"], "this");

    std::env::remove_var("UMCP_TEST_SECRET_TOKEN");
    std::env::remove_var("LC_UMCP_TEST");
    std::env::remove_var("https_proxy");
}

#[test]
fn working_directory_is_applied() {
    let _serial = serial();
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let script = "import os, json; print(json.dumps({'jsonrpc': '2.0', 'method': 'cwd', 'params': {'cwd': os.getcwd()}}))";
    let (transport, rx) = connect(&python(script).cwd(&dir));
    let cwd = params_of(next_message(&rx), "cwd");
    assert_eq!(
        Path::new(cwd["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        dir
    );
    transport.close();
}

#[test]
fn malformed_lines_are_skipped_and_the_connection_survives() {
    let _serial = serial();
    let script = r#"printf 'not json\n\377\376 not utf-8\n{"jsonrpc":"2.0"}\n\n[{"jsonrpc":"2.0","method":"b1"},{"jsonrpc":"2.0","method":"b2"}]\r\n{"jsonrpc":"2.0","method":"ok"}\n'; exec cat"#;
    let (transport, rx) = connect(&sh(script));
    match next(&rx, SOON) {
        Inbound::Batch(batch) => {
            let methods: Vec<_> = batch
                .iter()
                .map(|m| match m {
                    Message::Notification(n) => n.method.as_str(),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(methods, ["b1", "b2"]);
        }
        other => panic!("expected the batch, got {other:?}"),
    }
    assert_eq!(params_of(next_message(&rx), "ok"), Value::Null);
    transport
        .send(&notification("still-there"), deadline())
        .unwrap();
    assert_eq!(next_message(&rx), notification("still-there"));
    transport.close();
}

#[test]
fn oversized_lines_are_skipped_and_fail_the_request_they_answer() {
    let _serial = serial();
    let script = r#"
import sys
w = sys.stdout.write
big = "a" * 5000
w('{"jsonrpc":"2.0","id":7,"result":{"text":"%s"}}\n' % big)
w('{"jsonrpc":"2.0","result":{"text":"%s"},"id":8}\n' % big)
w('{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"text":"%s"}}\n' % big)
w('{"jsonrpc":"2.0","id":"s-10","error":{"code":1,"message":"%s"}}\n' % ("b" * 3000000))
w('{"jsonrpc":"2.0","method":"after","params":{"fits":true}}\n')
sys.stdout.flush()
sys.stdin.read()
"#;
    let (transport, rx) = connect(&python(script).max_message_size(1024));
    let mut failed = Vec::new();
    loop {
        match next(&rx, SOON) {
            Inbound::Failed(id, Error::MessageTooLarge { limit }) => {
                assert_eq!(limit, 1024);
                failed.push(id);
            }
            Inbound::Message(m) => {
                assert_eq!(params_of(m, "after"), json!({"fits": true}));
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(failed, [RequestId::from(7), RequestId::from("s-10")]);
    transport.close();
    next_closed(&rx, SOON);
}

#[test]
fn stderr_flood_never_stalls_the_server_and_the_tail_stays_bounded() {
    let _serial = serial();
    let script = r#"
yes 'stderr noise: a line of some length, written over and over by the server' | head -c 100000000 >&2
head -c 1000000 /dev/zero | tr '\0' x >&2
echo >&2
echo 'final words' >&2
echo '{"jsonrpc":"2.0","method":"flooded"}'
exec cat
"#;
    let lines = Arc::new(AtomicUsize::new(0));
    let counter = lines.clone();
    let config = sh(script)
        .stderr_tail_lines(5)
        .stderr_callback(move |_line| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
    let (transport, rx) = connect(&config);
    // The notification comes after 100 MB of stderr: it only arrives if stderr was drained.
    match next(&rx, Duration::from_secs(120)) {
        Inbound::Message(m) => assert_eq!(params_of(m, "flooded"), Value::Null),
        other => panic!("{other:?}"),
    }
    transport.send(&notification("echo"), deadline()).unwrap();
    assert_eq!(next_message(&rx), notification("echo"));
    transport.close();
    let closed = next_closed(&rx, SOON);
    // The callback runs on its own thread; under a flood it may skip lines rather than hold
    // the drain, but it keeps getting them.
    assert!(lines.load(Ordering::Relaxed) > 1_000, "{lines:?}");
    let tail = closed.stderr_tail.as_deref().unwrap();
    assert!(tail.lines().count() <= 5, "{tail}");
    assert!(tail.len() <= 9 << 10, "{} bytes", tail.len());
    assert!(tail.ends_with("final words\n"), "{tail}");
}

#[test]
fn a_blocked_stderr_callback_never_stalls_the_server() {
    let _serial = serial();
    // 2 MB of stderr: far more than the pipe and the callback's queue hold together.
    let script = r#"
yes 'stderr line' | head -n 160000 >&2
echo '{"jsonrpc":"2.0","method":"after stderr"}'
exec cat
"#;
    let (release, blocked) = crossbeam_channel::bounded::<()>(0);
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let config = sh(script)
        .close_grace(ms(300))
        .stderr_callback(move |_line| {
            // The first line blocks until the test lets it go, as a callback stuck on a lock.
            if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                let _ = blocked.recv_timeout(Duration::from_secs(60));
            }
        });
    let (transport, rx) = connect(&config);
    match next(&rx, Duration::from_secs(30)) {
        Inbound::Message(m) => assert_eq!(params_of(m, "after stderr"), Value::Null),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the callback is still blocked"
    );
    let started = Instant::now();
    transport.close();
    let closed = next_closed(&rx, SOON);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "close took {:?}",
        started.elapsed()
    );
    assert!(
        closed
            .stderr_tail
            .as_deref()
            .unwrap()
            .ends_with("stderr line\n"),
        "{closed:?}"
    );
    // Let go, the callback gets the lines that waited for it.
    drop(release);
    let deadline = Instant::now() + Duration::from_secs(10);
    while calls.load(Ordering::SeqCst) < 1024 && Instant::now() < deadline {
        std::thread::sleep(ms(10));
    }
    assert!(calls.load(Ordering::SeqCst) > 1000, "{calls:?}");
}

#[test]
fn send_times_out_when_the_server_stops_reading() {
    let _serial = serial();
    let config = sh("exec sleep 1000")
        .close_grace(ms(300))
        .kill_grace(ms(300));
    let (transport, rx) = connect(&config);
    let big = Message::from(Notification::new(
        "big",
        Some(json!({"data": "z".repeat(64 << 10)})),
    ));
    let mut error = None;
    for _ in 0..200 {
        let started = Instant::now();
        let result = transport.send(&big, Instant::now() + ms(200));
        assert!(
            started.elapsed() < ms(200) + SOON,
            "send overran its deadline"
        );
        if let Err(e) = result {
            error = Some(e);
            break;
        }
    }
    match error.expect("the queue fills up") {
        Error::Timeout { method, kind, .. } => {
            assert_eq!(kind, TimeoutKind::Write);
            assert_eq!(method, "big");
        }
        other => panic!("{other:?}"),
    }
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < ms(600) + SOON);
    assert_eq!(next_closed(&rx, SOON).reason, "closed by client");
    assert!(matches!(
        transport.send(&big, deadline()),
        Err(Error::Closed(_))
    ));
}

#[test]
fn a_crash_is_reported_with_status_and_stderr_tail() {
    let _serial = serial();
    let (transport, rx) = connect(&sh("read line; echo 'fatal: boom' >&2; exit 3"));
    transport.send(&notification("go"), deadline()).unwrap();
    let closed = next_closed(&rx, ms(2000));
    assert_eq!(closed.reason, "server exited");
    assert_eq!(closed.exit_status.and_then(|s| s.code()), Some(3));
    assert_eq!(closed.stderr_tail.as_deref(), Some("fatal: boom\n"));
    match transport.send(&notification("late"), deadline()) {
        Err(Error::Closed(info)) => {
            assert_eq!(info.exit_status.and_then(|s| s.code()), Some(3));
            assert!(info.to_string().contains("fatal: boom"), "{info}");
        }
        other => panic!("{other:?}"),
    }
    transport.close();
    assert!(
        rx.recv_timeout(ms(100)).is_err(),
        "the end is reported once"
    );
}

#[test]
fn an_exit_is_noticed_while_a_grandchild_holds_stdout() {
    let _serial = serial();
    let script = format!(
        "sleep 1000 & {}; echo bye >&2; exit 4",
        print_pid("pid", "$!")
    );
    let (transport, rx) = connect(&sh(&script).close_grace(ms(200)));
    let grandchild = pid_from(next_message(&rx), "pid");
    let closed = next_closed(&rx, ms(3000));
    assert_eq!(closed.exit_status.and_then(|s| s.code()), Some(4));
    assert_eq!(closed.stderr_tail.as_deref(), Some("bye\n"));
    assert!(!ended(grandchild));
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < SOON);
    assert!(ended(grandchild), "the grandchild outlived close");
}

#[test]
fn close_kills_the_whole_process_group() {
    let _serial = serial();
    let script = format!("sleep 1000 & {}; sleep 1000", print_pid("pid", "$!"));
    let (transport, rx) = connect(&sh(&script).close_grace(ms(200)));
    let grandchild = pid_from(next_message(&rx), "pid");
    assert!(!ended(grandchild));
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < ms(200) + SOON);
    assert!(ended(grandchild), "the grandchild outlived close");
    let closed = next_closed(&rx, SOON);
    assert_eq!(closed.reason, "closed by client");
    assert_eq!(
        closed.exit_status.and_then(|s| s.signal()),
        Some(15),
        "{closed:?}"
    );
}

#[test]
fn a_server_ignoring_sigterm_is_killed() {
    let _serial = serial();
    let script = r#"trap '' TERM; echo '{"jsonrpc":"2.0","method":"ready"}'; sleep 1000"#;
    let config = sh(script).close_grace(ms(200)).kill_grace(ms(300));
    let (transport, rx) = connect(&config);
    params_of(next_message(&rx), "ready");
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < ms(500) + SOON);
    let closed = next_closed(&rx, SOON);
    assert_eq!(
        closed.exit_status.and_then(|s| s.signal()),
        Some(9),
        "{closed:?}"
    );
}

#[test]
fn drop_closes_and_reaps_without_a_call_to_close() {
    let _serial = serial();
    let script = format!("{}; exec sleep 1000", print_pid("pid", "$$"));
    let (transport, rx) = connect(&sh(&script).close_grace(ms(100)).kill_grace(ms(100)));
    let pid = pid_from(next_message(&rx), "pid");
    drop(transport);
    assert_eq!(next_closed(&rx, SOON).reason, "closed by client");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the server was not reaped"
    );
}

#[test]
fn a_server_closing_stdout_is_reported_closed() {
    let _serial = serial();
    let (transport, rx) =
        connect(&sh("exec 1>&-; echo closing >&2; exec sleep 1000").close_grace(ms(200)));
    let closed = next_closed(&rx, ms(5000));
    assert_eq!(closed.reason, "server closed its output");
    assert!(closed.exit_status.is_none());
    assert!(matches!(
        transport.send(&notification("x"), deadline()),
        Err(Error::Closed(_))
    ));
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < ms(200) + SOON);
}

#[test]
fn many_connections_leave_no_processes_or_threads_behind() {
    let _serial = serial();
    let cycle = || {
        let (transport, rx) = connect(&StdioConfig::new("cat"));
        transport.send(&notification("ping"), deadline()).unwrap();
        assert_eq!(next_message(&rx), notification("ping"));
        transport.close();
        next_closed(&rx, SOON);
    };
    for _ in 0..5 {
        cycle();
    }
    let threads_before = thread_count();
    for _ in 0..200 {
        cycle();
    }
    let threads_after = thread_count();
    assert!(
        threads_after <= threads_before + 4,
        "{threads_before} -> {threads_after} threads"
    );
    assert_eq!(
        children(),
        Vec::<u32>::new(),
        "children (or zombies) are left"
    );
}

#[test]
fn a_process_escaping_the_group_cannot_hang_close() {
    let _serial = serial();
    // setsid moves the sleep out of the server's process group with the pipes still open; it
    // prints its pid once it is out.
    let escapee = format!("{}; exec sleep 1000", print_pid("pid", "$$"));
    let script = format!("setsid sh -c '{escapee}' & exec sleep 1000");
    let (transport, rx) = connect(&sh(&script).close_grace(ms(100)).kill_grace(ms(100)));
    let escaped = pid_from(next_message(&rx), "pid");
    let started = Instant::now();
    transport.close();
    let took = started.elapsed();
    let still_there = !ended(escaped);
    let _ = std::process::Command::new("kill")
        .args(["-9", &escaped.to_string()])
        .status();
    assert!(took < ms(200) + SOON, "close took {took:?}");
    assert!(still_there, "the escaped process was not outside the group");
    assert_eq!(next_closed(&rx, SOON).reason, "closed by client");
}

#[test]
fn unlimited_grace_periods_are_accepted() {
    let _serial = serial();
    let config = StdioConfig::new("cat")
        .close_grace(Duration::MAX)
        .kill_grace(Duration::MAX);
    let (transport, rx) = connect(&config);
    transport.send(&notification("n"), deadline()).unwrap();
    assert_eq!(next_message(&rx), notification("n"));
    // `cat` exits on EOF, so the unlimited grace is never waited out.
    transport.close();
    assert_eq!(next_closed(&rx, SOON).reason, "closed by client");
}

#[test]
fn a_flood_of_server_pings_while_not_reading_keeps_threads_and_memory_bounded() {
    let _serial = serial();
    // Answers initialize, then sends 10,000 pings and never reads another byte.
    let script = r#"
import json, sys, time
request = json.loads(sys.stdin.readline())
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "serverInfo": {"name": "flood", "version": "1"}}}), flush=True)
sys.stdin.readline()
for i in range(10000):
    sys.stdout.write('{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i)
sys.stdout.flush()
time.sleep(60)
"#;
    let threads_before = client_threads();
    let rss_before = rss_kb();
    let config = python(script).close_grace(ms(200)).kill_grace(ms(200));
    // The script knows the handshake only: it takes any first line for `initialize`.
    let options = umcp::Options::default()
        .with_handler_threads(4)
        .with_protocol_mode(umcp::ProtocolMode::Legacy);
    let client = umcp::Client::connect_with(config, options).expect("connect");
    let mut most = 0;
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        most = most.max(client_threads());
        std::thread::sleep(ms(20));
    }
    // Five stdio threads (reader, stderr, writer, wait, monitor) and the router; pings need no
    // handler thread, and the handler pool is bounded by 4 anyway.
    assert!(
        most <= threads_before + 6 + 4,
        "{most} threads, {threads_before} before"
    );
    let grown = rss_kb().saturating_sub(rss_before);
    assert!(grown < 32 << 10, "memory grew by {grown} kB");
    let closing = Instant::now();
    client.close();
    assert!(closing.elapsed() < Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_secs(10);
    while client_threads() > threads_before && Instant::now() < deadline {
        std::thread::sleep(ms(20));
    }
    assert_eq!(
        client_threads(),
        threads_before,
        "left: {:?}",
        thread_names()
    );
}

/// The client's threads (all named `umcp-…`): the test harness starts and ends threads of its
/// own for the other tests at any time, so only these are counted.
fn client_threads() -> usize {
    thread_names()
        .iter()
        .filter(|name| name.starts_with("umcp"))
        .count()
}

/// The names of this process's threads, to tell which one outlived its client.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .collect()
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

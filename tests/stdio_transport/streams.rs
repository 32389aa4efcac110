//! What flows through the pipes: malformed and oversized lines, stderr floods, stalled readers and
//! ping floods.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::jsonrpc::{Message, Notification, RequestId};
use umcp::transport::Inbound;
use umcp::{Error, TimeoutKind};

use crate::{
    connect, deadline, ms, next, next_closed, next_message, notification, params_of, python,
    serial, sh, SOON,
};

#[test]
fn malformed_lines_are_skipped_and_the_connection_survives() {
    let _serial = serial();
    let script = r#"printf 'not json\n\377\376 not utf-8\n{"jsonrpc":"2.0"}\n\n[{"jsonrpc":"2.0","method":"b1"},{"jsonrpc":"2.0","method":"b2"}]\r\n{"jsonrpc":"2.0","method":"ok"}\n'; exec cat"#;
    let (transport, rx) = connect(&sh(script));
    match next(&rx, SOON) {
        Inbound::Batch(batch, invalid) => {
            assert!(invalid.is_empty(), "{invalid:?}");
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
    let client = umcp::Client::connect_with_options(config, options).expect("connect");
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

/// A server that sends a burst of requests before it reads its input again: the client's
/// replies fill the pipe, and whatever does not fit any more is dropped rather than waited
/// for on the router thread, which must go on reading (or both sides wait on each other).
#[test]
fn a_burst_of_server_requests_before_it_reads_does_not_wedge_the_connection() {
    let _serial = serial();
    let script = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    rid = msg["id"]
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "burst", "version": "1"}}
    elif msg["method"] == "tools/call":
        if msg["params"]["name"] == "burst":
            for i in range(5000):
                sys.stdout.write('{"jsonrpc":"2.0","id":"p%d","method":"ping"}\n' % i)
        result = {"content": [{"type": "text", "text": msg["params"]["name"]}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
    sys.stdout.flush()
"#;
    let config = python(script).close_grace(ms(200)).kill_grace(ms(200));
    let options = umcp::Options::default()
        .with_request_timeout(Duration::from_secs(20))
        .with_protocol_mode(umcp::ProtocolMode::Legacy);
    let client = umcp::Client::connect_with_options(config, options).expect("connect");
    let burst = client
        .call_tool("burst", json!({}))
        .expect("the burst's own reply");
    assert_eq!(burst.text(), "burst");
    let after = client.call_tool("after", json!({})).expect("still talking");
    assert_eq!(after.text(), "after");
    client.close();
}

/// A response the client cannot read, but which names its request (an `id`, a `result` or
/// `error`, no `method`), fails that request at once with a protocol error rather than at its
/// deadline. An object with an `id` and neither a result nor an error is no response: it
/// settles nothing, and the request gets the answer that follows.
#[test]
fn an_unreadable_response_fails_its_request_at_once() {
    let _serial = serial();
    let script = r#"
import json, sys
out = sys.stdout.buffer
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    rid = json.dumps(msg["id"]).encode()
    name = msg.get("params", {}).get("name")
    if msg["method"] == "initialize":
        body = b'"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},' \
            b'"serverInfo":{"name":"bad","version":"1"}}'
    elif name == "neither":
        out.write(b'{"jsonrpc":"2.0","id":' + rid + b',"note":"neither a result nor an error"}\n')
        body = b'"result":{"content":[{"type":"text","text":"the answer"}]}'
    elif name == "latin1":
        body = b'"result":{"content":[{"type":"text","text":"caf\xe9"}]}'
    else:
        body = b'"result":{"content":[]}'
    out.write(b'{"jsonrpc":"2.0","id":' + rid + b',' + body + b'}\n')
    out.flush()
"#;
    let config = python(script).close_grace(ms(200)).kill_grace(ms(200));
    let options = umcp::Options::default()
        .with_request_timeout(Duration::from_secs(30))
        .with_protocol_mode(umcp::ProtocolMode::Legacy);
    let client = umcp::Client::connect_with_options(config, options).expect("connect");
    let started = Instant::now();
    match client.call_tool("latin1", json!({})) {
        Err(umcp::Error::Protocol(message)) => {
            assert!(message.contains("unreadable"), "{message}");
            assert!(message.contains("UTF-8"), "{message}");
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(10), "waited");
    let answer = client
        .call_tool("neither", json!({}))
        .expect("the real answer");
    assert_eq!(answer.text(), "the answer");
    client
        .call_tool("fine", json!({}))
        .expect("the connection goes on");
    client.close();
}

//! Ctrl-C (SIGINT) and SIGTERM on `umcp` while a tool call runs: the stdio server, which runs
//! in a process group of its own that the terminal's signal never reaches, is stopped with
//! everything it started, and umcp exits 130 or 143.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use umcp_test_support::installed::{demo_stdio, empty_home, stderr, umcp_in};

/// Kills the processes a test started when it fails, so that a failure leaves no sleeper
/// behind.
struct Reap(Vec<u32>);

impl Drop for Reap {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for pid in &self.0 {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Whether process `pid` runs: it exists and is not a zombie waiting to be reaped (an orphan
/// is reaped by init, which a container may never do).
pub fn running(pid: u32) -> bool {
    if Path::new("/proc/self/stat").exists() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
        return !matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X') | None);
    }
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `umcp call slow` against a demo server that has started a sleeping child in its
/// process group, sends umcp `signal` while the call runs, and checks how it ends.
fn a_signal_during_a_call_stops_the_server(signal: &str, code: i32) {
    let dir = empty_home().join(format!("signal-{signal}"));
    std::fs::create_dir_all(&dir).unwrap();
    let pids = dir.join("pids");
    let _ = std::fs::remove_file(&pids);
    // The server's shell records its own pid (the demo's, after `exec`) and its sleeping
    // child's. The demo alone would exit when umcp's end of its stdin closed; the child would
    // not, so only stopping the group ends it.
    let demo = demo_stdio();
    let server = format!(
        r#"sh -c 'sleep 600 >/dev/null 2>&1 & echo "$$ $!" > "$1.tmp" && mv "$1.tmp" "$1"; exec "$0" --server' {} '{}'"#,
        demo.trim_end_matches(" --server"),
        pids.display()
    );
    let child = umcp_in(&dir)
        .args(["--stdio", &server, "--timeout", "600"])
        .args(["call", "slow", r#"{"steps": 600, "delay_ms": 1000}"#])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run umcp");
    let umcp = child.id();
    let mut reap = Reap(vec![umcp]);
    let started = Instant::now();
    let recorded = loop {
        if let Ok(text) = std::fs::read_to_string(&pids) {
            break text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the server never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let server_pids: Vec<u32> = recorded
        .split_whitespace()
        .map(|p| p.parse().expect("a pid"))
        .collect();
    assert_eq!(server_pids.len(), 2, "{recorded:?}");
    reap.0.extend(&server_pids);
    // Let the call start: umcp connects, then calls `slow`, which takes ten minutes.
    std::thread::sleep(Duration::from_secs(1));
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &umcp.to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let out = done
        .recv_timeout(Duration::from_secs(60))
        .expect("umcp ends after the signal")
        .expect("umcp's output");
    reap.0.retain(|pid| *pid != umcp);
    assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
    // umcp waited for the server's close, which ends the group, before exiting; the orphaned
    // sleeper may take a moment more to be reaped.
    let deadline = Instant::now() + Duration::from_secs(20);
    while server_pids.iter().any(|pid| running(*pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in &server_pids {
        assert!(!running(*pid), "process {pid} of the server still runs");
    }
}

#[test]
fn ctrl_c_during_a_call_stops_the_server_and_exits_130() {
    a_signal_during_a_call_stops_the_server("INT", 130);
}

#[test]
fn sigterm_during_a_call_stops_the_server_and_exits_143() {
    a_signal_during_a_call_stops_the_server("TERM", 143);
}

/// Ctrl-C ends `watch` (exit code 130) without a last line saying the connection was lost:
/// the servers' close that ended the subscriptions was the user's own doing.
#[test]
fn ctrl_c_during_watch_reports_no_lost_connection() {
    for (era, json) in [("legacy", false), ("legacy", true), ("modern", false)] {
        let mut server = demo_stdio();
        if era == "modern" {
            server += " --modern";
        }
        let mut args = vec!["--stdio", server.as_str(), "--protocol", era, "watch"];
        if json {
            args.push("--json");
        }
        let child = umcp_in(&empty_home())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run umcp");
        let umcp = child.id();
        let _reap = Reap(vec![umcp]);
        // Let it connect and subscribe.
        std::thread::sleep(Duration::from_secs(1));
        let sent = Command::new("kill")
            .args(["-INT", &umcp.to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success());
        let (done_tx, done) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = done_tx.send(child.wait_with_output());
        });
        let out = done
            .recv_timeout(Duration::from_secs(60))
            .expect("umcp ends after the signal")
            .expect("umcp's output");
        assert_eq!(
            out.status.code(),
            Some(130),
            "{era} {json}: {}",
            stderr(&out)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "",
            "{era} {json}: {}",
            stderr(&out)
        );
    }
}

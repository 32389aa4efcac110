//! The exit codes of the `umcp` binary: usage errors, connection failures, hung start-ups and tool
//! errors.

use umcp_test_support::installed;
use umcp_test_support::installed::{cli, demo, stderr, stdout};

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["tools"][..],
        &["--stdio", "x", "--url", "http://h/mcp", "tools"][..],
        &["--stdio", "'unterminated", "tools"][..],
        &[
            "--url",
            "http://h/mcp",
            "--transport",
            "carrier-pigeon",
            "tools",
        ][..],
        &["--stdio", "x", "frobnicate"][..],
        &["--stdio", "x", "call", "echo", "{not json"][..],
        &["--stdio", "x", "call", "echo", "[1, 2]"][..],
        &["--stdio", "x", "--bogus", "tools"][..],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("usage: umcp"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn connection_failures_exit_3() {
    let out = cli(&["--stdio", "/nonexistent/umcp-server --flag", "tools"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("failed to start `/nonexistent/umcp-server`"),
        "{}",
        stderr(&out)
    );
    let out = cli(&["--stdio", "sleep 1000", "--timeout", "0.5", "tools"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("timeout"), "{}", stderr(&out));
}

/// `--timeout` bounds start-up: a server that never answers fails about then, and what it
/// wrote on stderr says why.
#[test]
fn a_server_that_hangs_at_start_up_fails_within_the_timeout_with_its_stderr() {
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    // It writes `demo server: starting in … ms` to stderr, then sleeps past the test.
    let server = format!("{} --start-delay 600000", installed::demo_stdio());
    let mut command = installed::umcp_in(&installed::empty_home());
    command
        .args(["--stdio", &server, "--timeout", "2", "tools"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let child = command.spawn().expect("run umcp");
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let out = done
        .recv_timeout(Duration::from_secs(60))
        .expect("umcp ends")
        .expect("umcp's output");
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // The timeout, then the server's close: stdin closed, 2 s of grace, SIGTERM.
    assert!(elapsed < Duration::from_secs(9), "{elapsed:?}");
    let shown = stderr(&out);
    assert!(shown.contains("timeout"), "{shown}");
    assert!(
        shown.contains("stderr: demo server: starting in 600000 ms"),
        "{shown}"
    );
}

#[test]
fn tool_errors_exit_4_and_other_errors_1() {
    let out = demo(&["call", "fail", r#"{"message": "boom"}"#], 4);
    assert_eq!(stdout(&out), "boom\n");
    // A name the server does not list is a usage error.
    let out = demo(&["call", "no_such_tool"], 2);
    assert!(
        stderr(&out).contains("no tool named `no_such_tool`"),
        "{}",
        stderr(&out)
    );
    demo(&["read", "demo://nothing/here"], 1);
}

/// A server that dies during the call is a server failure, exit code 3, not "other errors".
#[test]
fn a_server_crashing_mid_call_exits_3() {
    let server = format!("{} --behaviour crash-mid-call", installed::demo_stdio());
    let out = cli(&["--stdio", &server, "call", "slow"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

/// Output that cannot be written (a full disk) fails the run with a message; a reader that
/// closed the pipe early (`umcp tools | head -1`) is no failure.
#[cfg(target_os = "linux")]
#[test]
fn output_that_cannot_be_written_fails_but_a_closed_pipe_does_not() {
    use std::process::Stdio;

    let stdio = installed::demo_stdio();
    for args in [
        &["--stdio", &stdio, "--json", "tools"][..],
        &["--stdio", &stdio, "call", "echo", "message=hi"][..],
        &["man"][..],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = installed::umcp_in(&installed::empty_home())
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("umcp: writing the output failed: No space left on device"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let mut child = installed::umcp_in(&installed::empty_home())
        .args(["--stdio", &stdio, "tools"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

/// An HTTP server that dies while a call is out is a server failure, exit code 3, as a stdio
/// one is.
#[test]
fn an_http_server_dying_mid_call_exits_3() {
    let server = umcp_test_support::http_demo::HttpDemo::start(&["--behaviour", "crash-mid-call"]);
    let out = cli(&["--url", &server.url, "call", "slow"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("umcp: "), "{}", stderr(&out));
}

/// A malformed command line is a usage error whatever it names, found before any server is
/// started (`nonexistent-xyz` would fail with exit code 3), and an option the command or the
/// server does not take is refused rather than ignored.
#[test]
fn usage_errors_are_found_before_anything_starts_and_no_option_is_ignored() {
    let server = "nonexistent-xyz";
    for (args, said) in [
        (
            &["--url", "not-a-url", "tools"][..],
            "--url not-a-url: not an http",
        ),
        (
            &["--url", "ftp://h/mcp", "tools"][..],
            "not an http:// or https://",
        ),
        (
            &["--url", "http://h/mcp", "--header", "Bad Name: x", "tools"][..],
            "`Bad Name` is not a header name",
        ),
        (
            &["--stdio", server, "complete", "foo", "a", "b"][..],
            "complete foo: expected prompt or resource",
        ),
        (
            &["--stdio", server, "prompt", "p", "n:=2"][..],
            "prompt arguments are text",
        ),
        (
            &["--stdio", server, "--server", "x", "tools"][..],
            "--server picks a server of a configuration file",
        ),
        (
            &["--stdio", server, "--transport", "sse", "tools"][..],
            "--transport is for --url servers",
        ),
        (
            &["--stdio", server, "--tools", "tools"][..],
            "--tools is for watch",
        ),
        (
            &["--stdio", server, "--resource", "demo://x", "call", "t"][..],
            "--resource is for watch",
        ),
        (
            &["--stdio", server, "--for", "1", "info"][..],
            "--for is for watch",
        ),
    ] {
        let out = cli(args);
        let shown = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {shown}");
        assert!(shown.contains(said), "{args:?}: {shown}");
        assert!(shown.contains("usage: umcp"), "{args:?}: {shown}");
    }
}

//! `umcp shell`: commands read from stdin, or typed on a terminal with completion, over one
//! connection or a session.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use umcp_test_support::installed::{empty_home, fixtures_stdio, stderr, stdout, umcp_in};

/// `umcp ARGS shell`, `lines` on its stdin.
fn shell(args: &[&str], lines: &str, env: &[(&str, &std::path::Path)]) -> Output {
    let mut child = umcp_in(&empty_home())
        .args(args)
        .arg("shell")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn lines_piped_in_run_over_one_connection() {
    let demo = fixtures_stdio();
    let out = shell(&["--stdio", &demo], "call add a=2 b=3\n", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "5\n");
    // One server for all the lines: its requests count on.
    let lines = "# a comment\n\ncall add a=1 b=1\n--json call requests_seen\n";
    let out = shell(&["--stdio", &demo], lines, &[]);
    let (first, seen) = stdout(&out)
        .split_once('\n')
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .unwrap();
    assert_eq!(first, "2");
    let seen: serde_json::Value = serde_json::from_str(&seen).unwrap();
    let text = seen["content"][0]["text"].as_str().unwrap();
    let counts: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(counts["initialize"], 1, "{counts}");
    assert_eq!(counts["tools/call"], 2, "{counts}");
}

#[test]
fn a_failing_line_is_reported_and_the_last_code_is_the_shells() {
    let demo = fixtures_stdio();
    let out = shell(&["--stdio", &demo], "nope\ncall add a=1 b=2\n", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "3\n");
    assert!(
        stderr(&out).contains("unknown command nope"),
        "{}",
        stderr(&out)
    );
    let out = shell(
        &["--stdio", &demo],
        "call add a=1 b=2\ncall fail message=no\n",
        &[],
    );
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(stdout(&out), "3\nno\n");
    // exit ends the shell; what follows is not run; servers are not picked by a line.
    let out = shell(
        &["--stdio", &demo],
        "--stdio x tools\nexit\ncall add a=1 b=1\n",
        &[],
    );
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("--stdio is given to umcp shell"),
        "{}",
        stderr(&out)
    );
    let help = shell(&["--stdio", &demo], "help\n", &[]);
    assert!(
        stdout(&help).lines().any(|l| l.starts_with("  call TOOL")),
        "{}",
        stdout(&help)
    );
}

#[cfg(unix)]
#[test]
fn a_shell_runs_its_lines_through_a_session() {
    let mut sessions = crate::sessions::Sessions::new("shell");
    sessions.start("s", &["--stdio", &crate::sessions::stateful()], 0);
    let out = shell(
        &["--session", "s"],
        "call count\ncall count\n",
        &[("UMCP_RUNTIME_DIR", sessions.dir())],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "1\n2\n");
    assert_eq!(stdout(&sessions.run("s", &["call", "count"], 0)), "3\n");
}

/// Runs the shell command `line` under `script(1)`, which gives it a terminal, with the
/// environment of `umcp`; types each of `keys` a moment after the one before, and returns
/// what the terminal showed. `line` runs in `/bin/sh`, whatever `$SHELL` is, and should
/// `exec` umcp (see `terminal_session_in` in `test-support/src/installed.rs` for why).
pub fn on_a_terminal(umcp: &Command, line: &str, keys: &[&str]) -> Output {
    let mut script = Command::new("script")
        .args(["-q", "-e", "-c", line, "/dev/null"])
        .envs(umcp.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("SHELL", "/bin/sh")
        .current_dir(empty_home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run script(1) from util-linux");
    let mut stdin = script.stdin.take().unwrap();
    for key in keys {
        std::thread::sleep(Duration::from_millis(1200));
        stdin.write_all(key.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
    umcp_test_support::installed::hold_until_exit(&mut script, stdin);
    script.wait_with_output().unwrap()
}

/// Types `keys` into `umcp shell` on a terminal and returns what the terminal showed.
fn typed(keys: &[&str]) -> String {
    let mut umcp = umcp_in(&empty_home());
    umcp.env("XDG_STATE_HOME", empty_home().join("shell-state"));
    let line = format!(
        "exec umcp shell --stdio \"{}\"",
        fixtures_stdio().replace('"', "\\\"")
    );
    let out = on_a_terminal(&umcp, &line, keys);
    assert!(out.status.success(), "{}\n{}", out.status, stdout(&out));
    stdout(&out)
}

#[test]
fn on_a_terminal_tab_completes_and_ctrl_c_stops_only_the_command() {
    let shown = typed(&[
        "call ad\t a=2 b=3\r",
        "call slow steps=100 delay_ms=100\r",
        "\x03",
        "call cancellations\r",
        "exit\r",
    ]);
    // `ad` was completed to `add` (the line drawn again), and the call ran.
    assert!(shown.contains("umcp> call add"), "{shown}");
    assert!(shown.contains("\r\n5\r\n"), "{shown}");
    assert!(shown.contains("umcp: interrupted"), "{shown}");
    assert!(!shown.contains("{\"cancelled\":[]}"), "{shown}");
    assert!(shown.contains("{\"cancelled\":["), "{shown}");
    let history = empty_home().join("shell-state/umcp/shell_history");
    let kept = std::fs::read_to_string(&history).unwrap();
    assert!(kept.contains("call add a=2 b=3\n"), "{kept}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&history).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

/// The history keeps no value of an argument named like a secret.
#[test]
fn on_a_terminal_the_history_keeps_no_secret_argument() {
    typed(&["call echo message=hi password=hunter2\r", "exit\r"]);
    let history = empty_home().join("shell-state/umcp/shell_history");
    let kept = std::fs::read_to_string(&history).unwrap();
    assert!(
        kept.contains("call echo message=hi password=<redacted>\n"),
        "{kept}"
    );
    assert!(!kept.contains("hunter2"), "{kept}");
}

#[test]
fn on_a_terminal_a_sigint_at_the_prompt_leaves_the_shell_running() {
    let mut umcp = umcp_in(&empty_home());
    umcp.env("XDG_STATE_HOME", empty_home().join("shell-state"));
    // SIGINT reaches the shell at its prompt, where no command runs, as from `kill -INT`
    // (after `exec`, `$$` is umcp's own process).
    let line = format!(
        "(sleep 2; kill -INT $$) & exec umcp shell --stdio \"{}\"",
        fixtures_stdio().replace('"', "\\\"")
    );
    let out = on_a_terminal(&umcp, &line, &["", "", "call add a=1 b=2\r", "exit\r"]);
    let shown = stdout(&out);
    assert!(out.status.success(), "{}\n{shown}", out.status);
    assert!(shown.contains("\r\n3\r\n"), "{shown}");
    assert!(!shown.contains("stopping the servers"), "{shown}");
}

#[test]
fn on_a_terminal_ctrl_c_after_exit_stops_the_servers_and_exits_130() {
    let dir = empty_home().join("shell-close");
    std::fs::create_dir_all(&dir).unwrap();
    let sleeper = dir.join("sleeper");
    let _ = std::fs::remove_file(&sleeper);
    // Once the demo has seen its input end, the server's shell records its pid and becomes a
    // sleep that ignores SIGTERM: closing it takes both graces, then SIGKILL.
    let server = format!(
        r#"sh -c 'trap "" TERM; "$0" --server --fixtures; echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 60' {} '{}'"#,
        umcp_test_support::installed::demo_stdio().trim_end_matches(" --server"),
        sleeper.display(),
    );
    // SIGINT comes once the shell has ended and its server is being closed, as from `kill
    // -INT` (after `exec`, `$$` is umcp's own process).
    let line = format!(
        r#"(i=0; while [ ! -e '{}' ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; kill -INT $$) & exec umcp shell --stdio '{}'"#,
        sleeper.display(),
        server.replace('\'', r"'\''"),
    );
    let mut umcp = umcp_in(&empty_home());
    umcp.env("XDG_STATE_HOME", empty_home().join("shell-state"));
    let out = on_a_terminal(&umcp, &line, &["call add a=1 b=2\r", "exit\r"]);
    let shown = stdout(&out);
    assert_eq!(out.status.code(), Some(130), "{}\n{shown}", out.status);
    assert!(shown.contains("\r\n3\r\n"), "{shown}");
    assert!(shown.contains("stopping the servers"), "{shown}");
    // The close went on to its end: the sleep that ignored SIGTERM was killed.
    let pid = std::fs::read_to_string(&sleeper).unwrap();
    assert!(
        !crate::signals::running(pid.trim().parse().unwrap()),
        "{pid}"
    );
}

//! `umcp session` and `umcp --session NAME`: a background process keeps the servers between
//! commands, runs them with their output, exit codes, questions and Ctrl-C on the caller's
//! side, and ends when stopped, idle or left without servers. Each test has a runtime
//! directory of its own (`UMCP_RUNTIME_DIR`) and stops its sessions however it ends.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use umcp_test_support::installed::{empty_home, fixtures_stdio, stderr, stdout, umcp_in};
use umcp_test_support::python::system_python;

/// The `--stdio` command line of the stateful server (`count`, `pid`, tasks).
pub fn stateful() -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/stateful_server.py");
    format!("'{}' '{script}'", system_python())
}

/// The sessions of one test: its runtime directory, and the names to stop when it ends.
pub struct Sessions {
    dir: PathBuf,
    started: Vec<String>,
}

impl Sessions {
    /// A fresh runtime directory for `test`.
    pub fn new(test: &str) -> Sessions {
        let dir = empty_home().join(format!("rt-{test}"));
        let _ = std::fs::remove_dir_all(&dir);
        Sessions {
            dir,
            started: Vec::new(),
        }
    }

    /// The runtime directory.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// `umcp` with this test's runtime directory.
    pub fn umcp(&self) -> Command {
        let mut command = umcp_in(&empty_home());
        command.env("UMCP_RUNTIME_DIR", &self.dir);
        command
    }

    /// Runs `umcp ARGS` with this test's runtime directory.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.umcp().args(args).output().expect("run umcp")
    }

    /// `umcp session start NAME ARGS`, which must end with `code`. Unless `args` say
    /// otherwise, the session ends by itself after two idle minutes, should the test run
    /// be killed before it stops it.
    pub fn start(&mut self, name: &str, args: &[&str], code: i32) -> Output {
        self.started.push(name.to_owned());
        let idle: &[&str] = match args.contains(&"--idle") {
            true => &[],
            false => &["--idle", "120"],
        };
        let out = self.cli(&[&["session", "start", name][..], args, idle].concat());
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        out
    }

    /// `umcp --session NAME ARGS`, which must end with `code`.
    pub fn run(&self, name: &str, args: &[&str], code: i32) -> Output {
        let out = self.cli(&[&["--session", name][..], args].concat());
        crate::fake::ended(out, args, code)
    }

    /// The names `session list` shows.
    pub fn listed(&self) -> Vec<String> {
        let out = self.cli(&["--json", "session", "list"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = rows.as_array().unwrap().iter();
        rows.map(|r| r["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Waits up to ten seconds for `done`.
    pub fn wait_for(&self, what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "waited in vain for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Sessions {
    /// Stops every session the test started, passed or failed.
    fn drop(&mut self) {
        for name in &self.started {
            let _ = self.cli(&["session", "stop", name]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The process id a `pid` call answered.
fn pid_of(out: &Output) -> u32 {
    stdout(out).trim().parse().expect("a process id")
}

#[test]
fn a_session_keeps_its_server_and_its_state_between_commands() {
    let mut sessions = Sessions::new("counts");
    let server = stateful();
    let started = sessions.start("s", &["--stdio", &server], 0);
    assert_eq!(stdout(&started), "", "start prints nothing");
    assert_eq!(stdout(&sessions.run("s", &["call", "count"], 0)), "1\n");
    assert_eq!(stdout(&sessions.run("s", &["call", "count"], 0)), "2\n");
    let pid = pid_of(&sessions.run("s", &["call", "pid"], 0));
    assert_eq!(sessions.listed(), ["s"]);
    let list = stdout(&sessions.cli(&["session", "list"]));
    assert!(list.starts_with("s  pid "), "{list}");
    assert!(list.contains("(connected)"), "{list}");
    // Only the user can reach the directory and the socket.
    let mode = |path: PathBuf| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(sessions.dir.clone()), 0o700);
    assert_eq!(mode(sessions.dir.join("s.sock")), 0o600);
    // A second session of the name is refused while the first runs.
    let again = sessions.cli(&["session", "start", "s", "--stdio", &server]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("session `s` is already running"),
        "{}",
        stderr(&again)
    );
    assert_eq!(stdout(&sessions.run("s", &["call", "count"], 0)), "3\n");
    // Stopped: the session and its server end, its socket goes.
    let stop = sessions.cli(&["session", "stop", "s"]);
    assert!(stop.status.success(), "{}", stderr(&stop));
    sessions.wait_for("the server to end", || !crate::signals::running(pid));
    assert!(!sessions.dir.join("s.sock").exists());
    assert!(sessions.listed().is_empty());
    let gone = sessions.run("s", &["call", "count"], 3);
    assert!(
        stderr(&gone).contains("no session named `s`"),
        "{}",
        stderr(&gone)
    );
}

#[test]
fn commands_through_a_session_print_and_end_as_they_do_directly() {
    let mut sessions = Sessions::new("codes");
    sessions.start("demo", &["--stdio", &fixtures_stdio()], 0);
    assert_eq!(
        stdout(&sessions.run("demo", &["call", "add", "a=2", "b=3"], 0)),
        "5\n"
    );
    let json = sessions.run("demo", &["--json", "call", "add", "a=2", "b=3"], 0);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["structuredContent"]["sum"], 5.0, "{value}");
    let failed = sessions.run("demo", &["call", "fail", "message=boom"], 4);
    assert_eq!(stdout(&failed), "boom\n");
    let unknown = sessions.run("demo", &["call", "nope"], 2);
    assert!(
        stderr(&unknown).contains("no tool named `nope`"),
        "{}",
        stderr(&unknown)
    );
    let typo = sessions.run("demo", &["tols"], 2);
    assert!(
        stderr(&typo).contains("did you mean tools?"),
        "{}",
        stderr(&typo)
    );
    // The servers were chosen when the session started.
    let server = sessions.run("demo", &["--stdio", "x", "tools"], 2);
    assert!(
        stderr(&server).contains("--stdio is given to umcp session start"),
        "{}",
        stderr(&server)
    );
    // What the session writes is whole, however long.
    let huge = sessions.run("demo", &["call", "huge", "bytes=300000"], 0);
    assert_eq!(huge.stdout.len(), 300_001);
    let direct = umcp_test_support::installed::demo(&["call", "add", "a=2", "b=3"], 0);
    assert_eq!(stdout(&direct), "5\n");
}

#[test]
fn a_session_that_cannot_start_fails_as_the_command_would() {
    let mut sessions = Sessions::new("fails");
    let out = sessions.start("broken", &["--stdio", "/nonexistent/server"], 3);
    assert!(
        stderr(&out).contains("/nonexistent/server"),
        "{}",
        stderr(&out)
    );
    assert!(sessions.listed().is_empty());
    let out = sessions.start("bad name", &["--stdio", "x"], 2);
    assert!(
        stderr(&out).contains("a session's name"),
        "{}",
        stderr(&out)
    );
    let out = sessions.cli(&["session", "list", "--stdio", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let out = sessions.cli(&["--stdio", "x", "--idle", "3", "tools"]);
    assert!(
        stderr(&out).contains("--idle is for session start"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_stale_socket_is_cleaned_up_and_its_name_taken_again() {
    let mut sessions = Sessions::new("stale");
    std::fs::create_dir_all(&sessions.dir).unwrap();
    std::fs::set_permissions(&sessions.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A socket nobody listens on any more, as a crashed session leaves it.
    let socket = sessions.dir.join("old.sock");
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(sessions.listed().is_empty());
    assert!(!socket.exists(), "list removed it");
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    sessions.start("old", &["--stdio", &stateful()], 0);
    assert_eq!(stdout(&sessions.run("old", &["call", "count"], 0)), "1\n");
}

#[test]
fn a_session_ends_when_idle_or_when_its_servers_are_gone() {
    let mut sessions = Sessions::new("ends");
    sessions.start("idle", &["--stdio", &stateful(), "--idle", "1"], 0);
    let pid = pid_of(&sessions.run("idle", &["call", "pid"], 0));
    sessions.wait_for("the idle session to end", || sessions.listed().is_empty());
    sessions.wait_for("its server to end", || !crate::signals::running(pid));
    sessions.start("crash", &["--stdio", &fixtures_stdio()], 0);
    sessions.run("crash", &["call", "crash"], 3);
    sessions.wait_for("the session without servers to end", || {
        sessions.listed().is_empty()
    });
}

#[test]
fn ctrl_c_in_the_caller_cancels_the_call_in_the_session() {
    let mut sessions = Sessions::new("ctrl-c");
    sessions.start("demo", &["--stdio", &fixtures_stdio()], 0);
    let child = sessions
        .umcp()
        .args([
            "--session",
            "demo",
            "call",
            "slow",
            "steps=100",
            "delay_ms=100",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    // The server was told, and the session goes on.
    let cancelled = sessions.run("demo", &["call", "cancellations"], 0);
    assert_ne!(stdout(&cancelled), "{\"cancelled\":[]}\n");
    assert_eq!(
        stdout(&sessions.run("demo", &["call", "add", "a=1", "b=1"], 0)),
        "2\n"
    );
}

#[test]
fn a_watch_runs_beside_the_other_commands() {
    let mut sessions = Sessions::new("watch");
    sessions.start("demo", &["--stdio", &fixtures_stdio()], 0);
    let watch = sessions
        .umcp()
        .args(["--session", "demo", "watch", "--tools", "--for", "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    // Not kept waiting by the watch.
    sessions.run("demo", &["call", "list_changed", "what=tools"], 0);
    let out = watch.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "notifications/tools/list_changed\n");
}

#[test]
fn a_form_is_asked_on_the_callers_terminal() {
    let mut sessions = Sessions::new("form");
    sessions.start("demo", &["--stdio", &fixtures_stdio()], 0);
    let line = "exec umcp --session demo call ask_user 'question=Who?'";
    let out = crate::shell::on_a_terminal(&sessions.umcp(), line, &["y\nAda\n\n"]);
    let shown = stdout(&out);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("asks: Who?"), "{shown}");
    assert!(
        shown.contains(r#"accepted: {"answer":"Ada","sure":true}"#),
        "{shown}"
    );
}

#[test]
fn server_picks_one_server_of_a_session_for_a_command() {
    let mut sessions = Sessions::new("pick");
    let demo = umcp_test_support::demo::demo_binary();
    let config = serde_json::json!({
        "mcpServers": {
            "one": { "command": demo, "args": ["--server", "--fixtures"], "env": { "WHO": "first" } },
            "two": { "command": demo, "args": ["--server", "--fixtures"], "env": { "WHO": "second" } },
        }
    });
    std::fs::create_dir_all(empty_home()).unwrap();
    let path = empty_home().join("pick-servers.json");
    std::fs::write(&path, config.to_string()).unwrap();
    sessions.start("both", &["--config", &path.to_string_lossy()], 0);
    // Without --server a command sees both, and one that needs a single server says so.
    let tools = stdout(&sessions.run("both", &["tools"], 0));
    assert!(
        tools.contains("one__echo(") && tools.contains("two__echo("),
        "{tools}"
    );
    let read = sessions.run("both", &["read", "demo://text/readme"], 2);
    assert!(stderr(&read).contains("--server"), "{}", stderr(&read));
    // With it, the command is the named server's alone, with its own names.
    let who = sessions.run(
        "both",
        &["--server", "two", "call", "env", r#"{"name": "WHO"}"#],
        0,
    );
    assert_eq!(stdout(&who), "second\n");
    let tools = stdout(&sessions.run("both", &["--server", "one", "tools"], 0));
    assert!(
        tools.lines().any(|l| l.starts_with("echo(")) && !tools.contains("two__"),
        "{tools}"
    );
    let resources = stdout(&sessions.run("both", &["--server", "one", "resources"], 0));
    assert!(
        resources.contains("demo://text/readme") && !resources.contains("two: "),
        "{resources}"
    );
    let read = sessions.run(
        "both",
        &["--server", "one", "read", "demo://text/readme"],
        0,
    );
    assert_eq!(stdout(&read), "Hello from the umcp demo server.\n");
    let ping = stdout(&sessions.run("both", &["--server", "two", "ping"], 0));
    assert!(
        ping.starts_with("two  ok") && !ping.contains("one  "),
        "{ping}"
    );
    // A name the session does not hold is refused.
    let nope = sessions.run("both", &["--server", "three", "tools"], 2);
    assert!(
        stderr(&nope).contains("no server named three"),
        "{}",
        stderr(&nope)
    );
    // A watch follows the named server alone, its lines without a server's name; without
    // --server it follows both, each line naming its server.
    let watch = |picked: &[&str]| {
        let mut args = vec!["--session", "both"];
        args.extend_from_slice(picked);
        args.extend_from_slice(&["watch", "--tools", "--for", "4"]);
        sessions
            .umcp()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (one, both) = (watch(&["--server", "one"]), watch(&[]));
    std::thread::sleep(Duration::from_millis(1000));
    for server in ["one", "two"] {
        let args = ["--server", server, "call", "list_changed", "what=tools"];
        sessions.run("both", &args, 0);
    }
    let one = one.wait_with_output().unwrap();
    assert!(one.status.success(), "{}", stderr(&one));
    assert_eq!(stdout(&one), "notifications/tools/list_changed\n");
    let both = both.wait_with_output().unwrap();
    assert!(both.status.success(), "{}", stderr(&both));
    let text = stdout(&both);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "one: notifications/tools/list_changed",
            "two: notifications/tools/list_changed"
        ]
    );
}

/// A session killed with SIGKILL runs none of its own code, yet takes its servers' whole
/// process trees with it: a helper its server started in the background ends too.
#[test]
fn a_killed_session_takes_its_servers_process_trees_with_it() {
    let mut sessions = Sessions::new("killed");
    let work = empty_home().join("session-killed");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let pidfile = work.join("helper.pid");
    let script = work.join("server.sh");
    let body = format!(
        "sleep 3333 &\necho $! > '{}'\nexec {}\n",
        pidfile.display(),
        fixtures_stdio()
    );
    std::fs::write(&script, body).unwrap();
    sessions.start("k", &["--stdio", &format!("sh '{}'", script.display())], 0);
    sessions.wait_for("the helper to start", || pidfile.exists());
    let helper: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(crate::signals::running(helper));
    let listed = sessions.cli(&["--json", "session", "list"]);
    let rows: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let daemon = rows[0]["pid"]
        .as_u64()
        .expect("the session's pid")
        .to_string();
    assert!(Command::new("kill")
        .args(["-KILL", &daemon])
        .status()
        .unwrap()
        .success());
    sessions.wait_for("the server's helper to end", || {
        !crate::signals::running(helper)
    });
    let _ = std::fs::remove_dir_all(&work);
}

/// A session's process keeps its options off its command line, which anyone may read (`ps`)
/// for as long as the session lives: a literal secret given to `session start` is not in it.
#[test]
fn a_sessions_command_line_holds_no_secret() {
    let mut sessions = Sessions::new("argv");
    let secret = "sk-live-0123456789abcdef";
    let env = format!("API_KEY={secret}");
    sessions.start("a", &["--stdio", &fixtures_stdio(), "--env", &env], 0);
    assert_eq!(
        stdout(&sessions.run("a", &["call", "add", "a=1", "b=2"], 0)),
        "3\n"
    );
    let listed = sessions.cli(&["--json", "session", "list"]);
    let rows: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let pid = rows[0]["pid"].as_u64().expect("the session's pid");
    let out = Command::new("ps")
        .args(["-ww", "-o", "args=", "-p", &pid.to_string()])
        .output()
        .expect("ps");
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(line.contains("umcp"), "{line}");
    assert!(
        !line.contains(secret) && !line.contains("API_KEY"),
        "{line}"
    );
}

/// Without a runtime directory, sessions live in the user's cache directory: a name planted
/// in the shared temporary directory (by another user, in life; a file here) keeps no one
/// from starting sessions.
#[test]
fn without_a_runtime_directory_sessions_live_in_the_users_cache() {
    let home = empty_home().join("session-cache-home");
    let tmp = empty_home().join("session-cache-tmp");
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    // What another user could make first where the sessions once fell back to.
    let uid = Command::new("id").arg("-u").output().unwrap();
    let uid = String::from_utf8_lossy(&uid.stdout).trim().to_owned();
    std::fs::write(tmp.join(format!("umcp-{uid}")), "squatted").unwrap();
    let umcp = |args: &[&str]| {
        umcp_in(&home)
            .env_remove("UMCP_RUNTIME_DIR")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env("TMPDIR", &tmp)
            .args(args)
            .output()
            .unwrap()
    };
    let started = umcp(&[
        "session",
        "start",
        "c",
        "--stdio",
        &fixtures_stdio(),
        "--idle",
        "60",
    ]);
    assert_eq!(started.status.code(), Some(0), "{}", stderr(&started));
    let socket = home.join(".cache/umcp/sessions/c.sock");
    assert!(socket.exists(), "no socket at {}", socket.display());
    let called = umcp(&["--session", "c", "call", "add", "a=1", "b=1"]);
    assert_eq!(stdout(&called), "2\n", "{}", stderr(&called));
    let stopped = umcp(&["session", "stop", "c"]);
    assert_eq!(stopped.status.code(), Some(0), "{}", stderr(&stopped));
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&tmp);
}

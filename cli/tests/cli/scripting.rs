//! The command line for scripts and agents, against the reference server
//! `@modelcontextprotocol/server-everything` (installed pinned by the tests' peer helpers)
//! and the bundled demo server: a tool's shape at a glance, its arguments checked before
//! anything is sent, and output shaped for pipes.

use std::path::PathBuf;

use serde_json::Value;
use umcp_test_support::installed::{
    demo, demo_stdio, empty_home, fixtures_stdio, on_a_terminal, stderr, stdout,
};
use umcp_test_support::peers;

use crate::fake::run_with;

/// The `--stdio` command line of server-everything, installing it on first use.
pub fn everything() -> String {
    format!(
        "'{}' '{}' stdio",
        peers::node().display(),
        peers::server_everything().display()
    )
}

/// A fresh directory under the tests' home.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = empty_home().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn server_everything_tools_show_their_signatures_and_describe_shows_parameters() {
    if peers::skip_interop() {
        return;
    }
    let server = everything();
    let tools = stdout(&run_with(&server, &["tools"], 0));
    assert!(
        tools
            .lines()
            .any(|l| l.starts_with("get-sum(a: number, b: number)  ")),
        "{tools}"
    );
    assert!(
        tools
            .contains("get-structured-content(location: \"New York\"|\"Chicago\"|\"Los Angeles\")"),
        "{tools}"
    );
    assert!(
        tools.contains("get-resource-links(count?: number)"),
        "{tools}"
    );
    for args in [
        &["describe", "get-sum"][..],
        &["call", "get-sum", "--help"][..],
    ] {
        let described = stdout(&run_with(&server, args, 0));
        assert!(
            described.starts_with("get-sum(a: number, b: number)\n"),
            "{described}"
        );
        for parameter in [
            "a  number  required  First number",
            "b  number  required  Second number",
        ] {
            assert!(described.contains(parameter), "{args:?}: {described}");
        }
        assert!(described.contains("annotations: read-only"), "{described}");
    }
    let json: Value =
        serde_json::from_slice(&run_with(&server, &["--json", "describe", "get-sum"], 0).stdout)
            .unwrap();
    assert_eq!(json["signature"], "get-sum(a: number, b: number)");
    assert_eq!(json["tool"]["inputSchema"]["required"][1], "b");
    let unknown = run_with(&server, &["describe", "get-summ"], 2);
    assert!(
        stderr(&unknown).contains("did you mean `get-sum`?"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn arguments_are_checked_against_the_schema_before_the_tool_is_called() {
    if peers::skip_interop() {
        return;
    }
    let server = everything();
    let missing = run_with(&server, &["call", "get-sum", "a=1"], 2);
    assert!(
        stderr(&missing).contains("missing `b`: get-sum(a: number, b: number)"),
        "{}",
        stderr(&missing)
    );
    let typo = run_with(&server, &["call", "echo", "mesage=hi"], 2);
    assert!(
        stderr(&typo).contains("no parameter `mesage`; did you mean `message`?"),
        "{}",
        stderr(&typo)
    );
    let wrong = run_with(
        &server,
        &["call", "get-structured-content", "location=Paris"],
        2,
    );
    assert!(
        stderr(&wrong).contains("`location` must be one of"),
        "{}",
        stderr(&wrong)
    );
    // --no-check sends them as given, and the server refuses them itself.
    let sent = run_with(&server, &["--no-check", "call", "get-sum", "a=1"], 4);
    assert!(stdout(&sent).contains("Invalid"), "{}", stdout(&sent));
}

#[cfg(unix)]
#[test]
fn a_refused_call_sends_no_tools_call() {
    let mut sessions = crate::sessions::Sessions::new("checked-call");
    sessions.start("checked", &["--stdio", &fixtures_stdio()], 0);
    let seen = |sessions: &crate::sessions::Sessions| -> u64 {
        let out = sessions.run("checked", &["--structured", "call", "requests_seen"], 0);
        let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
        seen["tools/call"].as_u64().unwrap_or(0)
    };
    let before = seen(&sessions);
    sessions.run("checked", &["call", "add", "a=1"], 2);
    sessions.run("checked", &["call", "add", "a=1", "c=2"], 2);
    // Only the count's own call was sent since.
    assert_eq!(seen(&sessions), before + 1);
}

#[test]
fn raw_prints_the_text_alone_and_json_tells_every_failure() {
    assert_eq!(
        stdout(&demo(&["--raw", "call", "echo", "message=hi"], 0)),
        "hi\n"
    );
    // A tool's error: the envelope, with isError.
    let failed = demo(&["--json", "call", "fail", "message=no luck"], 4);
    let envelope: Value = serde_json::from_slice(&failed.stdout).unwrap();
    assert_eq!(envelope["isError"], true, "{envelope}");
    assert_eq!(envelope["content"][0]["text"], "no luck");
    assert!(envelope.get("structuredContent").is_some() && envelope.get("_meta").is_some());
    // umcp's own refusal, and a server that never started: JSON too, with the exit code.
    for (args, code) in [
        (&["--json", "call", "add", "a=1"][..], 2),
        (&["--json", "call", "nope"][..], 2),
    ] {
        let out = demo(args, code);
        let error: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&out)));
        assert_eq!(error["isError"], true);
        assert_eq!(error["error"]["code"], code);
        assert!(error["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
    let dead = crate::fake::ended(
        umcp_test_support::installed::cli(&["--stdio", "/nonexistent/server", "--json", "tools"]),
        &[],
        3,
    );
    let error: Value = serde_json::from_slice(&dead.stdout).unwrap();
    assert_eq!(error["error"]["code"], 3, "{error}");
    let structured = demo(&["--structured", "call", "add", "a=2", "b=3"], 0);
    let value: Value = serde_json::from_slice(&structured.stdout).unwrap();
    assert_eq!(value["sum"], 5, "{value}");
    demo(&["--raw", "--json", "tools"], 2);
}

#[test]
fn max_chars_prints_that_many_and_keeps_the_whole_in_a_file() {
    let out = demo(&["--max-chars", "100", "call", "huge", "bytes=5000"], 0);
    let shown = stdout(&out);
    let mut lines = shown.lines();
    let first = lines.next().unwrap();
    assert_eq!(first.chars().count(), 100, "{shown}");
    let note = lines.next().unwrap();
    let path = note
        .split("all of it is in ")
        .nth(1)
        .and_then(|p| p.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{note}"));
    let whole = std::fs::read_to_string(path).unwrap();
    assert_eq!(whole.chars().count(), 5000);
    assert!(whole.starts_with(first));
    std::fs::remove_file(path).unwrap();
    // A short result is printed whole, with no file.
    assert_eq!(
        stdout(&demo(
            &["--max-chars", "100", "call", "echo", "message=hi"],
            0
        )),
        "hi\n"
    );
}

#[test]
fn save_writes_an_image_to_a_file_that_is_a_png() {
    if peers::skip_interop() {
        return;
    }
    let dir = fresh_dir("saved");
    let dir_arg = dir.to_string_lossy().into_owned();
    let out = run_with(
        &everything(),
        &["--save", &dir_arg, "call", "get-tiny-image"],
        0,
    );
    let shown = stdout(&out);
    let path = dir.join("get-tiny-image-1.png");
    assert!(
        shown.contains(&format!("saved to {}", path.display())),
        "{shown}"
    );
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{:?}", &bytes[..8]);
    // Under --json, the block says where it went.
    let json = run_with(
        &everything(),
        &["--json", "--save", &dir_arg, "call", "get-tiny-image"],
        0,
    );
    let envelope: Value = serde_json::from_slice(&json.stdout).unwrap();
    let saved = envelope["content"][1]["savedTo"].as_str().unwrap();
    assert!(std::fs::read(saved).unwrap().starts_with(b"\x89PNG"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn listings_align_in_columns_on_a_terminal() {
    let stdio = demo_stdio();
    let shown = on_a_terminal(&["--stdio", &stdio, "tools"], "");
    let echo = shown.lines().find(|l| l.starts_with("echo(")).unwrap();
    let add = shown.lines().find(|l| l.starts_with("add(")).unwrap();
    assert_eq!(
        echo.find("Echoes").unwrap(),
        add.find("Adds").unwrap(),
        "{shown}"
    );
}

/// `umcp ARGS` against the demo server with `input` on its stdin, in `dir`.
fn demo_with_stdin(dir: &std::path::Path, args: &[&str], input: &str) -> std::process::Output {
    use std::io::Write;
    let stdio = fixtures_stdio();
    let mut child = umcp_test_support::installed::umcp_in(dir)
        .args([&["--stdio", stdio.as_str()][..], args].concat())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn arguments_come_from_stdin_and_files() {
    let home = empty_home();
    let from_stdin = demo_with_stdin(&home, &["--raw", "call", "echo", "-"], r#"{"message":"x"}"#);
    assert_eq!(stdout(&from_stdin), "x\n", "{}", stderr(&from_stdin));
    let dir = fresh_dir("inputs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("args.json"), r#"{"a": 2, "b": 40}"#).unwrap();
    std::fs::write(dir.join("note.txt"), "@not-a-file\nsecond line").unwrap();
    std::fs::write(dir.join("two.json"), "2").unwrap();
    let args = format!("@{}", dir.join("args.json").display());
    assert_eq!(stdout(&demo(&["--raw", "call", "add", &args], 0)), "42\n");
    let note = format!("message=@{}", dir.join("note.txt").display());
    assert_eq!(
        stdout(&demo(&["--raw", "call", "echo", &note], 0)),
        "@not-a-file\nsecond line\n"
    );
    let two = format!("b:=@{}", dir.join("two.json").display());
    assert_eq!(
        stdout(&demo(&["--raw", "call", "add", "a=1", &two], 0)),
        "3\n"
    );
    assert_eq!(
        stdout(&demo(&["--raw", "call", "echo", "message=\\@home"], 0)),
        "@home\n"
    );
    let missing = demo(&["call", "echo", "message=@/nonexistent/file"], 2);
    assert!(
        stderr(&missing).contains("cannot read /nonexistent/file"),
        "{}",
        stderr(&missing)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn through_a_session_stdin_and_files_are_the_callers() {
    let mut sessions = crate::sessions::Sessions::new("caller-inputs");
    sessions.start("inputs", &["--stdio", &fixtures_stdio()], 0);
    // A file named relative to the caller's directory, which is not the session's.
    let dir = fresh_dir("caller-dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("note.txt"), "the caller's").unwrap();
    let out = sessions
        .umcp()
        .current_dir(&dir)
        .args([
            "--session",
            "inputs",
            "--raw",
            "call",
            "echo",
            "message=@note.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "the caller's\n", "{}", stderr(&out));
    let mut child = sessions
        .umcp()
        .args(["--session", "inputs", "--raw", "call", "echo", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"message": "piped"}"#)
        .unwrap();
    assert_eq!(stdout(&child.wait_with_output().unwrap()), "piped\n");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn meta_goes_with_the_call_and_roots_are_offered() {
    let out = crate::fake::run(
        &[],
        &["--meta", "trace=abc", "--meta", "n:=2", "call", "meta"],
        0,
    );
    let meta: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(meta["trace"], "abc", "{meta}");
    assert_eq!(meta["n"], 2, "{meta}");
    let dir = fresh_dir("a root");
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.to_string_lossy().into_owned();
    let out = demo(
        &["--root", &dir_arg, "--structured", "call", "list_roots"],
        0,
    );
    let roots: Value = serde_json::from_slice(&out.stdout).unwrap();
    let uri = roots["roots"][0]["uri"].as_str().unwrap();
    assert!(
        uri.starts_with("file:///") && uri.contains("/a%20root-"),
        "{roots}"
    );
    assert_eq!(roots["roots"].as_array().unwrap().len(), 1);
    demo(&["--root", "/nonexistent/dir", "tools"], 2);
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_session_runs_callers_at_once_so_tasks_list_sees_a_running_task() {
    if peers::skip_interop() {
        return;
    }
    let mut sessions = crate::sessions::Sessions::new("tasks-at-once");
    sessions.start("ev", &["--stdio", &everything()], 0);
    // A call that waits for its task, in the background.
    let waiting = sessions
        .umcp()
        .args([
            "--session",
            "ev",
            "--timeout",
            "60",
            "call",
            "simulate-research-query",
            "topic=rust",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let listed = loop {
        let out = sessions.run("ev", &["tasks", "list"], 0);
        let listed = stdout(&out);
        if listed.contains("working") || std::time::Instant::now() > deadline {
            break listed;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(listed.contains("  working"), "{listed}");
    let done = waiting.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert!(
        stdout(&done).contains("Research Report: rust"),
        "{}",
        stdout(&done)
    );
    // call --task: the id at once, and the task found by it.
    let started = std::time::Instant::now();
    let out = sessions.run(
        "ev",
        &["call", "--task", "simulate-research-query", "topic=go"],
        0,
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let id = stdout(&out).trim().to_owned();
    assert!(!id.is_empty() && !id.contains(' '), "{id}");
    let got = stdout(&sessions.run("ev", &["tasks", "get", &id], 0));
    assert!(got.contains(&format!("taskId: {id}")), "{got}");
    let result = sessions.run("ev", &["--timeout", "60", "tasks", "wait", &id], 0);
    assert!(
        stdout(&result).contains("Research Report: go"),
        "{}",
        stdout(&result)
    );
    // A running task cancelled by another caller is cancelled for every caller.
    let out = sessions.run(
        "ev",
        &["call", "--task", "simulate-research-query", "topic=stop"],
        0,
    );
    let id = stdout(&out).trim().to_owned();
    let cancelled = stdout(&sessions.run("ev", &["tasks", "cancel", &id], 0));
    assert!(cancelled.contains("status: cancelled"), "{cancelled}");
    let got = stdout(&sessions.run("ev", &["tasks", "get", &id], 0));
    assert!(got.contains("status: cancelled"), "{got}");
}

#[cfg(unix)]
#[test]
fn two_slow_calls_through_a_session_overlap() {
    let mut sessions = crate::sessions::Sessions::new("overlap");
    sessions.start("slow", &["--stdio", &fixtures_stdio()], 0);
    let spawn = || {
        sessions
            .umcp()
            .args([
                "--session",
                "slow",
                "call",
                "slow",
                "delay_ms=500",
                "steps=4",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let started = std::time::Instant::now();
    let (first, second) = (spawn(), spawn());
    for child in [first, second] {
        assert!(child.wait_with_output().unwrap().status.success());
    }
    // Each takes two seconds; one after the other would take four.
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_millis(3500), "{took:?}");
}

#[test]
fn grep_finds_tools_across_the_servers_of_a_file() {
    if peers::skip_interop() {
        return;
    }
    let config = serde_json::json!({"mcpServers": {
        "ev": {"command": peers::node(), "args": [peers::server_everything(), "stdio"]},
        "demo": {"command": umcp_test_support::demo::demo_binary(), "args": ["--server"]},
    }});
    let path = fresh_dir("grep").with_extension("json");
    std::fs::write(&path, config.to_string()).unwrap();
    let file = path.to_string_lossy().into_owned();
    let out = crate::fake::ended(
        umcp_test_support::installed::cli(&["--config", &file, "grep", "sum"]),
        &[],
        0,
    );
    let found = stdout(&out);
    assert!(
        found
            .lines()
            .any(|l| l.starts_with("tool  ev__get-sum  Returns the sum")),
        "{found}"
    );
    assert!(
        found.lines().any(|l| l.starts_with("tool  demo__add  ")),
        "{found}"
    );
    let json =
        umcp_test_support::installed::cli(&["--config", &file, "--json", "grep", "SUM", "two"]);
    let rows: Value = serde_json::from_slice(&json.stdout).unwrap();
    let names: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["demo__add", "ev__get-sum"], "{rows}");
    assert_eq!(rows[1]["server"], "ev");
    // A tool the configuration excludes is not found.
    let filtered = serde_json::json!({"mcpServers": {
        "ev": {"command": peers::node(), "args": [peers::server_everything(), "stdio"],
               "excludeTools": ["get-sum"]},
    }});
    let filtered_path = fresh_dir("grep-filtered").with_extension("json");
    std::fs::write(&filtered_path, filtered.to_string()).unwrap();
    let filtered_file = filtered_path.to_string_lossy().into_owned();
    let out = umcp_test_support::installed::cli(&["--config", &filtered_file, "grep", "sum"]);
    assert!(!stdout(&out).contains("get-sum"), "{}", stdout(&out));
    let described =
        umcp_test_support::installed::cli(&["--config", &filtered_file, "describe", "get-sum"]);
    assert_eq!(described.status.code(), Some(2), "{}", stdout(&described));
    std::fs::remove_file(filtered_path).unwrap();
    let none = umcp_test_support::installed::cli(&["--config", &file, "grep", "no-such-thing"]);
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(stdout(&none), "");
    std::fs::remove_file(path).unwrap();
}

#[cfg(unix)]
#[test]
fn grep_and_describe_work_through_a_session() {
    let mut sessions = crate::sessions::Sessions::new("grep-session");
    sessions.start("found", &["--stdio", &fixtures_stdio()], 0);
    let found = stdout(&sessions.run("found", &["grep", "add"], 0));
    assert!(
        found
            .lines()
            .any(|l| l.starts_with("tool  ") && l.contains("add")),
        "{found}"
    );
    let described = stdout(&sessions.run("found", &["describe", "add"], 0));
    assert!(described.starts_with("add("), "{described}");
    sessions.run("found", &["grep", "no-such-thing"], 1);
}

#[test]
fn verbose_shows_umcps_own_log_on_stderr() {
    let quiet = demo(&["tools"], 0);
    assert!(!stderr(&quiet).contains("debug"), "{}", stderr(&quiet));
    let verbose = demo(&["-v", "tools"], 0);
    let log = stderr(&verbose);
    assert!(log.contains("handshake-era server"), "{log}");
    assert!(log.contains("era verdict"), "{log}");
    assert!(!log.contains(" trace "), "{log}");
    // The output is what it is without the log.
    assert_eq!(stdout(&verbose), stdout(&quiet));
    let wire = stderr(&demo(&["-vv", "tools"], 0));
    assert!(
        wire.contains(" trace ") && wire.contains(r#"> {"jsonrpc":"2.0""#),
        "{wire}"
    );
    let long = stderr(&demo(&["--verbose", "--verbose", "tools"], 0));
    assert!(long.contains(" trace "), "{long}");
}

#[cfg(unix)]
#[test]
fn completions_offer_the_running_sessions_and_the_files_servers() {
    let mut sessions = crate::sessions::Sessions::new("complete-names");
    sessions.start("alpha", &["--stdio", &demo_stdio()], 0);
    let names = stdout(&sessions.cli(&["--umcp-complete", "sessions"]));
    assert_eq!(names, "alpha\n");
    let config = serde_json::json!({"mcpServers": {"one": {"command": "x"}, "two": {"url": "https://h/mcp"}}});
    let path = fresh_dir("complete-config").with_extension("json");
    std::fs::write(&path, config.to_string()).unwrap();
    let file = path.to_string_lossy().into_owned();
    let servers = stdout(&sessions.cli(&[
        "--umcp-complete",
        "servers",
        "umcp",
        "--config",
        &file,
        "--server",
    ]));
    assert_eq!(servers, "one\ntwo\n");
    // The bash script asks umcp as it completes, with umcp on its PATH.
    let script = stdout(&sessions.cli(&["completions", "bash"]));
    let line = format!(
        "{script}\nCOMP_WORDS=(umcp --session a); COMP_CWORD=2; _umcp; echo \"${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(umcp --config {file} --server t); COMP_CWORD=4; _umcp; echo \"${{COMPREPLY[*]}}\""
    );
    let path_var = std::env::join_paths(
        std::iter::once(umcp_test_support::installed::install_dir()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    let bash = std::process::Command::new("bash")
        .args(["-c", &line])
        .env("PATH", path_var)
        .env("UMCP_RUNTIME_DIR", sessions.dir())
        .output()
        .unwrap();
    assert_eq!(stdout(&bash), "alpha\ntwo\n", "{}", stderr(&bash));
    std::fs::remove_file(path).unwrap();
}

#[test]
fn the_listed_frictions_are_gone() {
    use umcp_test_support::installed::cli;
    // `help` of no command is a usage error, with the closest one.
    let out = cli(&["help", "toolz"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did you mean tools?"),
        "{}",
        stderr(&out)
    );
    // Every value --protocol's help names is taken.
    let help = stdout(&cli(&["--help"]));
    let line = help.lines().find(|l| l.contains("--protocol")).unwrap();
    let dir = fresh_dir("frictions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json").to_string_lossy().into_owned();
    for value in ["auto", "legacy", "modern", "2026-07-28"] {
        assert!(line.contains(value), "{line}");
        let name = format!("s-{value}");
        let args = [
            "--config",
            &file,
            "servers",
            "add",
            &name,
            "--stdio",
            "x",
            "--protocol",
            value,
        ];
        crate::fake::ended(cli(&args), &args, 0);
    }
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["s-2026-07-28"]["protocol"],
        "2026-07-28"
    );
    cli_refuses(&["--protocol", "handshake", "tools"]);
    // --env NAME of a variable not set: written as a reference, refused for a server run now.
    let args = [
        "--config",
        &file,
        "servers",
        "add",
        "tok",
        "--stdio",
        "x",
        "--env",
        "UMCP_TEST_UNSET_VAR",
    ];
    crate::fake::ended(cli(&args), &args, 0);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["tok"]["env"]["UMCP_TEST_UNSET_VAR"],
        "${UMCP_TEST_UNSET_VAR}"
    );
    let out = cli_refuses(&["--stdio", "x", "--env", "UMCP_TEST_UNSET_VAR", "tools"]);
    assert!(stderr(&out).contains("is not set"), "{}", stderr(&out));
    // A server run by an interpreter is named after its script.
    let tools = crate::fake::run(&[], &["--json", "tools"], 0);
    let rows: Value = serde_json::from_slice(&tools.stdout).unwrap();
    assert_eq!(rows[0]["server"], "fake_server", "{rows}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `umcp ARGS`, which must be a usage error.
fn cli_refuses(args: &[&str]) -> std::process::Output {
    crate::fake::ended(umcp_test_support::installed::cli(args), args, 2)
}

#[test]
fn skills_ls_reads_the_typescript_sdks_directories() {
    if peers::skip_interop() {
        return;
    }
    let server = format!(
        "'{}' '{}'",
        peers::node().display(),
        peers::ts_v2_skills_server().display()
    );
    let uri = "skill://pdf-processing/SKILL.md";
    let shown = stdout(&run_with(&server, &["skills", "ls", uri, "templates"], 0));
    // Two pages of the server's (it serves two entries a page), matching the entry.
    assert_eq!(
        shown,
        "invoice.md  skill://pdf-processing/templates/invoice.md\n\
         purchase-order.md  skill://pdf-processing/templates/purchase-order.md\n\
         regional/  skill://pdf-processing/templates/regional\n",
    );
}
